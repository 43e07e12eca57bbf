/* syncbench-floor [--only NAMES] [--reps N] [--device N] [--csv PATH] [--list] [--help]
 *
 * The plain floor the harness is held to (issue 36): each primitive the scenarios time, timed in
 * the simplest loop and exactly as the scenario's loop times it, with nothing of syncbench's
 * harness (floor_loops.c). Each loop warms up (3 repetitions and 0.1 s), then runs its
 * repetitions; a row's median, p10 and p90 are over them: over single iterations for a plain
 * loop, over the scenario's repetitions (each its mean over the scenario's iterations) for one as
 * the scenario. Prints one table on stdout; --csv writes the rows. Every input is checked before
 * the first CUDA call: bad input is one line on stderr and exit 2; no GPU, exit 3; a failed CUDA
 * call or a wrong value read back, exit 1. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "floor.h"

#define MAX_LOOPS 64
#define WARMUP_REPS 3
#define WARMUP_S 0.1
#define MAX_REPS 1000000
#define MAX_DEVICE 1023

typedef struct floor_opts {
    const char *only; /* comma-separated loop or row names; NULL: every loop */
    const char *csv;
    long long reps; /* 0: each loop's own */
    long long device;
    int list, help;
} floor_opts;

typedef struct floor_row {
    char name[96];
    const floor_loop *loop;
    int reps;
    double median, p10, p90;
} floor_row;

static const char usage[] =
    "usage: " FLOOR_PROG " [--only NAMES] [--reps N] [--device N] [--csv PATH] [--list]\n"
    "\n"
    "Each primitive syncbench's scenarios time, in the simplest loop (plain) and exactly as the\n"
    "scenario's loop times it (as the scenario), with nothing of the harness. make validate runs\n"
    "it beside the scenarios (docs/scenarios.md, \"The floor\").\n"
    "\n"
    "  --only NAMES  the loops named, or holding the rows named (comma-separated; see --list)\n"
    "  --reps N      measured repetitions of every loop (1 to 1000000; default: each loop's)\n"
    "  --device N    CUDA device ordinal (default 0)\n"
    "  --csv PATH    the rows as CSV: row,way,unit,iters,reps,median,p10,p90,definition\n"
    "  --list        every row, its way, unit, iterations, repetitions and definition; no GPU\n"
    "  -h, --help    this text\n";

/* One line on stderr, "syncbench-floor: ..."; returns `code`. */
static int fail_line(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail_line(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", FLOOR_PROG);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return code;
}

/* A whole decimal number in [lo, hi]. */
static int parse_count(const char *opt, const char *text, long long lo, long long hi,
                       long long *out)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (!*text || *end || errno || v < lo || v > hi)
        return fail_line(FLOOR_EXIT_USAGE, "%s '%s': not a whole number from %lld to %lld", opt,
                         text, lo, hi);
    *out = v;
    return 0;
}

static int parse_args(int argc, char **argv, floor_opts *o)
{
    static const struct option longs[] = {
        {"only", required_argument, NULL, 'o'},
        {"reps", required_argument, NULL, 'r'},
        {"device", required_argument, NULL, 'd'},
        {"csv", required_argument, NULL, 'c'},
        {"list", no_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c, rc = 0;
    opterr = 0;
    while (!rc && (c = getopt_long(argc, argv, ":h", longs, NULL)) != -1) {
        switch (c) {
        case 'o':
            o->only = optarg;
            break;
        case 'r':
            rc = parse_count("--reps", optarg, 1, MAX_REPS, &o->reps);
            break;
        case 'd':
            rc = parse_count("--device", optarg, 0, MAX_DEVICE, &o->device);
            break;
        case 'c':
            o->csv = optarg;
            break;
        case 'l':
            o->list = 1;
            break;
        case 'h':
            o->help = 1;
            break;
        case ':':
            return fail_line(FLOOR_EXIT_USAGE, "%s: needs a value", argv[optind - 1]);
        default: /* a long option as written (--help=x too), a short one by its letter */
            if (strncmp(argv[optind - 1], "--", 2) != 0 && optopt)
                return fail_line(FLOOR_EXIT_USAGE, "unknown option '-%c' (see --help)", optopt);
            return fail_line(FLOOR_EXIT_USAGE, "unknown option '%s' (see --help)",
                             argv[optind - 1]);
        }
    }
    if (!rc && optind < argc)
        return fail_line(FLOOR_EXIT_USAGE, "unexpected argument '%s' (see --help)", argv[optind]);
    return rc;
}

/* Whether `name` is the loop's name or one of its rows'. */
static int names_loop(const floor_loop *l, const char *name, size_t len)
{
    char row[96];
    if (strlen(l->name) == len && strncmp(l->name, name, len) == 0)
        return 1;
    for (int k = 0; k < floor_row_count(l); k++) {
        floor_row_name(l, k, row, sizeof row);
        if (strlen(row) == len && strncmp(row, name, len) == 0)
            return 1;
    }
    return 0;
}

/* selected[i]: whether loop i runs. Every name of --only must name a loop or a row. */
static int select_loops(const char *only, int *selected)
{
    for (int i = 0; floor_loops[i].name; i++) {
        if (i == MAX_LOOPS)
            return fail_line(FLOOR_EXIT_FAIL, "internal: more than %d loops", MAX_LOOPS);
        selected[i] = only == NULL;
    }
    if (!only)
        return 0;
    for (const char *p = only;; p++) {
        size_t len = strcspn(p, ",");
        int found = 0;
        for (int i = 0; floor_loops[i].name; i++)
            if (len && names_loop(&floor_loops[i], p, len))
                selected[i] = found = 1;
        if (!found)
            return fail_line(FLOOR_EXIT_USAGE, "--only: no loop or row named '%.*s' (see --list)",
                             (int)(len < 100 ? len : 100), p);
        p += len;
        if (!*p)
            return 0;
    }
}

/* The CSV's folder must exist and be writable, and the path must not be a folder. */
static int check_csv_path(const char *path)
{
    struct stat st;
    if (!*path)
        return fail_line(FLOOR_EXIT_USAGE, "--csv: an empty path");
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return fail_line(FLOOR_EXIT_USAGE, "--csv %s: is a folder", path);
    char *copy = strdup(path);
    if (!copy)
        return fail_line(FLOOR_EXIT_FAIL, "out of host memory");
    const char *dir = dirname(copy);
    int ok = stat(dir, &st) == 0 && S_ISDIR(st.st_mode) && access(dir, W_OK) == 0;
    int rc = ok ? 0 : fail_line(FLOOR_EXIT_USAGE, "--csv %s: no writable folder %s", path, dir);
    free(copy);
    return rc;
}

static const char *way_name(const floor_loop *l)
{
    return l->way == FLOOR_PLAIN ? "plain" : "scenario";
}

static void list_rows(const int *selected, const floor_opts *o)
{
    char row[96];
    for (int i = 0; floor_loops[i].name; i++) {
        const floor_loop *l = &floor_loops[i];
        for (int k = 0; selected[i] && k < floor_row_count(l); k++)
            printf("%-38s %-8s %-4s %5d %6lld  %s\n", floor_row_name(l, k, row, sizeof row),
                   way_name(l), l->unit, l->iters, o->reps ? o->reps : (long long)l->reps,
                   l->definition);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The p-th percentile of sorted x[0..n-1], interpolating linearly (as syncbench's stats). */
static double percentile(const double *x, int n, double p)
{
    double pos = p / 100.0 * (n - 1);
    int lo = (int)pos;
    if (lo >= n - 1)
        return x[n - 1];
    return x[lo] + (pos - lo) * (x[lo + 1] - x[lo]);
}

static void summarize(double *x, int n, floor_row *row)
{
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    row->reps = n;
    row->median = percentile(x, n, 50);
    row->p10 = percentile(x, n, 10);
    row->p90 = percentile(x, n, 90);
}

/* Warm-up, then `reps` repetitions (each paired with the reference's where the loop has one,
 * in alternating order: the reference first in even repetitions, as the engine pairs them);
 * samples[k][r] is metric k of repetition r. */
static int run_loop(floor_gpu *g, const floor_loop *l, int reps, double **samples)
{
    double dropped[FLOOR_MAX_METRICS], got[FLOOR_MAX_METRICS];
    const int paired = l->ref_mode >= 0;
    int rc = 0;
    double t0 = floor_now_us();
    for (int w = 0; w < WARMUP_REPS || floor_now_us() - t0 < WARMUP_S * 1e6; w++)
        if ((rc = l->rep(g, l->mode, l->iters, dropped)))
            return rc;
    for (int r = 0; r < reps; r++) {
        const int ref_first = paired && r % 2 == 0;
        if (ref_first && (rc = l->rep(g, l->ref_mode, l->iters, dropped)))
            return rc;
        if ((rc = l->rep(g, l->mode, l->iters, got)))
            return rc;
        if (paired && !ref_first && (rc = l->rep(g, l->ref_mode, l->iters, dropped)))
            return rc;
        for (int k = 0; k < floor_row_count(l); k++)
            samples[k][r] = got[k];
    }
    return 0;
}

/* Every selected loop, its rows into rows[]; *n_rows of them. */
static int measure_all(floor_gpu *g, const int *selected, long long reps_opt, floor_row *rows,
                       int *n_rows)
{
    int rc = 0;
    for (int i = 0; floor_loops[i].name && !rc; i++) {
        const floor_loop *l = &floor_loops[i];
        if (!selected[i])
            continue;
        const int reps = reps_opt ? (int)reps_opt : l->reps;
        double *samples[FLOOR_MAX_METRICS] = {NULL, NULL};
        for (int k = 0; k < floor_row_count(l) && !rc; k++)
            if (!(samples[k] = malloc(sizeof(double) * (size_t)reps)))
                rc = fail_line(FLOOR_EXIT_FAIL, "out of host memory");
        if (!rc)
            rc = run_loop(g, l, reps, samples);
        for (int k = 0; k < floor_row_count(l) && !rc; k++) {
            floor_row *row = &rows[(*n_rows)++];
            floor_row_name(l, k, row->name, sizeof row->name);
            row->loop = l;
            summarize(samples[k], reps, row);
        }
        free(samples[0]);
        free(samples[1]);
    }
    return rc;
}

static void print_table(const char *gpu, int device, const floor_row *rows, int n)
{
    printf("%s: %s (device %d); median, p10, p90 over the repetitions\n", FLOOR_PROG, gpu, device);
    printf("%-38s %-8s %-4s %5s %6s %10s %10s %10s\n", "row", "way", "unit", "iters", "reps",
           "median", "p10", "p90");
    for (int i = 0; i < n; i++)
        printf("%-38s %-8s %-4s %5d %6d %10.3f %10.3f %10.3f\n", rows[i].name,
               way_name(rows[i].loop), rows[i].loop->unit, rows[i].loop->iters, rows[i].reps,
               rows[i].median, rows[i].p10, rows[i].p90);
}

static int write_csv(const char *path, const floor_row *rows, int n)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return fail_line(FLOOR_EXIT_FAIL, "--csv %s: %s", path, strerror(errno));
    fprintf(f, "row,way,unit,iters,reps,median,p10,p90,definition\n");
    for (int i = 0; i < n; i++) {
        const floor_loop *l = rows[i].loop;
        fprintf(f, "%s,%s,%s,%d,%d,%.6g,%.6g,%.6g,\"", rows[i].name, way_name(l), l->unit, l->iters,
                rows[i].reps, rows[i].median, rows[i].p10, rows[i].p90);
        for (const char *c = l->definition; *c; c++)
            fprintf(f, *c == '"' ? "\"\"" : "%c", *c);
        fprintf(f, "\"\n");
    }
    if (fclose(f) != 0)
        return fail_line(FLOOR_EXIT_FAIL, "--csv %s: %s", path, strerror(errno));
    return 0;
}

int main(int argc, char **argv)
{
    floor_opts o = {0};
    int selected[MAX_LOOPS];
    int rc = parse_args(argc, argv, &o);
    if (rc)
        return rc;
    if (o.help) {
        fputs(usage, stdout);
        return 0;
    }
    if ((rc = select_loops(o.only, selected)) || (o.csv && (rc = check_csv_path(o.csv))))
        return rc;
    if (o.list) {
        list_rows(selected, &o);
        return 0;
    }
    /* nothing above touched CUDA: bad input costs no GPU time and exits 2 without a GPU */
    floor_gpu *g = NULL;
    char gpu[256] = "";
    floor_row rows[MAX_LOOPS * FLOOR_MAX_METRICS];
    int n_rows = 0;
    rc = floor_gpu_open(&g, (int)o.device, gpu, sizeof gpu);
    if (!rc)
        rc = measure_all(g, selected, o.reps, rows, &n_rows);
    if (!rc)
        rc = floor_gpu_check(g);
    floor_gpu_close(g);
    if (rc)
        return rc;
    print_table(gpu, (int)o.device, rows, n_rows);
    return o.csv ? write_csv(o.csv, rows, n_rows) : 0;
}
