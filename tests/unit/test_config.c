/* INI suites: what a valid file plans, how the command line overrides it, and every error
 * path, each with its file:line. */
#include "cmocka_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli_args.h"
#include "base/error.h"
#include "cmd/run.h"
#include "suite/plan.h"

static char path[64];

/* The plan of a suite file holding text[0..len) (NUL bytes included). */
static int plan_bytes(const char *text, size_t len, sb_plan *p, const char *const *args)
{
    strcpy(path, "/tmp/syncbench-cfg-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    const char *const lead[] = {"--config", path, NULL};
    sb_options o;
    int rc = parse_args(&o, lead, args);
    if (!rc)
        rc = sb_cli_plan(&o, p);
    unlink(path);
    return rc;
}

static int plan_file(const char *text, sb_plan *p, const char *const *args)
{
    return plan_bytes(text, strlen(text), p, args);
}

/* the error message without the temporary file's name */
static const char *msg(void)
{
    const char *m = sb_error_message();
    return strncmp(m, path, strlen(path)) ? m : m + strlen(path);
}

#define ARGS(...) ((const char *const[]){__VA_ARGS__, NULL})

static const char suite[] = "; a comment\n"
                            "[small]\n"
                            "scenario = small-gemm\n"
                            "variants = sync-stream\n"
                            "m = 256,512\n"
                            "iters = 50\n"
                            "max_time = 0.5\n"
                            "min_reps = 4\n"
                            "warmup_time = 0\n"
                            "\n"
                            "[copy]\n"
                            "bytes = 64MiB\n"
                            "variants = h2d-pinned,d2h-pinned\n"
                            "\n"
                            "[readback]\n";

static void valid_suite(void **state)
{
    (void)state;
    sb_plan p;
    assert_int_equal(plan_file(suite, &p, NULL), 0);
    assert_int_equal(p.n, 2 + 1 + 1);
    const sb_plan_entry *e = &p.entries[0];
    assert_string_equal(e->sc->name, "small-gemm");
    assert_int_equal(e->values[0], 256);
    assert_int_equal(p.entries[1].values[0], 512);
    assert_int_equal(e->n_variants, 2); /* sync-stream and its reference */
    assert_int_equal(e->m.iters, 50);
    assert_int_equal(e->m.min_reps, 4);
    assert_float_equal(e->m.max_time_s, 0.5, 0);
    assert_float_equal(e->m.warmup_s, 0, 0);
    assert_int_equal(e->m.warmup, 3); /* default */
    assert_string_equal(p.entries[2].sc->name, "copy");
    assert_int_equal(p.entries[2].values[0], 64 << 20);
    assert_int_equal(p.entries[2].n_variants, 2);
    assert_int_equal(p.entries[2].m.iters, 4);              /* copy's own default for 64 MiB */
    assert_string_equal(p.entries[3].sc->name, "readback"); /* empty section: defaults */
    assert_int_equal(p.entries[3].n_variants, 6);
    sb_plan_free(&p);
}

static void command_line_overrides(void **state)
{
    (void)state;
    sb_plan p;
    assert_int_equal(
        plan_file(suite, &p, ARGS("--iters", "7", "--set", "m=1024", "--max-time", "3")), 0);
    assert_int_equal(p.n, 1 + 1 + 1);
    assert_int_equal(p.entries[0].values[0], 1024);
    for (int i = 0; i < p.n; i++) {
        assert_int_equal(p.entries[i].m.iters, 7);
        assert_float_equal(p.entries[i].m.max_time_s, 3, 0);
    }
    assert_int_equal(p.entries[0].m.min_reps, 4); /* not given: the file's */
    sb_plan_free(&p);

    /* --scenario keeps those runs; --variant keeps the runs that have one of them */
    assert_int_equal(plan_file(suite, &p, ARGS("--scenario", "copy,readback")), 0);
    assert_int_equal(p.n, 2);
    sb_plan_free(&p);
    assert_int_equal(plan_file(suite, &p, ARGS("--variant", "d2h-pinned,idle-pinned")), 0);
    assert_int_equal(p.n, 2);
    assert_int_equal(p.entries[0].n_variants, 1);
    assert_string_equal(p.entries[1].sc->name, "readback");
    sb_plan_free(&p);
}

static void expect(const char *text, const char *const *args, const char *want)
{
    sb_plan p;
    assert_int_equal(plan_file(text, &p, args), SB_EXIT_USAGE);
    if (strcmp(msg(), want))
        fail_msg("got '%s'\nwant '%s'", msg(), want);
}

static void errors_name_file_and_line(void **state)
{
    (void)state;
    expect("[small-gemm]\niter = 5\n", NULL,
           ":2: unknown key 'iter' in [small-gemm]; did you mean 'iters'?");
    expect("[copy]\nbyts = 5\n", NULL, ":2: unknown key 'byts' in [copy]; did you mean 'bytes'?");
    expect("[small-gemm]\nfrobnicate = 5\n", NULL,
           ":2: unknown key 'frobnicate' in [small-gemm] (keys: scenario, variants, iters, ... "
           "and small-gemm's parameters, see --list)");
    expect("iters = 3\n[small-gemm]\n", NULL,
           ":1: key 'iters' outside a section; runs start with [name] (only samples = PATH "
           "stands before them, once)");
    expect("samples = a.csv\nsamples = b.csv\n[small-gemm]\n", NULL,
           ":2: key 'samples' outside a section; runs start with [name] (only samples = PATH "
           "stands before them, once)");
    expect("[a]\nscenario = copy\n\n[a]\nscenario = copy\n", NULL,
           ":4: duplicate section [a] (first at line 1)");
    expect("[small-gemm]\niters = 5\niters = 6\n", NULL,
           ":3: key 'iters' given twice in [small-gemm] (first at line 2)");
    expect("[x]\nscenario = smal-gemm\n", NULL,
           ":2: [x] unknown scenario 'smal-gemm'; did you mean 'small-gemm'?");
    expect("[warp]\niters = 1\n", NULL,
           ":1: [warp] unknown scenario 'warp' (see --list) (name the scenario: scenario = NAME)");
    expect("[small-gemm]\niters = abc\n", NULL,
           ":2: [small-gemm] iters = abc: not a number (expected an integer from 1 to 100000000)");
    expect("[small-gemm]\nmax_time = 0\n", NULL,
           ":2: [small-gemm] max_time = 0: out of range (expected a number from 0.001 to 3600)");
    expect("[small-gemm]\nmax_time = 1e-300\n", NULL,
           ":2: [small-gemm] max_time = 1e-300: out of range (expected a number from 0.001 to "
           "3600)");
    expect("[small-gemm]\n\nm = 0\n", NULL, ":3: [small-gemm] m=0: out of range (1 to 262144)");
    expect("[small-gemm]\nvariants = sync-devise\n", NULL,
           ":2: [small-gemm] unknown variant 'sync-devise'; did you mean 'sync-device'?");
    expect("[small-gemm]\nthis is not ini\n", NULL,
           ":2: syntax error: expected [name], key = value or a ; comment");
    expect("[copy]\nbytes = 4097\n", NULL,
           ":1: [copy] copy bytes=4097: bytes=4097 is not a multiple of 4");
    expect("[small-gemm]\nmin_reps = 20\nmax_reps = 10\n", NULL,
           ":1: [small-gemm] min_reps 20 is above max_reps 10");
    expect("; only a comment\n", NULL, ": no runs (sections) in the file");
    /* the command line's values over the file's are checked together */
    expect("[small-gemm]\nmin_reps = 20\n", ARGS("--max-reps", "10"),
           ":1: [small-gemm] min_reps 20 is above max_reps 10");
    /* the same measurement twice, in two sections */
    expect("[a]\nscenario = copy\nbytes = 4KiB\n[b]\nscenario = copy\nbytes = 4096,8KiB\n", NULL,
           ":4: [b] copy/h2d-pageable bytes=4KiB is planned already by [a] (line 1)");
}

static void suite_samples_path(void **state)
{
    (void)state;
    strcpy(path, "/tmp/syncbench-cfg-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("samples = out/{gpu}.samples.csv\n[small-gemm]\n", f);
    fclose(f);
    sb_options o;
    const char *const lead[] = {"--config", path, NULL};
    assert_int_equal(parse_args(&o, lead, NULL), 0);
    sb_plan p;
    char samples[256] = "x";
    assert_int_equal(sb_cli_plan_outputs(&o, &p, samples, sizeof samples), 0);
    assert_string_equal(samples, "out/{gpu}.samples.csv");
    sb_plan_free(&p);
    unlink(path);
}

static const char suite_name_chars[] = "abcdefghijklmnopqrstuvwxyz0123456789-abcdefghijklmnop";

static void long_lines_and_bom(void **state)
{
    (void)state;
    /* a line inih cannot hold is refused, never split: the rest of a long comment must not
     * set a parameter */
    char text[1024];
    snprintf(text, sizeof text, "[small-gemm]\n; %0300d m = 1024\n", 0);
    expect(text, NULL, ":2: line longer than 198 bytes");
    /* nor does a NUL byte make a long line pass for a short one (found by tests/fuzz) */
    int n = snprintf(text, sizeof text, "[small-gemm]\n; %0197d", 0);
    text[n - 190] = '\0';
    n += snprintf(text + n, sizeof text - (size_t)n, "m = 1024\n");
    sb_plan p;
    assert_int_equal(plan_bytes(text, (size_t)n, &p, NULL), SB_EXIT_USAGE);
    assert_string_equal(msg(), ":2: NUL byte in the line (not a text file?)");
    /* section names as long as inih keeps them, no longer */
    snprintf(text, sizeof text, "[%.49s]\nscenario = copy\n", suite_name_chars);
    assert_int_equal(plan_file(text, &p, NULL), 0);
    sb_plan_free(&p);
    snprintf(text, sizeof text, "[%.50s]\nscenario = copy\n", suite_name_chars);
    expect(text, NULL,
           ":1: section name [abcdefghijklmnopqrst...] is too long (49 characters at most)");
    assert_int_equal(plan_file("\xEF\xBB\xBF[small-gemm]\nm = 256\n", &p, NULL), 0);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.entries[0].values[0], 256);
    sb_plan_free(&p);
    assert_int_equal(
        plan_file("[small-gemm]\n# a comment\n  ; another\nm = 256 ; inline\n", &p, NULL), 0);
    assert_int_equal(p.entries[0].values[0], 256);
    sb_plan_free(&p);
}

/* issue 19 item 8: headers without ']' or a name, CRLF at the length limit, indented lines */
static void headers_crlf_and_indentation(void **state)
{
    (void)state;
    expect("[small-gemm\nm = 256\n", NULL, ":1: section header without ']'");
    expect("[]\nm = 256\n", NULL, ":1: empty section name []");
    expect("[small-gemm]\nm = 256\n[ ]\n", NULL, ":3: empty section name []");
    /* 198 bytes of text end in CRLF as well as in LF */
    char text[1024];
    int pad = 198 - (int)strlen("m = 256 ; ");
    snprintf(text, sizeof text, "[small-gemm]\r\nm = 256 ; %0*d\r\n", pad, 0);
    sb_plan p;
    assert_int_equal(plan_file(text, &p, NULL), 0);
    assert_int_equal(p.entries[0].values[0], 256);
    sb_plan_free(&p);
    snprintf(text, sizeof text, "[small-gemm]\r\nm = 256 ; %0*d\r\n", pad + 1, 0);
    expect(text, NULL, ":2: line longer than 198 bytes");
    /* an indented line is a line of its own, with spaces or a tab: never glued to the value
     * above it (inih's continuation lines) */
    assert_int_equal(plan_file("[small-gemm]\nm = 256\n\tn = 128\n  k = 64\n", &p, NULL), 0);
    assert_int_equal(p.n, 1);
    assert_int_equal(p.entries[0].values[0], 256);
    assert_int_equal(p.entries[0].values[1], 128);
    assert_int_equal(p.entries[0].values[2], 64);
    sb_plan_free(&p);
    expect("[small-gemm]\nm = 256\n\t512\n", NULL,
           ":3: syntax error: expected [name], key = value or a ; comment");
}

static void a_folder_as_config(void **state)
{
    (void)state;
    sb_options o;
    sb_options_defaults(&o);
    o.config = "/tmp";
    sb_plan p;
    sb_error_clear();
    assert_int_equal(sb_cli_plan(&o, &p), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(), "--config /tmp: is a directory");
}

static void unmatched_names(void **state)
{
    (void)state;
    sb_plan p;
    assert_int_equal(plan_file(suite, &p, ARGS("--variant", "serial-pinned")), SB_EXIT_USAGE);
    assert_non_null(strstr(sb_error_message(), "--variant serial-pinned: no run in"));
    assert_int_equal(plan_file(suite, &p, ARGS("--set", "pending_uss=5")), SB_EXIT_USAGE);
    assert_non_null(strstr(sb_error_message(), "--set pending_uss: no run in"));
    /* a --set key only runs left out by --scenario have is an error, not ignored */
    assert_int_equal(plan_file(suite, &p, ARGS("--scenario", "copy", "--set", "m=0")),
                     SB_EXIT_USAGE);
    assert_non_null(
        strstr(sb_error_message(), "--set m: no run in")); /* and names --scenario as the reason */
    assert_non_null(strstr(sb_error_message(), "(after --scenario/--variant)"));
    assert_int_equal(plan_file(suite, &p, ARGS("--scenario", "double-buffer")), SB_EXIT_USAGE);
    assert_non_null(strstr(sb_error_message(), "no run left after --scenario/--variant"));
    assert_int_equal(plan_file(suite, &p, ARGS("--scenario", "smal-gemm")), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(),
                        "unknown scenario 'smal-gemm'; did you mean 'small-gemm'?");
}

static void missing_file(void **state)
{
    (void)state;
    sb_options o;
    sb_options_defaults(&o);
    o.config = "/nonexistent/suite.ini";
    sb_plan p;
    sb_error_clear();
    assert_int_equal(sb_cli_plan(&o, &p), SB_EXIT_USAGE);
    assert_string_equal(sb_error_message(),
                        "--config /nonexistent/suite.ini: cannot open: No such file or directory");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(valid_suite),
        cmocka_unit_test(command_line_overrides),
        cmocka_unit_test(errors_name_file_and_line),
        cmocka_unit_test(unmatched_names),
        cmocka_unit_test(missing_file),
        cmocka_unit_test(headers_crlf_and_indentation),
        cmocka_unit_test(a_folder_as_config),
        cmocka_unit_test(long_lines_and_bom),
        cmocka_unit_test(suite_samples_path),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
