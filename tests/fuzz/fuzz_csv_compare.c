/* `syncbench compare`, fuzzed: an input is up to four files split at 0xFF bytes (a byte no
 * syncbench CSV holds): the baseline CSV, the current CSV, the baseline's samples and the
 * current run's samples (--samples files; the current's default to the baseline's). With one
 * part the file is compared with itself, without samples. Each CSV is read by
 * compare/csv_read.c, with its samples when given, then everything goes through the whole
 * subcommand, sb_cmd_compare (cmd/compare_cmd.c: reading, matching, the verdicts on samples or
 * on the summary, the table, printed to /dev/null). Checked besides memory and undefined
 * behaviour: every row read has a scenario, variant and metric, finite figures and a line number
 * not below the previous row's, is found by its own key, and compares with itself as "same";
 * samples are finite; a file compared with itself has no regression; a failure records one
 * printable line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cmd/compare_cmd.h"
#include "compare/csv_read.h"
#include "compare/match.h"
#include "compare/verdict.h"
#include "fuzz_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* the comparison table goes to stdout; libFuzzer reports on stderr */
    return freopen("/dev/null", "w", stdout) ? 0 : -1;
}

/* The one error a failed read leaves. */
static void check_failure(void)
{
    FUZZ_CHECK(sb_error_code() == SB_EXIT_USAGE);
    fuzz_check_message(sb_error_message());
}

/* Reads the CSV at path, and the samples at samples (NULL: none), checking what was read. */
static void check_rows(const char *path, const char *samples)
{
    static const sb_compare_opts o = {5.0, 3.0, 2.0};
    sb_strpool pool;
    sb_strpool_init(&pool);
    sb_cmp_table t;
    sb_error_clear();
    if (sb_csv_read(path, &pool, &t) != 0) {
        check_failure();
        FUZZ_CHECK(t.n == 0);
        sb_strpool_free(&pool);
        return;
    }
    FUZZ_CHECK(t.n >= 1);
    for (size_t i = 0; i < t.n; i++) {
        const sb_cmp_row *r = &t.rows[i];
        FUZZ_CHECK(r->scenario[0] && r->variant[0] && r->metric[0]);
        FUZZ_CHECK(r->better == SB_LOWER || r->better == SB_HIGHER);
        FUZZ_CHECK(isfinite(r->median) && isfinite(r->mean) && isfinite(r->stddev) &&
                   isfinite(r->cv));
        /* physical lines count LFs: a bare CR ends a record (libcsv) but not a line */
        FUZZ_CHECK(r->line >= 1 && (i == 0 || r->line >= t.rows[i - 1].line));
        FUZZ_CHECK(sb_row_index_find(&t.index, t.rows, r) == (long)i);
        double change, noise;
        FUZZ_CHECK(sb_compare_rows(r, r, &o, &change, &noise) == SB_SAME && change == 0);
    }
    if (samples) {
        sb_error_clear();
        if (sb_samples_read(samples, path, &pool, &t) != 0) {
            check_failure();
            for (size_t i = 0; i < t.n; i++)
                FUZZ_CHECK(!t.rows[i].samples && !t.rows[i].n_samples);
        } else {
            int any = 0;
            for (size_t i = 0; i < t.n; i++) {
                const sb_cmp_row *r = &t.rows[i];
                FUZZ_CHECK(r->n_samples >= 0 && (r->n_samples == 0) == (r->samples == NULL));
                for (int k = 0; k < r->n_samples; k++)
                    FUZZ_CHECK(isfinite(r->samples[k]));
                any |= r->n_samples > 0;
            }
            FUZZ_CHECK(any);
        }
    }
    sb_cmp_table_free(&t);
    sb_strpool_free(&pool);
}

enum { BASE, CUR, BASE_SAMPLES, CUR_SAMPLES, PARTS };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_file files[PARTS] = {FUZZ_FILE_INIT, FUZZ_FILE_INIT, FUZZ_FILE_INIT,
                                     FUZZ_FILE_INIT};
    char path[PARTS][32];
    int n = 0;
    for (const uint8_t *p = data, *end = data + size; n < PARTS;) {
        const uint8_t *split = n < PARTS - 1 ? memchr(p, 0xFF, (size_t)(end - p)) : NULL;
        const uint8_t *stop = split ? split : end;
        snprintf(path[n], sizeof path[n], "%s", fuzz_file_set(&files[n], p, (size_t)(stop - p)));
        n++;
        if (!split)
            break;
        p = split + 1;
    }
    if (n < 2) /* one part: the file against itself */
        snprintf(path[CUR], sizeof path[CUR], "%s", path[BASE]);
    if (n == 3) /* the same samples for both runs */
        snprintf(path[CUR_SAMPLES], sizeof path[CUR_SAMPLES], "%s", path[BASE_SAMPLES]);

    check_rows(path[BASE], n > 2 ? path[BASE_SAMPLES] : NULL);
    if (n > 1)
        check_rows(path[CUR], n > 2 ? path[CUR_SAMPLES] : NULL);

    char cmd[] = "compare", bs[] = "--base-samples", cs[] = "--current-samples";
    char *argv[] = {cmd, path[BASE],        path[CUR], bs, path[BASE_SAMPLES],
                    cs,  path[CUR_SAMPLES], NULL};
    int argc = n > 2 ? 7 : 3;
    argv[argc] = NULL;
    sb_error_clear();
    int rc = sb_cmd_compare(argc, argv);
    FUZZ_CHECK(rc == 0 || rc == SB_EXIT_FAIL || rc == SB_EXIT_USAGE);
    FUZZ_CHECK(rc == sb_error_code());
    if (rc)
        fuzz_check_message(sb_error_message());
    if (n < 2) /* a run compared with itself */
        FUZZ_CHECK(rc != SB_EXIT_FAIL);
    fflush(stdout);
    return 0;
}
