#include "compare/csv_read.h"

#include <csv.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"

enum {
    C_SCENARIO,
    C_VARIANT,
    C_PARAMS,
    C_METRIC,
    C_BETTER,
    C_MEDIAN,
    C_MEAN,
    C_STDDEV,
    C_CV,
    C_UNIT,
    C_REPS,
    C_GPU,
    C_RUN_ID,
    C_FLAGS,
    C_COUNT
};
static const char *const wanted[C_COUNT] = {"scenario", "variant", "params", "metric", "better",
                                            "median",   "mean",    "stddev", "cv",     "unit",
                                            "reps",     "gpu",     "run_id", "flags"};
#define REQUIRED 9 /* the first nine above */
#define MAX_FIELDS 64

typedef struct {
    const char *path;
    sb_csv_data *out;
    int line;
    int col[C_COUNT]; /* column index of each wanted name, -1 if absent */
    int n_header;
    char *fields[MAX_FIELDS];
    int n_fields;
    int failed; /* the exit code of the first error, 0 if none */
} reader;

static void field(void *s, size_t len, void *data)
{
    reader *r = data;
    (void)len;
    if (r->n_fields < MAX_FIELDS)
        r->fields[r->n_fields] = strdup(s ? (const char *)s : "");
    r->n_fields++;
}

static int fail_at(reader *r, const char *fmt, const char *a, const char *b)
{
    char msg[512];
    snprintf(msg, sizeof msg, fmt, a, b);
    return r->failed = sb_fail(SB_EXIT_USAGE, "%s:%d: %s", r->path, r->line, msg);
}

static int number(reader *r, const char *name, const char *text, double *out)
{
    if (sb_parse_double(text, out) != SB_PARSE_OK)
        return fail_at(r, "%s '%s' is not a number", name, text);
    return 0;
}

static void header(reader *r)
{
    for (int c = 0; c < C_COUNT; c++) {
        r->col[c] = -1;
        for (int i = 0; i < r->n_fields && i < MAX_FIELDS; i++)
            if (!strcmp(r->fields[i], wanted[c]))
                r->col[c] = i;
    }
    r->n_header = r->n_fields;
    for (int c = 0; c < REQUIRED; c++)
        if (r->col[c] < 0) {
            r->failed = sb_fail(SB_EXIT_USAGE, "%s: missing column '%s' (not a syncbench CSV?)",
                                r->path, wanted[c]);
            return;
        }
}

static const char *get(reader *r, int c)
{
    return r->col[c] >= 0 ? r->fields[r->col[c]] : "";
}

static void data_row(reader *r)
{
    if (r->n_fields != r->n_header) {
        char a[16], b[16];
        snprintf(a, sizeof a, "%d", r->n_header);
        snprintf(b, sizeof b, "%d", r->n_fields);
        fail_at(r, "expected %s fields, found %s", a, b);
        return;
    }
    sb_row row;
    memset(&row, 0, sizeof row);
    snprintf(row.scenario, sizeof row.scenario, "%s", get(r, C_SCENARIO));
    snprintf(row.variant, sizeof row.variant, "%s", get(r, C_VARIANT));
    snprintf(row.params, sizeof row.params, "%s", get(r, C_PARAMS));
    snprintf(row.metric, sizeof row.metric, "%s", get(r, C_METRIC));
    snprintf(row.unit, sizeof row.unit, "%s", get(r, C_UNIT));
    snprintf(row.flags, sizeof row.flags, "%s", get(r, C_FLAGS));
    if (!row.scenario[0] || !row.variant[0] || !row.metric[0]) {
        fail_at(r, "empty %s%s", "scenario, variant or metric", "");
        return;
    }
    const char *better = get(r, C_BETTER);
    if (!strcmp(better, "lower"))
        row.better = SB_LOWER;
    else if (!strcmp(better, "higher"))
        row.better = SB_HIGHER;
    else {
        fail_at(r, "better must be 'lower' or 'higher', not '%s'%s", better, "");
        return;
    }
    if (number(r, "median", get(r, C_MEDIAN), &row.st.median) ||
        number(r, "mean", get(r, C_MEAN), &row.st.mean) ||
        number(r, "stddev", get(r, C_STDDEV), &row.st.stddev) ||
        number(r, "cv", get(r, C_CV), &row.st.cv))
        return;
    double reps = 0;
    if (r->col[C_REPS] >= 0 && number(r, "reps", get(r, C_REPS), &reps))
        return;
    row.reps = (int)reps;
    sb_csv_data *d = r->out;
    for (int i = 0; i < d->rows.n; i++) {
        const sb_row *o = &d->rows.rows[i];
        if (!strcmp(o->scenario, row.scenario) && !strcmp(o->variant, row.variant) &&
            !strcmp(o->params, row.params) && !strcmp(o->metric, row.metric)) {
            char first[16];
            snprintf(first, sizeof first, "%d", d->lines[i]);
            fail_at(r, "duplicate row for %s (first at line %s)", row.metric, first);
            return;
        }
    }
    if (d->rows.n == 0) {
        snprintf(d->gpu, sizeof d->gpu, "%s", get(r, C_GPU));
        snprintf(d->run_id, sizeof d->run_id, "%s", get(r, C_RUN_ID));
    }
    int *lines = realloc(d->lines, sizeof *lines * (size_t)(d->rows.n + 1));
    if (lines)
        d->lines = lines;
    if (!lines || sb_results_add(&d->rows, &row) != 0) {
        r->failed = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", r->path);
        return;
    }
    d->lines[d->rows.n - 1] = r->line;
}

static void record(int c, void *data)
{
    reader *r = data;
    (void)c;
    r->line++;
    if (!r->failed) {
        if (r->n_fields > MAX_FIELDS)
            fail_at(r, "more than %s fields%s", "64", "");
        else if (r->line == 1)
            header(r);
        else
            data_row(r);
    }
    for (int i = 0; i < r->n_fields && i < MAX_FIELDS; i++)
        free(r->fields[i]);
    r->n_fields = 0;
}

int sb_csv_read(const char *path, sb_csv_data *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return sb_fail(SB_EXIT_USAGE, "%s: cannot open: %s", path, strerror(errno));
    struct csv_parser p;
    csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL);
    reader r = {.path = path, .out = out};
    char buf[65536];
    size_t n;
    int bad = 0;
    while (!bad && !r.failed && (n = fread(buf, 1, sizeof buf, f)) > 0)
        bad = csv_parse(&p, buf, n, field, record, &r) != n;
    if (!bad && !r.failed)
        bad = csv_fini(&p, field, record, &r) != 0;
    if (bad && !r.failed) {
        r.line++; /* the record being read */
        r.failed = sb_fail(SB_EXIT_USAGE, "%s:%d: malformed CSV: %s", path, r.line,
                           csv_strerror(csv_error(&p)));
    }
    for (int i = 0; i < r.n_fields && i < MAX_FIELDS; i++)
        free(r.fields[i]);
    csv_free(&p);
    fclose(f);
    int rc = r.failed;
    if (!rc && r.line == 0)
        rc = sb_fail(SB_EXIT_USAGE, "%s: empty file (not a syncbench CSV?)", path);
    if (!rc && out->rows.n == 0)
        rc = sb_fail(SB_EXIT_USAGE, "%s: no rows after the header", path);
    if (rc)
        sb_csv_data_free(out);
    return rc;
}

void sb_csv_data_free(sb_csv_data *d)
{
    sb_results_free(&d->rows);
    free(d->lines);
    memset(d, 0, sizeof *d);
}
