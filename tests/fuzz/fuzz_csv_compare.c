/* `syncbench compare`, fuzzed: an input is two CSV files, the baseline and the current run,
 * split at the first 0xFF byte (a byte no syncbench CSV holds); without one the file is
 * compared with itself. Each is read by compare/csv_read.c, then both go through the whole
 * subcommand, sb_compare_main (cli/compare_args.c: reading, matching, verdicts, the table,
 * printed to /dev/null). Checked besides memory and undefined behaviour: every row read has a
 * scenario, variant and metric, finite figures and a line number not below the previous row's,
 * is found by its own key, and compares with itself as "same"; a file compared with itself has
 * no regression; a failure records one printable line. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "cli/compare_args.h"
#include "compare/csv_read.h"
#include "compare/match.h"
#include "fuzz_file.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* the comparison table goes to stdout; libFuzzer reports on stderr */
    return freopen("/dev/null", "w", stdout) ? 0 : -1;
}

static void check_rows(const char *path)
{
    static const sb_compare_opts o = {5.0, 3.0, 2.0};
    sb_strpool pool;
    sb_strpool_init(&pool);
    sb_cmp_table t;
    sb_error_clear();
    if (sb_csv_read(path, &pool, &t) != 0) {
        FUZZ_CHECK(sb_error_code() == SB_EXIT_USAGE);
        fuzz_check_message(sb_error_message());
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
    sb_cmp_table_free(&t);
    sb_strpool_free(&pool);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static fuzz_file base = FUZZ_FILE_INIT, cur = FUZZ_FILE_INIT;
    const uint8_t *split = memchr(data, 0xFF, size);
    size_t base_size = split ? (size_t)(split - data) : size;
    char bpath[32], cpath[32];
    snprintf(bpath, sizeof bpath, "%s", fuzz_file_set(&base, data, base_size));
    if (split)
        snprintf(cpath, sizeof cpath, "%s", fuzz_file_set(&cur, split + 1, size - base_size - 1));
    else
        snprintf(cpath, sizeof cpath, "%s", bpath);

    check_rows(bpath);
    if (split)
        check_rows(cpath);

    char cmd[] = "compare";
    char *argv[] = {cmd, bpath, cpath, NULL};
    sb_error_clear();
    int rc = sb_compare_main(3, argv);
    FUZZ_CHECK(rc == 0 || rc == SB_EXIT_FAIL || rc == SB_EXIT_USAGE);
    FUZZ_CHECK(rc == sb_error_code());
    if (rc)
        fuzz_check_message(sb_error_message());
    if (!split) /* a run compared with itself */
        FUZZ_CHECK(rc != SB_EXIT_FAIL);
    fflush(stdout);
    return 0;
}
