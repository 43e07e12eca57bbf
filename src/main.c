/* syncbench: parse -> plan -> open device -> measure -> report; maps failures to exit codes.
 * `syncbench compare` is the regression gate (cli/compare_args.c, compare/). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/clock.h"
#include "cli/compare_args.h"
#include "base/env.h"
#include "base/error.h"
#include "suite/fit.h"
#include "cli/list.h"
#include "engine/measure.h"
#include "base/nvml.h"
#include "sinks/outfile.h"
#include "suite/plan.h"
#include "sinks/sink.h"

static void on_sigint(int sig)
{
    (void)sig;
    sb_stop_requested = 1;
}

static int finish(int rc)
{
    if (rc == SB_EXIT_INTERRUPT)
        fprintf(stderr, "syncbench: interrupted; finished rows were written\n");
    else if (rc && sb_error_code())
        fprintf(stderr, "syncbench: %s\n", sb_error_message());
    return rc;
}

/* "[3/24] copy h2d-pinned bytes=64MiB  1.2 s" on stderr, rewritten in place. */
typedef struct {
    int done, total;
    double t0;
} progress;

static void show_progress(void *ctx, const sb_plan_entry *e, int variant)
{
    progress *p = ctx;
    char params[256];
    sb_params_format_all(e->sc->params, e->values, params, sizeof params);
    fprintf(stderr, "\r\033[K[%d/%d] %s %s %s  %.1f s", ++p->done, p->total, e->sc->name,
            e->sc->variants[variant].name, params, (sb_now_us() - p->t0) / 1e6);
    fflush(stderr);
}

typedef struct {
    sb_out_file csv, json, markdown;
} outputs;

static int open_outputs(const sb_options *o, outputs *out)
{
    int rc = 0;
    if (o->csv)
        rc = sb_out_open(&out->csv, "csv", o->csv);
    if (!rc && o->json)
        rc = sb_out_open(&out->json, "json", o->json);
    if (!rc && o->markdown)
        rc = sb_out_open(&out->markdown, "markdown", o->markdown);
    return rc;
}

static void discard_outputs(outputs *out)
{
    sb_out_discard(&out->csv);
    sb_out_discard(&out->json);
    sb_out_discard(&out->markdown);
}

static int commit_outputs(const sb_options *o, outputs *out, const sb_env *env,
                          const sb_results *res)
{
    int rc = sb_csv_commit(&out->csv, env, res);
    int rc2 = sb_json_commit(&out->json, env, res);
    int rc3 = sb_markdown_commit(&out->markdown, env, res);
    if (!o->quiet && isatty(STDERR_FILENO)) {
        const sb_out_file *files[] = {&out->csv, &out->json, &out->markdown};
        for (int i = 0; i < 3; i++)
            if (files[i]->path[0])
                fprintf(stderr, "wrote %s\n", files[i]->path);
    }
    return rc ? rc : rc2 ? rc2 : rc3;
}

static int run(const sb_options *o, int argc, char **argv)
{
    sb_plan plan;
    int rc = sb_plan_build(o, &plan);
    if (rc)
        return rc;
    if (o->dry_run) {
        sb_plan_print(stdout, &plan);
        sb_plan_free(&plan);
        return 0;
    }
    outputs out;
    memset(&out, 0, sizeof out);
    sb_env env;
    sb_env_host(&env, argc, argv);
    rc = open_outputs(o, &out);
    if (!rc)
        rc = sb_env_open_device(&env, o->device);
    if (!rc)
        rc = sb_plan_fits(&plan, env.gpu);
    if (rc) {
        discard_outputs(&out);
        sb_plan_free(&plan);
        return rc;
    }

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);

    progress prog = {0, sb_plan_measurements(&plan), sb_now_us()};
    int show = !o->quiet && isatty(STDERR_FILENO);
    sb_measure_cfg cfg = {.device = o->device,
                          .capture = 1,
                          .sample_clocks = env.has_nvml ? sb_nvml_sample : NULL,
                          .on_start = show ? show_progress : NULL,
                          .ctx = &prog};
    sb_results res = {0};
    for (int i = 0; i < plan.n && !rc; i++)
        rc = sb_measure_entry(&cfg, &plan.entries[i], &res);
    if (show)
        fprintf(stderr, "\r\033[K");

    /* whatever was measured is written, also after a failure or Ctrl-C */
    int wrc = commit_outputs(o, &out, &env, &res);
    if (!o->quiet && !(o->csv && !strcmp(o->csv, "-")) && res.n)
        sb_report_table(stdout, &res);
    sb_results_free(&res);
    sb_plan_free(&plan);
    sb_nvml_close();
    return rc ? rc : wrc;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "compare"))
        return finish(sb_compare_main(argc - 1, argv + 1));
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
    return finish(run(&o, argc, argv));
}
