/* syncbench: parse -> plan -> open device -> measure -> report; maps failures to exit codes. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "env.h"
#include "error.h"
#include "fit.h"
#include "list.h"
#include "measure.h"
#include "plan.h"
#include "report.h"

static void on_sigint(int sig)
{
    (void)sig;
    sb_stop_requested = 1;
}

static int finish(int rc)
{
    if (rc && rc != SB_EXIT_INTERRUPT && sb_error_code())
        fprintf(stderr, "syncbench: %s\n", sb_error_message());
    else if (rc == SB_EXIT_INTERRUPT)
        fprintf(stderr, "syncbench: interrupted; finished rows were written\n");
    return rc;
}

static int run(const sb_options *o)
{
    sb_plan plan;
    int rc = sb_plan_build(o, &plan);
    if (rc)
        return rc;
    sb_csv_file csv = {0};
    if (o->csv && (rc = sb_csv_open(&csv, o->csv)) != 0) {
        sb_plan_free(&plan);
        return rc;
    }
    sb_env env;
    sb_env_host(&env);
    rc = sb_env_open_device(&env, o->device);
    if (!rc)
        rc = sb_plan_fits(&plan, env.gpu);
    if (rc) {
        sb_csv_discard(&csv);
        sb_plan_free(&plan);
        return rc;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);

    sb_measure_cfg cfg = {.warmup = o->warmup,
                          .warmup_s = o->warmup_s,
                          .min_reps = o->min_reps,
                          .max_reps = o->max_reps,
                          .max_time_s = o->max_time_s,
                          .target_cv = o->target_cv,
                          .device = o->device,
                          .capture = 1};
    sb_results res = {0};
    for (int i = 0; i < plan.n && !rc; i++)
        rc = sb_measure_entry(&cfg, &plan.entries[i], &res);

    /* whatever was measured is written, also after a failure or Ctrl-C */
    int wrc = sb_csv_commit(&csv, &env, &res);
    if (!o->quiet && !(o->csv && !strcmp(o->csv, "-")) && res.n)
        sb_report_table(stdout, &res);
    sb_results_free(&res);
    sb_plan_free(&plan);
    return rc ? rc : wrc;
}

int main(int argc, char **argv)
{
    sb_options o;
    sb_options_defaults(&o);
    int rc = sb_cli_parse(argc, argv, &o);
    if (rc)
        return finish(rc);
    if (o.help) {
        sb_cli_usage(stdout);
        return 0;
    }
    if (o.version) {
        printf("syncbench %s (git %s)\n", SB_VERSION, SB_GIT_REV);
        return 0;
    }
    if (o.list) {
        sb_print_list(stdout);
        return 0;
    }
    return finish(run(&o));
}
