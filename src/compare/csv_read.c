#include "compare/csv_read.h"

#include <csv.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "base/textutil.h"
#include "compare/match.h"

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
    C_ITERS,
    C_COUNT
};
static const char *const csv_columns[C_COUNT] = {
    "scenario", "variant", "params", "metric", "better", "median", "mean", "stddev",
    "cv",       "unit",    "reps",   "gpu",    "run_id", "flags",  "iters"};

/* The samples file's columns (sinks/samples.c), the required ones first. */
enum { S_SCENARIO, S_VARIANT, S_PARAMS, S_METRIC, S_REP, S_VALUE, S_RUN_ID, S_COUNT };
static const char *const samples_columns[S_COUNT] = {"scenario", "variant", "params", "metric",
                                                     "rep",      "value",   "run_id"};

#define MAX_COLUMNS 16 /* at least C_COUNT and S_COUNT */

_Static_assert(C_COUNT <= MAX_COLUMNS && S_COUNT <= MAX_COLUMNS, "MAX_COLUMNS");

typedef struct reader reader;
typedef struct samples_state samples_state;

struct reader {
    const char *path;
    /* the kind of file: its columns (the first n_required required), what a file without
     * them is not ("syncbench CSV"), and what one data record does */
    const char *const *wanted;
    int n_wanted, n_required;
    const char *kind;
    void (*data_row)(reader *r);
    sb_strpool *pool;
    sb_cmp_table *out;
    samples_state *samples; /* sb_samples_read's */
    /* Physical lines, counted as libcsv is fed: the input goes to it one piece at a time, each
     * ending at a line break (CR or LF) or at the end of what was read, so every record ends at
     * the end of a piece. */
    long line;            /* the line being fed */
    long start;           /* the line the current record starts on */
    size_t rec_len;       /* bytes of the current record fed so far */
    int in_record;        /* a record has begun and not ended */
    int after_cr;         /* the piece before ended with a CR: an LF next ends no line */
    int ended;            /* a record ended in the piece just fed */
    long records;         /* records so far, the header included */
    int col[MAX_COLUMNS]; /* column of each wanted name, -1 if absent */
    int n_header;
    /* the current record's fields, NUL-terminated, one after another */
    char *buf;
    size_t buf_len;
    size_t off[SB_CSV_MAX_FIELDS], len[SB_CSV_MAX_FIELDS];
    int n_fields;
    int failed; /* the exit code of the first error, 0 if none */
    /* each column's last interned value: consecutive rows mostly repeat scenario, variant,
     * params, unit, which then costs a comparison instead of a hash lookup */
    const char *last[MAX_COLUMNS];
    size_t last_len[MAX_COLUMNS];
};

#define BUF_SIZE (SB_CSV_MAX_RECORD + SB_CSV_MAX_FIELDS + 1)

__attribute__((format(printf, 3, 4))) static int fail_at(reader *r, long line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (!r->failed)
        r->failed = sb_fail(SB_EXIT_USAGE, "%s:%ld: %s", r->path, line, msg);
    return r->failed;
}

static int out_of_memory(reader *r)
{
    if (!r->failed)
        r->failed = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", r->path);
    return r->failed;
}

/* Text from the file as an error message shows it: at most 40 bytes of it, escaped (one line,
 * nothing a terminal obeys), "..." when there is more. */
static const char *shown(const char *s, char *buf, size_t n)
{
    char piece[41]; /* 40 bytes of escaped text at most */
    size_t used = sb_escape(s, piece, sizeof piece < n - 3 ? sizeof piece : n - 3);
    snprintf(buf, n, "%s%s", piece, s[used] ? "..." : "");
    return buf;
}

/* A file name as a message shows it: control characters escaped, at most n - 1 bytes. */
static const char *shown_path(const char *s, char *buf, size_t n)
{
    sb_escape(s, buf, n);
    return buf;
}

static void on_field(void *s, size_t len, void *data)
{
    reader *r = data;
    if (r->failed)
        return;
    if (r->n_fields == SB_CSV_MAX_FIELDS) {
        fail_at(r, r->start, "more than %d fields", SB_CSV_MAX_FIELDS);
        return;
    }
    if (r->buf_len + len + 1 > BUF_SIZE) { /* cannot happen: records are at most 64 KiB */
        fail_at(r, r->start, "record longer than %d KiB", SB_CSV_MAX_RECORD / 1024);
        return;
    }
    if (len)
        memcpy(r->buf + r->buf_len, s, len);
    r->buf[r->buf_len + len] = '\0';
    r->off[r->n_fields] = r->buf_len;
    r->len[r->n_fields] = len;
    r->n_fields++;
    r->buf_len += len + 1;
}

static const char *field(const reader *r, int i)
{
    return r->buf + r->off[i];
}

/* libcsv's blank test, which finds none: libcsv would trim blanks around unquoted fields, so
 * that " 10.0" read as 10.0 (while --iters ' 5' is refused) and " copy" as copy. Untrimmed, a
 * value with blanks around it is refused by name (padded()), and feed() skips blank lines. */
static int no_blank(unsigned char c)
{
    (void)c;
    return 0;
}

/* Whether text of len bytes starts or ends with a space or a tab. */
static int blank_at_an_end(const char *text, size_t len)
{
    return len &&
           (text[0] == ' ' || text[0] == '\t' || text[len - 1] == ' ' || text[len - 1] == '\t');
}

/* A column name, or a value of a column compare reads, with a blank at either end is refused,
 * naming the line and the column. gpu is taken as it is: the driver's text, only compared for a
 * warning, and syncbench writes it as the driver gives it. */
static int padded(reader *r, int is_header)
{
    for (int i = 0; i < r->n_fields; i++) {
        if (!blank_at_an_end(field(r, i), r->len[i]))
            continue;
        int c = 0;
        while (!is_header && c < r->n_wanted && r->col[c] != i)
            c++;
        if (!is_header && (c == r->n_wanted || !strcmp(r->wanted[c], "gpu")))
            continue; /* a column compare does not read */
        char a[64];
        if (is_header)
            return fail_at(r, r->start, "column %d's name '%s' has a blank before or after it",
                           i + 1, shown(field(r, i), a, sizeof a));
        return fail_at(r, r->start, "%s '%s' has a blank before or after it (column %d)",
                       r->wanted[c], shown(field(r, i), a, sizeof a), i + 1);
    }
    return 0;
}

static void header(reader *r)
{
    if (padded(r, 1))
        return;
    for (int i = 0; i < r->n_fields; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(field(r, i), field(r, j))) {
                char a[64];
                fail_at(r, r->start, "duplicate column '%s' (columns %d and %d)",
                        shown(field(r, i), a, sizeof a), j + 1, i + 1);
                return;
            }
    for (int c = 0; c < r->n_wanted; c++) {
        r->col[c] = -1;
        for (int i = 0; i < r->n_fields; i++)
            if (!strcmp(field(r, i), r->wanted[c]))
                r->col[c] = i;
    }
    r->n_header = r->n_fields;
    for (int c = 0; c < r->n_required; c++)
        if (r->col[c] < 0) {
            r->failed = sb_fail(SB_EXIT_USAGE, "%s: missing column '%s' (not a %s?)", r->path,
                                r->wanted[c], r->kind);
            return;
        }
}

static const char *get(const reader *r, int c)
{
    return r->col[c] >= 0 ? field(r, r->col[c]) : "";
}

/* No time, rate or ratio of a run comes near it (1e15 us is 31 years): a larger number is a
 * damaged file, and the statistics on it would overflow (samples of 1e308 gave a NaN
 * interval, medians of 1e63 a cut figure). */
#define SB_CMP_MAX_VALUE 1e15

static int number(reader *r, int c, double *out)
{
    const char *text = get(r, c);
    char a[64];
    int rc = sb_parse_double(text, out);
    if (rc == SB_PARSE_OK && fabs(*out) >= SB_CMP_MAX_VALUE)
        rc = SB_PARSE_RANGE;
    if (rc == SB_PARSE_RANGE)
        return fail_at(r, r->start, "%s '%s' is out of range", r->wanted[c],
                       shown(text, a, sizeof a));
    if (rc != SB_PARSE_OK)
        return fail_at(r, r->start, "%s '%s' is not a number", r->wanted[c],
                       shown(text, a, sizeof a));
    return 0;
}

/* An integer column: a whole decimal number from lo to hi, or an error naming the line (no
 * detour through double: 1e10 and 1.5 are not integers). */
static int integer(reader *r, int c, long long lo, long long hi, long long *out)
{
    const char *text = get(r, c);
    if (sb_parse_ll(text, out) != SB_PARSE_OK || *out < lo || *out > hi) {
        char a[64];
        return fail_at(r, r->start, "%s '%s' is not an integer from %lld to %lld", r->wanted[c],
                       shown(text, a, sizeof a), lo, hi);
    }
    return 0;
}

static const char *intern(reader *r, int c)
{
    const char *s = get(r, c);
    size_t len = r->col[c] >= 0 ? r->len[r->col[c]] : 0;
    if (r->last[c] && r->last_len[c] == len && !memcmp(r->last[c], s, len))
        return r->last[c];
    const char *p = sb_strpool_intern(r->pool, s, len);
    r->last[c] = p;
    r->last_len[c] = len;
    return p;
}

static int not_negative(reader *r, int c, double v)
{
    char a[64];
    if (v < 0)
        return fail_at(r, r->start, "%s '%s' is negative", r->wanted[c],
                       shown(get(r, c), a, sizeof a));
    return 0;
}

/* A data record has as many fields as the header, none of those compare reads padded. 0, or the
 * error's code. */
static int record_fits_header(reader *r)
{
    if (r->n_fields != r->n_header)
        return fail_at(r, r->start, "expected %d fields, found %d", r->n_header, r->n_fields);
    return padded(r, 0);
}

/* The row's key is not empty, better is a direction, the statistics are numbers in range and
 * reps and iters (when there) whole numbers. 0, or the error's code. */
static int read_figures(reader *r, sb_cmp_row *row)
{
    if (!get(r, C_SCENARIO)[0] || !get(r, C_VARIANT)[0] || !get(r, C_METRIC)[0])
        return fail_at(r, r->start, "empty scenario, variant or metric");
    const char *better = get(r, C_BETTER);
    char a[64];
    if (!strcmp(better, "lower"))
        row->better = SB_LOWER;
    else if (!strcmp(better, "higher"))
        row->better = SB_HIGHER;
    else
        return fail_at(r, r->start, "better must be 'lower' or 'higher', not '%s'",
                       shown(better, a, sizeof a));
    if (number(r, C_MEDIAN, &row->median) || number(r, C_MEAN, &row->mean) ||
        number(r, C_STDDEV, &row->stddev) || not_negative(r, C_STDDEV, row->stddev) ||
        number(r, C_CV, &row->cv) || not_negative(r, C_CV, row->cv))
        return r->failed;
    if (fabs(row->mean) >= SB_CMP_MAX_VALUE || row->stddev >= SB_CMP_MAX_VALUE)
        return fail_at(r, r->start, "mean or stddev is out of range (magnitude %g or more)",
                       SB_CMP_MAX_VALUE);
    long long v;
    if (r->col[C_REPS] >= 0) {
        if (integer(r, C_REPS, 1, INT_MAX, &v))
            return r->failed;
        row->reps = (int)v;
    }
    if (r->col[C_ITERS] >= 0) {
        if (integer(r, C_ITERS, 1, INT_MAX, &v))
            return r->failed;
        row->iters = (int)v;
    }
    return 0;
}

/* The row's text, interned. 0, or the error's code (out of memory). */
static int read_text(reader *r, sb_cmp_row *row)
{
    row->scenario = intern(r, C_SCENARIO);
    row->variant = intern(r, C_VARIANT);
    row->params = intern(r, C_PARAMS);
    row->metric = intern(r, C_METRIC);
    row->unit = intern(r, C_UNIT);
    row->flags = intern(r, C_FLAGS);
    row->run_id = intern(r, C_RUN_ID);
    if (!row->scenario || !row->variant || !row->params || !row->metric || !row->unit ||
        !row->flags || !row->run_id)
        return out_of_memory(r);
    return 0;
}

/* Puts row at t->rows[t->n] (not counted yet) and in the index: a second row of one key is an
 * error naming the first's line. 0, or the error's code. */
static int place_row(reader *r, sb_cmp_table *t, const sb_cmp_row *row)
{
    if (t->n == SB_CSV_MAX_ROWS)
        return fail_at(r, r->start,
                       "more than %d rows, the most compare reads (it holds every "
                       "row in memory)",
                       SB_CSV_MAX_ROWS);
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        sb_cmp_row *rows = realloc(t->rows, sizeof *rows * cap);
        if (!rows)
            return out_of_memory(r);
        t->rows = rows;
        t->cap = cap;
    }
    t->rows[t->n] = *row;
    size_t dup;
    int rc = sb_row_index_add(&t->index, t->rows, t->n, &dup);
    if (rc < 0)
        return out_of_memory(r);
    if (rc > 0) {
        char s[64], v[64], p[64], m[64];
        return fail_at(r, r->start, "duplicate row for %s %s %s %s (first at line %ld)",
                       shown(row->scenario, s, sizeof s), shown(row->variant, v, sizeof v),
                       shown(row->params, p, sizeof p), shown(row->metric, m, sizeof m),
                       t->rows[dup].line);
    }
    return 0;
}

/* One file, one run: every row's gpu and run_id are the first row's (rows of two runs or GPUs
 * would be compared as one). The first row sets them. 0, or the error's code. */
static int same_run(reader *r, sb_cmp_table *t, const sb_cmp_row *row)
{
    const char *gpu = intern(r, C_GPU);
    if (!gpu)
        return out_of_memory(r);
    if (t->n == 0) {
        t->gpu = gpu;
        t->run_id = row->run_id;
    } else if (gpu != t->gpu || row->run_id != t->run_id) {
        char a[64], b[64];
        int is_gpu = gpu != t->gpu;
        return fail_at(r, r->start, "%s '%s' is not line %ld's '%s': one file holds one run",
                       is_gpu ? "gpu" : "run_id", shown(is_gpu ? gpu : row->run_id, a, sizeof a),
                       t->rows[0].line, shown(is_gpu ? t->gpu : t->run_id, b, sizeof b));
    }
    return 0;
}

/* A data record of a run's CSV: one row of r->out, or the first error in r->failed. */
static void csv_row(reader *r)
{
    sb_cmp_row row;
    memset(&row, 0, sizeof row);
    row.line = r->start;
    sb_cmp_table *t = r->out;
    if (record_fits_header(r) || read_figures(r, &row) || read_text(r, &row) ||
        place_row(r, t, &row) || same_run(r, t, &row))
        return;
    t->n++;
}

static void on_record(int c, void *data)
{
    reader *r = data;
    (void)c;
    r->ended = 1;
    if (!r->failed) {
        if (r->records++ == 0)
            header(r);
        else
            r->data_row(r);
    }
    r->n_fields = 0;
    r->buf_len = 0;
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r' && s[i] != '\n')
            return 0;
    return 1;
}

/* Feeds s[0..n) to libcsv one piece at a time, each ending at a CR or LF (or at n). */
static int feed(reader *r, struct csv_parser *p, const char *s, size_t n)
{
    while (n && !r->failed) {
        const char *nl = memchr(s, '\n', n);
        size_t len = nl ? (size_t)(nl - s) + 1 : n;
        const char *cr = memchr(s, '\r', len);
        if (cr)
            len = (size_t)(cr - s) + 1;
        if (memchr(s, '\0', len))
            return fail_at(r, r->line, "binary data (a NUL byte): not a CSV file");
        if (r->rec_len + len > SB_CSV_MAX_RECORD)
            return fail_at(r, r->start, "record longer than %d KiB (the limit)",
                           SB_CSV_MAX_RECORD / 1024);
        r->rec_len += len;
        /* blanks before a record are not fed: libcsv trims none (no_blank), and a blank line
         * is skipped, not a record of one blank field */
        size_t lead = 0;
        if (!r->in_record && blank(s, len))
            while (lead < len && (s[lead] == ' ' || s[lead] == '\t'))
                lead++;
        if (lead < len &&
            csv_parse(p, s + lead, len - lead, on_field, on_record, r) != len - lead) {
            if (!r->failed)
                fail_at(r, r->line, "malformed CSV: %s", csv_strerror(csv_error(p)));
            return r->failed;
        }
        char last = s[len - 1];
        int eol = last == '\n' || last == '\r';
        /* a line ends at a CR, an LF or a CRLF (whose LF is a piece of its own) */
        int ends_line = last == '\r' || (last == '\n' && !(len == 1 && r->after_cr));
        r->after_cr = last == '\r';
        if (r->ended || (!r->in_record && eol && blank(s, len))) {
            /* a record ended here, or a blank line that libcsv skips: the next record starts
             * after this piece */
            r->ended = 0;
            r->in_record = 0;
            r->rec_len = 0;
            r->start = r->line + ends_line;
        } else if (!r->in_record && blank(s, len)) {
            /* blanks, the line not ended yet: they count towards the record's length (an
             * endless line of spaces is an endless line) */
        } else {
            r->in_record = 1;
        }
        r->line += ends_line;
        s += len;
        n -= len;
    }
    return r->failed;
}

static int too_big(const char *path)
{
    return sb_fail(SB_EXIT_USAGE,
                   "%s: larger than %lld MiB, the most compare reads (it holds every row in "
                   "memory)",
                   path, SB_CSV_MAX_FILE >> 20);
}

/* Feeds the file at r->path through libcsv into r->data_row. 0, or the first error's code. */
static int read_file(reader *r)
{
    const char *path = r->path;
    FILE *f = fopen(path, "rb");
    if (!f)
        return sb_fail(SB_EXIT_USAGE, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > SB_CSV_MAX_FILE) {
        fclose(f);
        return too_big(path);
    }
    enum { CHUNK = 1 << 20 };
    r->line = 1;
    r->start = 1;
    char *chunk = malloc(CHUNK);
    r->buf = malloc(BUF_SIZE);
    struct csv_parser p;
    int have_parser = csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL) == 0;
    if (have_parser)
        csv_set_space_func(&p, no_blank);
    if (!chunk || !r->buf || !have_parser)
        out_of_memory(r);
    long long total = 0;
    size_t n;
    while (!r->failed && (n = fread(chunk, 1, CHUNK, f)) > 0) {
        total += (long long)n;
        if (total > SB_CSV_MAX_FILE)
            r->failed = too_big(path);
        else
            feed(r, &p, chunk, n);
    }
    if (!r->failed && ferror(f))
        r->failed = sb_fail(SB_EXIT_USAGE, "%s: read error: %s", path, strerror(errno));
    if (!r->failed && csv_fini(&p, on_field, on_record, r) != 0 && !r->failed)
        fail_at(r, r->start, "malformed CSV: a quoted field is never closed");
    if (have_parser)
        csv_free(&p);
    free(chunk);
    free(r->buf);
    r->buf = NULL;
    fclose(f);
    if (!r->failed && r->records == 0)
        r->failed = sb_fail(SB_EXIT_USAGE, "%s: empty file (not a %s?)", path, r->kind);
    return r->failed;
}

int sb_csv_read(const char *path, sb_strpool *pool, sb_cmp_table *out)
{
    memset(out, 0, sizeof *out);
    reader r = {.path = path,
                .wanted = csv_columns,
                .n_wanted = C_COUNT,
                .n_required = 9, /* scenario ... cv */
                .kind = "syncbench CSV",
                .data_row = csv_row,
                .pool = pool,
                .out = out};
    int rc = read_file(&r);
    if (!rc && out->n == 0)
        rc = sb_fail(SB_EXIT_USAGE, "%s: no rows after the header", path);
    if (rc)
        sb_cmp_table_free(out);
    return rc;
}

/* ---- samples files ---- */

struct samples_state {
    const char *csv_path; /* the table's file, for messages */
    double *values;       /* in file order */
    uint32_t *row_of;     /* the row of each value */
    size_t n, cap;
    int *count;    /* samples of each row */
    int *last_rep; /* the last rep read for each row */
    size_t *first; /* index of each row's first sample */
    int scattered; /* some row's samples are not one run of lines */
    long prev_row; /* the row of the sample before, -1 */
    long key_row;  /* the row of the last key looked up, and that key */
    const char *key[4];
};

static void sample_row(reader *r)
{
    samples_state *st = r->samples;
    sb_cmp_table *t = r->out;
    if (record_fits_header(r))
        return;
    const char *key[4] = {intern(r, S_SCENARIO), intern(r, S_VARIANT), intern(r, S_PARAMS),
                          intern(r, S_METRIC)};
    const char *run_id = intern(r, S_RUN_ID);
    if (!key[0] || !key[1] || !key[2] || !key[3] || !run_id) {
        out_of_memory(r);
        return;
    }
    if (st->key_row < 0 || memcmp(key, st->key, sizeof key)) {
        sb_cmp_row k;
        memset(&k, 0, sizeof k);
        k.scenario = key[0];
        k.variant = key[1];
        k.params = key[2];
        k.metric = key[3];
        long i = sb_row_index_find(&t->index, t->rows, &k);
        if (i < 0) {
            char s[64], v[64], p[64], m[64], c[256];
            fail_at(r, r->start, "sample of %s %s %s %s, which %s has no row for",
                    shown(key[0], s, sizeof s), shown(key[1], v, sizeof v),
                    shown(key[2], p, sizeof p), shown(key[3], m, sizeof m),
                    shown_path(st->csv_path, c, sizeof c));
            return;
        }
        st->key_row = i;
        memcpy(st->key, key, sizeof key);
    }
    size_t row = (size_t)st->key_row;
    const sb_cmp_row *cr = &t->rows[row];
    if (run_id[0] && cr->run_id[0] && run_id != cr->run_id) {
        char a[64], b[64], c[256];
        fail_at(r, r->start, "run_id '%s' is not %s:%ld's '%s' (samples of another run?)",
                shown(run_id, a, sizeof a), shown_path(st->csv_path, c, sizeof c), cr->line,
                shown(cr->run_id, b, sizeof b));
        return;
    }
    long long rep;
    if (integer(r, S_REP, 1, INT_MAX, &rep))
        return;
    if (rep <= st->last_rep[row]) {
        char s[64], v[64], p[64], m[64];
        fail_at(r, r->start, "rep %lld of %s %s %s %s after rep %d: a row's reps must increase",
                rep, shown(key[0], s, sizeof s), shown(key[1], v, sizeof v),
                shown(key[2], p, sizeof p), shown(key[3], m, sizeof m), st->last_rep[row]);
        return;
    }
    double value;
    if (sb_parse_double(get(r, S_VALUE), &value) != SB_PARSE_OK ||
        fabs(value) >= SB_CMP_MAX_VALUE) {
        char a[64];
        fail_at(r, r->start, "value '%s' is not a finite number below %g in magnitude",
                shown(get(r, S_VALUE), a, sizeof a), SB_CMP_MAX_VALUE);
        return;
    }
    if (st->n == st->cap) {
        size_t cap = st->cap ? st->cap * 2 : 4096;
        double *values = realloc(st->values, sizeof *values * cap);
        if (values)
            st->values = values;
        uint32_t *row_of = realloc(st->row_of, sizeof *row_of * cap);
        if (row_of)
            st->row_of = row_of;
        if (!values || !row_of) {
            out_of_memory(r);
            return;
        }
        st->cap = cap;
    }
    if (st->count[row] == 0)
        st->first[row] = st->n;
    else if (st->prev_row != (long)row)
        st->scattered = 1;
    st->values[st->n] = value;
    st->row_of[st->n] = (uint32_t)row;
    st->n++;
    st->count[row]++;
    st->last_rep[row] = (int)rep;
    st->prev_row = (long)row;
}

/* Points each row at its samples: into the values as read when every row's samples are one run
 * of lines (what syncbench writes), else into a copy grouped by row (a counting sort). */
static int attach(samples_state *st, sb_cmp_table *t)
{
    double *store = st->values;
    if (st->scattered) {
        store = malloc(sizeof *store * (st->n ? st->n : 1));
        if (!store)
            return -1;
        size_t at = 0;
        for (size_t i = 0; i < t->n; i++) {
            st->first[i] = at;
            at += (size_t)st->count[i];
        }
        size_t *next = st->first; /* reused as each row's write position, then restored */
        for (size_t k = 0; k < st->n; k++)
            store[next[st->row_of[k]]++] = st->values[k];
        for (size_t i = 0; i < t->n; i++)
            next[i] -= (size_t)st->count[i];
        free(st->values);
    }
    st->values = NULL;
    t->samples = store;
    t->n_samples = st->n;
    for (size_t i = 0; i < t->n; i++) {
        t->rows[i].samples = st->count[i] ? store + st->first[i] : NULL;
        t->rows[i].n_samples = st->count[i];
    }
    return 0;
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Whether a row's samples have its median: the CSV's median is the engine's, of the same
 * samples unrounded (engine/stats.c), and both files print at 9 significant digits
 * (sinks/csv.c, sinks/samples.c), so they agree within 1e-8 of the figures' magnitude. tmp holds
 * n doubles. */
static int median_agrees(const sb_cmp_row *row, double *tmp)
{
    int n = row->n_samples;
    memcpy(tmp, row->samples, sizeof *tmp * (size_t)n);
    qsort(tmp, (size_t)n, sizeof *tmp, by_value);
    double a = tmp[(n - 1) / 2], b = tmp[n / 2], m = (a + b) / 2;
    double scale = fmax(fmax(fabs(a), fabs(b)), fabs(row->median));
    return fabs(m - row->median) <= 1e-8 * scale;
}

/* Every row with samples has its samples' median (samples of another run beside a CSV, or a
 * CSV edited after its samples were written, are refused). 0, or the error's code. */
static int check_medians(const char *path, const char *csv_path, const sb_cmp_table *t)
{
    int most = 0;
    for (size_t i = 0; i < t->n; i++)
        most = t->rows[i].n_samples > most ? t->rows[i].n_samples : most;
    double *tmp = malloc(sizeof *tmp * (size_t)(most ? most : 1));
    if (!tmp)
        return sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    size_t bad = t->n;
    for (size_t i = 0; i < t->n && bad == t->n; i++)
        if (t->rows[i].n_samples && !median_agrees(&t->rows[i], tmp))
            bad = i;
    double m = bad < t->n
                   ? tmp[(t->rows[bad].n_samples - 1) / 2] / 2 + tmp[t->rows[bad].n_samples / 2] / 2
                   : 0;
    free(tmp);
    if (bad == t->n)
        return 0;
    const sb_cmp_row *r = &t->rows[bad];
    char s[64], v[64], p[64], k[64], c[256];
    return sb_fail(SB_EXIT_USAGE,
                   "%s: the samples of %s %s %s %s have median %.9g, but %s:%ld says %.9g "
                   "(samples of another run, or a CSV changed after them?)",
                   path, shown(r->scenario, s, sizeof s), shown(r->variant, v, sizeof v),
                   shown(r->params, p, sizeof p), shown(r->metric, k, sizeof k), m,
                   shown_path(csv_path, c, sizeof c), r->line, r->median);
}

void sb_samples_detach(sb_cmp_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        t->rows[i].samples = NULL;
        t->rows[i].n_samples = 0;
    }
    free(t->samples);
    t->samples = NULL;
    t->n_samples = 0;
}

int sb_samples_read(const char *path, const char *csv_path, sb_strpool *pool, sb_cmp_table *t)
{
    sb_samples_detach(t);
    samples_state st = {.csv_path = csv_path, .prev_row = -1, .key_row = -1};
    reader r = {.path = path,
                .wanted = samples_columns,
                .n_wanted = S_COUNT,
                .n_required = 6, /* scenario ... value */
                .kind = "syncbench samples file",
                .data_row = sample_row,
                .pool = pool,
                .out = t,
                .samples = &st};
    size_t n = t->n ? t->n : 1;
    st.count = calloc(n, sizeof *st.count);
    st.last_rep = calloc(n, sizeof *st.last_rep);
    st.first = calloc(n, sizeof *st.first);
    int rc;
    if (!st.count || !st.last_rep || !st.first)
        rc = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    else
        rc = read_file(&r);
    if (!rc && st.n == 0)
        rc = sb_fail(SB_EXIT_USAGE, "%s: no samples after the header", path);
    if (!rc && attach(&st, t) != 0)
        rc = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    if (!rc)
        rc = check_medians(path, csv_path, t);
    if (rc)
        sb_samples_detach(t);
    free(st.values);
    free(st.row_of);
    free(st.count);
    free(st.last_rep);
    free(st.first);
    return rc;
}

int sb_samples_path(const char *csv_path, char *out, size_t n)
{
    size_t len = strlen(csv_path);
    if (len >= 4 && !strcmp(csv_path + len - 4, ".csv"))
        len -= 4;
    else if (len >= 5 && !strcmp(csv_path + len - 5, ".json")) /* X.json: X.samples.csv too */
        len -= 5;
    int w = snprintf(out, n, "%.*s.samples.csv", (int)len, csv_path);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

void sb_cmp_table_free(sb_cmp_table *t)
{
    free(t->samples);
    free(t->rows);
    sb_row_index_free(&t->index);
    memset(t, 0, sizeof *t);
}
