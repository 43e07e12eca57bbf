/* syncbench: parse -> plan -> open device -> measure -> report; maps failures to exit codes.
 * `syncbench compare` is the regression gate (compare.c). */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "base/clock.h"
#include "compare/compare.h"
#include "base/env.h"
#include "base/error.h"
#include "suite/fit.h"
#include "cli/list.h"
#include "engine/measure.h"
#include "base/nvml.h"
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

/* The outputs, checked before any GPU work (exit 2). The table goes to stdout unless the CSV
 * does. */
static int add_outputs(const sb_options *o, sb_sinks *sinks)
{
    const char *const inputs[] = {o->config, NULL};
    int rc = 0;
    if (o->csv)
        rc = sb_sinks_add(sinks, &sb_csv_sink, "csv", o->csv, inputs);
    if (!rc && o->json)
        rc = sb_sinks_add(sinks, &sb_json_sink, "json", o->json, inputs);
    if (!rc && o->markdown)
        rc = sb_sinks_add(sinks, &sb_markdown_sink, "markdown", o->markdown, inputs);
    if (!rc && !o->quiet && !(o->csv && !strcmp(o->csv, "-")))
        rc = sb_sinks_add(sinks, &sb_table_sink, "table", "-", NULL);
    return rc;
}

/* Whatever was measured is committed, also after a failure or Ctrl-C; a run that measured
 * nothing leaves no file. */
static int commit_outputs(const sb_options *o, sb_sinks *sinks, const sb_env *env,
                          const sb_results *res, int rc)
{
    for (int i = 0; i < res->n; i++)
        sb_sinks_row(sinks, env, &res->rows[i]);
    sb_sinks_flush(sinks, env);
    if (rc && !res->n) {
        sb_sinks_abort(sinks);
        return 0;
    }
    int wrc = sb_sinks_commit(sinks, env);
    if (!o->quiet && isatty(STDERR_FILENO))
        for (int i = 0; i < sinks->n; i++) {
            const sb_out_file *f = &sinks->s[i].out;
            if (f->state == SB_OUT_COMMITTED && !f->to_stdout)
                fprintf(stderr, "wrote %s\n", f->path);
        }
    return wrc;
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
    sb_sinks sinks;
    memset(&sinks, 0, sizeof sinks);
    sb_env env;
    sb_env_host(&env, argc, argv);
    rc = add_outputs(o, &sinks);
    if (!rc)
        rc = sb_env_open_device(&env, o->device);
    if (!rc)
        rc = sb_plan_fits(&plan, env.gpu);
    if (!rc)
        rc = sb_sinks_open(&sinks, &env);
    if (rc) {
        sb_sinks_free(&sinks);
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

    int wrc = commit_outputs(o, &sinks, &env, &res, rc);
    sb_sinks_free(&sinks);
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
