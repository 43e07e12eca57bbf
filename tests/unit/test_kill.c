/* A run killed with SIGKILL after its second measurement finished: the rows of both are in
 * OUT.partial (written and flushed as each measurement finished), OUT itself was never made.
 * The same run left alone commits OUT and leaves no partial file. CPU only: a fake scenario
 * measured by the real engine into the real sinks, as `syncbench run` wires them. */
#include "cmocka_all.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/error.h"
#include "cmd/run.h"
#include "fake_scenario.h"

static const sb_variant variants[] = {
    {"only", "", 0, NULL, 0},
    {NULL, NULL, 0, NULL, 0},
};
static const sb_metric_def metrics[] = {
    FAKE_WALL_METRIC,
    {NULL, NULL, 0, NULL},
};

static int validated;  /* measurements finished */
static int fail_first; /* the first measurement's validation fails */
static int notify_fd;  /* the parent reads a byte here when the third measurement starts */
static int hang_third; /* in the child that is killed */

static int setup(sb_run *r)
{
    (void)r;
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    if (hang_third && validated == 2) {
        /* two measurements are done and their rows flushed: be killed here */
        if (write(notify_fd, "x", 1) != 1)
            _exit(3);
        for (;;)
            pause();
    }
    sb_record(rec, "wall", 10.0 * (double)sb_run_param(r, "p"));
    return 0;
}

static int validate(sb_run *r)
{
    (void)r;
    if (fail_first && validated == 0)
        return sb_fail(SB_EXIT_FAIL, "validation failed in %s", sb_error_context());
    validated++;
    return 0;
}

FAKE_SCENARIO(NULL, NULL);

static char dir[64], csv[128], json[128], samples[128], partial[160];

static int run_three(void)
{
    sb_plan_entry e[3];
    memset(e, 0, sizeof e);
    for (int i = 0; i < 3; i++) {
        e[i].sc = &fake;
        e[i].values[0] = i + 1;
        e[i].n_variants = 1;
        e[i].m = (sb_measure_opts){.iters = 1,
                                   .warmup = 0,
                                   .min_reps = 2,
                                   .max_reps = 2,
                                   .max_time_s = 1,
                                   .target_cv = 100,
                                   .warmup_s = 0};
    }
    sb_plan plan = {e, 3, 3};
    sb_env env;
    memset(&env, 0, sizeof env);
    strcpy(env.run_id, "kill-test");
    strcpy(env.gpu, "none");
    sb_sinks sinks;
    memset(&sinks, 0, sizeof sinks);
    int rc = sb_sinks_add(&sinks, &sb_csv_sink, "csv", csv, NULL);
    if (!rc)
        rc = sb_sinks_add(&sinks, &sb_json_sink, "json", json, NULL);
    if (!rc)
        rc = sb_sinks_add(&sinks, &sb_samples_sink, "samples", samples, NULL);
    if (!rc)
        rc = sb_sinks_open(&sinks, &env);
    if (!rc)
        rc = sb_run_plan(&plan, (sb_measure_cfg){.capture = 0}, &sinks, &env, 0);
    sb_sinks_free(&sinks);
    return rc;
}

static int count_lines(const char *path, const char *needle)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += !needle || strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static int setup_dir(void **state)
{
    (void)state;
    strcpy(dir, "/tmp/syncbench-kill-XXXXXX");
    assert_non_null(mkdtemp(dir));
    snprintf(csv, sizeof csv, "%s/out.csv", dir);
    snprintf(json, sizeof json, "%s/out.json", dir);
    snprintf(samples, sizeof samples, "%s/out.samples.csv", dir);
    validated = 0;
    sb_error_clear();
    return 0;
}

static int remove_dir(void **state)
{
    (void)state;
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    return system(cmd);
}

static void sigkill_keeps_finished_rows(void **state)
{
    (void)state;
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(fds[0]);
        notify_fd = fds[1];
        hang_third = 1;
        _exit(run_three() == 0 ? 0 : 4);
    }
    close(fds[1]);
    char c;
    assert_int_equal(read(fds[0], &c, 1), 1); /* the third measurement has started */
    kill(pid, SIGKILL);
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    close(fds[0]);

    assert_false(exists(csv)); /* never committed */
    snprintf(partial, sizeof partial, "%s.partial", csv);
    assert_int_equal(count_lines(partial, NULL), 1 + 2); /* header + one row per measurement */
    assert_int_equal(count_lines(partial, "run_id,"), 1);
    assert_int_equal(count_lines(partial, ",fake,only,p=1,"), 1);
    assert_int_equal(count_lines(partial, ",fake,only,p=2,"), 1);
    assert_int_equal(count_lines(partial, ",fake,only,p=3,"), 0);
    snprintf(partial, sizeof partial, "%s.partial", json);
    assert_int_equal(count_lines(partial, "\"p=1\""), 1);
    assert_int_equal(count_lines(partial, "\"p=2\""), 1);
}

static void normal_end_commits(void **state)
{
    (void)state;
    hang_third = 0;
    assert_int_equal(run_three(), 0);
    snprintf(partial, sizeof partial, "%s.partial", csv);
    assert_false(exists(partial));
    assert_int_equal(count_lines(csv, NULL), 1 + 3);
    assert_int_equal(count_lines(csv, ",fake,only,p=3,"), 1);
    snprintf(partial, sizeof partial, "%s.partial", json);
    assert_false(exists(partial));
    assert_int_equal(count_lines(json, "\"p=3\""), 1);
    /* every repetition: 3 measurements x 2 reps, with its value */
    assert_int_equal(count_lines(samples, NULL), 1 + 6);
    assert_int_equal(count_lines(samples, "run_id,scenario,variant,params,metric,rep,value"), 1);
    assert_int_equal(count_lines(samples, "kill-test,fake,only,p=3,wall,2,30\n"), 1);
}

/* A run that measured nothing leaves an earlier output as it was, and no partial file. */
static void nothing_measured_leaves_outputs_alone(void **state)
{
    (void)state;
    FILE *f = fopen(csv, "w");
    fputs("an earlier run's rows\n", f);
    fclose(f);
    fail_first = 1;
    assert_int_equal(run_three(), SB_EXIT_FAIL);
    fail_first = 0;
    assert_int_equal(count_lines(csv, "an earlier run's rows"), 1);
    assert_int_equal(count_lines(csv, NULL), 1);
    snprintf(partial, sizeof partial, "%s.partial", csv);
    assert_false(exists(partial));
    assert_false(exists(json));
}

/* A target that is stdout itself (/dev/stdout, or the file stdout goes to) is written as
 * stdout, never reopened: reopening would truncate what stdout already holds. */
static void stdout_by_another_name_is_stdout(void **state)
{
    (void)state;
    char out[160];
    snprintf(out, sizeof out, "%s/stdout.txt", dir);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    assert_non_null(freopen(out, "w", stdout));
    printf("already there\n");
    sb_out_file o;
    assert_int_equal(sb_out_prepare(&o, "csv", "/dev/stdout"), 0);
    int same = o.to_stdout;
    sb_out_file o2;
    assert_int_equal(sb_out_prepare(&o2, "csv", out), 0);
    int same2 = o2.to_stdout;
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    assert_true(same);
    assert_true(same2);
    assert_int_equal(count_lines(out, "already there"), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(sigkill_keeps_finished_rows, setup_dir, remove_dir),
        cmocka_unit_test_setup_teardown(normal_end_commits, setup_dir, remove_dir),
        cmocka_unit_test_setup_teardown(nothing_measured_leaves_outputs_alone, setup_dir,
                                        remove_dir),
        cmocka_unit_test_setup_teardown(stdout_by_another_name_is_stdout, setup_dir, remove_dir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
