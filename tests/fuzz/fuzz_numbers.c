/* The number parsers, fuzzed: sb_parse_ll, sb_parse_double and sb_parse_size on the input as a
 * string, with their round trips (what one formats, it parses back to the same value, also
 * sb_format_size of any byte count); the measurement options' number parser (base/optdef.c)
 * on every INT and NUMBER option; sb_param_parse_list on every parameter of every scenario,
 * with sb_param_format round trips; and the --set parser (the "set" entry of sb_run_optdefs),
 * one --set per input line, then the command line's plan from those --set options (the path
 * `syncbench --set ...` takes). Scenario registry and CUDA stubs as in fuzz_ini.c. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/textutil.h"
#include "fuzz_file.h"
#include "scenarios/registry.h"
#include "suite/plan.h"

static void numbers(const char *s)
{
    char buf[64];
    long long ll, back;
    if (sb_parse_ll(s, &ll) == SB_PARSE_OK) {
        snprintf(buf, sizeof buf, "%lld", ll);
        FUZZ_CHECK(sb_parse_ll(buf, &back) == SB_PARSE_OK && back == ll);
    }
    double d, dback;
    if (sb_parse_double(s, &d) == SB_PARSE_OK) {
        FUZZ_CHECK(isfinite(d) && s[strspn(s, "0123456789+-.eE")] == '\0');
        snprintf(buf, sizeof buf, "%.17g", d);
        FUZZ_CHECK(sb_parse_double(buf, &dback) == SB_PARSE_OK && dback == d);
    }
    long long size;
    if (sb_parse_size(s, &size) == SB_PARSE_OK) {
        FUZZ_CHECK(size >= 0);
        sb_format_size(size, buf, sizeof buf);
        FUZZ_CHECK(sb_parse_size(buf, &back) == SB_PARSE_OK && back == size);
    }
    char fig[64];
    if (sb_parse_double(s, &d) == SB_PARSE_OK)
        sb_format_figure(d, fig, sizeof fig);
}

/* Any byte count formats to a size that parses back to it. */
static void size_round_trip(long long v)
{
    char buf[64];
    long long back;
    sb_format_size(v, buf, sizeof buf);
    if (v >= 0)
        FUZZ_CHECK(sb_parse_size(buf, &back) == SB_PARSE_OK && back == v);
    else
        FUZZ_CHECK(sb_parse_size(buf, &back) == SB_PARSE_INVALID);
}

/* A refused option's message, as the command line reports it (cli/args.c). */
static void option_error(const sb_optdef *d, const char *text, const char *err)
{
    FUZZ_CHECK(err[0] != '\0');
    sb_error_clear();
    FUZZ_CHECK(sb_fail(SB_EXIT_USAGE, "--%s %s: %s", d->name, text, err) == SB_EXIT_USAGE);
    fuzz_check_message(sb_error_message());
}

static void run_options(const char *s)
{
    for (int i = 0; sb_run_optdefs[i].name; i++) {
        const sb_optdef *d = &sb_run_optdefs[i];
        if (d->type != SB_OPT_INT && d->type != SB_OPT_NUMBER)
            continue;
        sb_run_spec spec;
        sb_run_spec_init(&spec);
        char err[256] = "";
        if (sb_optdef_set(d, s, &spec, err, sizeof err) != 0) {
            option_error(d, s, err);
            continue;
        }
        double v;
        if (d->type == SB_OPT_INT) {
            long long x;
            memcpy(&x, (char *)&spec + d->offset, sizeof x);
            v = (double)x;
        } else {
            memcpy(&v, (char *)&spec + d->offset, sizeof v);
        }
        FUZZ_CHECK(v >= d->lo && v <= d->hi);
    }
}

static int n_choices(const sb_param_def *d)
{
    int n = 0;
    while (d->choices[n])
        n++;
    return n;
}

/* One parameter's value list: each value in range, none twice, and each one formatted back
 * parses to itself. */
static void param_list(const sb_param_def *d, const char *s)
{
    long long v[SB_MAX_SWEEP];
    int n = -1;
    char err[512] = "";
    if (sb_param_parse_list(d, s, v, &n, err, sizeof err) != 0) {
        FUZZ_CHECK(err[0] != '\0');
        return;
    }
    FUZZ_CHECK(n >= 1 && n <= SB_MAX_SWEEP);
    for (int i = 0; i < n; i++) {
        if (d->type == SB_PARAM_INT || d->type == SB_PARAM_SIZE)
            FUZZ_CHECK(v[i] >= d->min && v[i] <= d->max);
        else if (d->type == SB_PARAM_BOOL)
            FUZZ_CHECK(v[i] == 0 || v[i] == 1);
        else
            FUZZ_CHECK(v[i] >= 0 && v[i] < n_choices(d));
        for (int j = 0; j < i; j++)
            FUZZ_CHECK(v[j] != v[i]);
        char text[64];
        long long back = -1;
        sb_param_format(d, v[i], text, sizeof text);
        FUZZ_CHECK(sb_param_parse(d, text, &back, err, sizeof err) == 0 && back == v[i]);
    }
}

/* One --set per line, as `syncbench --set L1 --set L2 ...`, then the plan of that command line.
 * `s` is modified (split into lines) and must outlive the plan: the sets point into it. */
static void set_options(char *s)
{
    const sb_optdef *set = NULL;
    for (int i = 0; sb_run_optdefs[i].name; i++)
        if (!strcmp(sb_run_optdefs[i].name, "set"))
            set = &sb_run_optdefs[i];
    FUZZ_CHECK(set != NULL);
    sb_run_spec spec;
    sb_run_spec_init(&spec);
    for (char *line = s; line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        char err[256] = "";
        if (sb_optdef_set(set, line, &spec, err, sizeof err) != 0) {
            option_error(set, line, err);
            return; /* the command line stops at the first bad option */
        }
        line = nl ? nl + 1 : NULL;
    }
    FUZZ_CHECK(spec.n_sets >= 1 && spec.n_sets <= SB_MAX_SETS);
    for (int i = 0; i < spec.n_sets; i++) {
        FUZZ_CHECK(spec.sets[i].key[0] != '\0' && spec.sets[i].value[0] != '\0');
        for (int j = 0; j < i; j++)
            FUZZ_CHECK(strcmp(spec.sets[i].key, spec.sets[j].key) != 0);
    }
    sb_error_clear();
    sb_plan plan;
    int rc = sb_plan_build(&spec, 1, &plan);
    if (rc) {
        FUZZ_CHECK(rc == SB_EXIT_USAGE && sb_error_code() == rc);
        fuzz_check_message(sb_error_message());
        return;
    }
    FUZZ_CHECK(plan.n >= 1);
    sb_plan_free(&plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_string(data, size);
    numbers(s);
    long long v = 0;
    memcpy(&v, data, size < sizeof v ? size : sizeof v);
    size_round_trip(v);
    run_options(s);
    for (int i = 0; sb_scenarios[i]; i++)
        for (int p = 0; sb_scenarios[i]->params[p].name; p++)
            param_list(&sb_scenarios[i]->params[p], s);
    set_options(s);
    free(s);
    return 0;
}
