#include "cmd/run.h"

#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/clock.h"
#include "base/envvars.h"
#include "base/error.h"
#include "base/nvml.h"
#include "base/recording_switch.h"
#include "cli/cli.h"
#include "cmd/list.h"
#include "outputs/formats.h"
#include "gpu/device.h"
#include "gpu/peers.h"
#include "suite/config.h"
#include "suite/fit.h"
#include "suite/gpus.h"
#include "suite/overrides.h"

static void on_sigint(int sig)
{
    (void)sig;
    sb_stop_requested = 1;
}

typedef struct {
    sb_sinks *sinks;
    const sb_env *env;
    int done, total; /* measurements, for the progress line */
    double t0;
    long rows; /* handed to the sinks so far */
} run_ctx;

/* "[3/24] copy h2d-pinned bytes=64MiB  1.2 s" on stderr, rewritten in place. */
static void on_start(void *ctx, const sb_plan_entry *e, int variant)
{
    run_ctx *c = ctx;
    char params[256];
    sb_params_format_all(e->sc->params, e->values, params, sizeof params);
    fprintf(stderr, "\r\033[K[%d/%d] %s %s %s  %.1f s", ++c->done, c->total, e->sc->name,
            e->sc->variants[variant].name, params, (sb_now_us() - c->t0) / 1e6);
    fflush(stderr);
}

/* The rows of one finished measurement: written and flushed before the next one starts. */
static int on_rows(void *ctx, const sb_row *rows, int n)
{
    run_ctx *c = ctx;
    int rc = 0;
    c->rows += n;
    for (int i = 0; i < n && !rc; i++)
        rc = sb_sinks_row(c->sinks, c->env, &rows[i]);
    return rc ? rc : sb_sinks_flush(c->sinks, c->env);
}

int sb_run_plan(const sb_plan *plan, sb_measure_cfg cfg, sb_sinks *sinks, const sb_env *env,
                int progress)
{
    run_ctx c = {sinks, env, 0, sb_plan_measurements(plan), sb_now_us(), 0};
    cfg.on_start = progress ? on_start : NULL;
    cfg.emit = on_rows;
    cfg.ctx = &c;
    int rc = 0;
    for (int i = 0; i < plan->n && !rc; i++)
        rc = sb_stop_requested ? SB_EXIT_INTERRUPT : sb_measure_entry(&cfg, &plan->entries[i]);
    if (progress)
        fprintf(stderr, "\r\033[K");
    if (rc == SB_EXIT_INTERRUPT) /* Ctrl-C: the measurement under way finished first */
        sb_fail(SB_EXIT_INTERRUPT, "interrupted; finished rows were written");
    /* a run that measured nothing leaves the outputs as they were (no empty file replaces an
     * earlier one); otherwise what was measured is committed, also after a failure or Ctrl-C */
    if (c.rows == 0) {
        sb_sinks_abort(sinks);
        return rc;
    }
    int wrc = sb_sinks_commit(sinks, env);
    return rc ? rc : wrc;
}

/* The plan of the command line, or of --config FILE with the command line's overrides. */
int sb_cli_plan_outputs(const sb_options *o, sb_plan *plan, char *samples, size_t n)
{
    if (samples && n)
        samples[0] = '\0';
    if (!o->config)
        return sb_plan_build(&o->run, 1, plan);
    sb_suite suite;
    int rc = sb_suite_load(o->config, &suite);
    if (!rc)
        rc = sb_suite_override(&suite, &o->run);
    if (!rc)
        rc = sb_plan_build(suite.specs, suite.n, plan);
    if (!rc && samples && n)
        snprintf(samples, n, "%s", suite.samples);
    sb_suite_free(&suite);
    return rc;
}

int sb_cli_plan(const sb_options *o, sb_plan *plan)
{
    return sb_cli_plan_outputs(o, plan, NULL, 0);
}

/* Every output is checked before the GPU is touched. The command line's --samples wins over
 * the suite's. */
static int add_sinks(const sb_options *o, const char *suite_samples, sb_sinks *sinks)
{
    const char *inputs[] = {o->config, NULL};
    int rc = 0;
    /* every format with a run sink whose option was given, in the registry's order */
    for (const sb_output_format *f = sb_output_formats; !rc && f->name; f++) {
        const char *path = f->run ? sb_optdefs_text(sb_cli_optdefs(), o, f->option) : NULL;
        if (f->run == &sb_samples_sink && !path && *suite_samples)
            path = suite_samples; /* a suite may set samples = PATH */
        if (path)
            rc = sb_sinks_add(sinks, f->run, f->option, path, inputs);
    }
    /* the table, unless quiet or stdout already carries an output ("-", /dev/stdout, ...) */
    int table = !o->quiet;
    for (int i = 0; i < sinks->n; i++)
        table &= !sinks->s[i].out.to_stdout;
    if (!rc && table)
        rc = sb_sinks_add(sinks, &sb_table_sink, "table", "-", NULL);
    return rc;
}

/* --cpu N: the thread that launches and syncs stays on one CPU. */
static int pin_cpu(long long cpu)
{
    if (cpu < 0)
        return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET((int)cpu, &set);
    if (sched_setaffinity(0, sizeof set, &set) != 0)
        return sb_fail(SB_EXIT_USAGE, "--cpu %lld: this process may not run there (%d CPUs online)",
                       cpu, (int)sysconf(_SC_NPROCESSORS_ONLN));
    return 0;
}

/* Entries that drive several GPUs against the machine's: those it cannot run are taken out of
 * the plan (`note` says which), more GPUs asked than there are is bad input. Before the device
 * is opened: counting creates no context. *visible: the GPUs counted (0 without such entries). */
static int fit_gpus(sb_plan *plan, int *visible, char *note, size_t n)
{
    *visible = 0;
    if (!sb_plan_multi_gpu(plan))
        return 0;
    int rc = sb_gpu_count(visible);
    return rc ? rc : sb_plan_fit_gpus(plan, *visible, note, n);
}

/* SYNCBENCH_RECORDING_TURNS (a test hook of the replay's validation, engine/measure.h): unset,
 * empty or 0: none; 1: wanted, which needs syncbench audit's library (checked here, before the
 * device is opened, by its variable; its switch once CUDA has loaded it: recording_switch). */
static int recording_turns_wanted(int *wanted)
{
    int bad;
    *wanted = sb_env_long(SB_ENV_RECORDING_TURNS, &bad) == 1;
    if (bad)
        return sb_fail(SB_EXIT_USAGE, "SYNCBENCH_RECORDING_TURNS=%s: 0 or 1",
                       sb_env_str(SB_ENV_RECORDING_TURNS));
    const char *lib = getenv("CUDA_INJECTION64_PATH");
    if (*wanted && (!lib || !*lib))
        return sb_fail(SB_EXIT_USAGE, "SYNCBENCH_RECORDING_TURNS=1: only under `syncbench audit "
                                      "--gpu-activity` (no injection library)");
    return 0;
}

/* The audit library's switch, working, when turns are wanted (NULL otherwise). */
static int recording_switch(int wanted, sb_recording_fn *out)
{
    *out = wanted ? sb_recording_switch() : NULL;
    if (wanted && (!*out || (*out)(1) != 0))
        return sb_fail(SB_EXIT_USAGE, "SYNCBENCH_RECORDING_TURNS=1: the injection library has no "
                                      "recording to switch (run under `syncbench audit "
                                      "--gpu-activity`)");
    return 0;
}

static int measure_plan(const sb_options *o, sb_plan *plan, const char *suite_samples, int argc,
                        char **argv)
{
    sb_sinks sinks;
    memset(&sinks, 0, sizeof sinks);
    sb_env env;
    sb_env_host(&env, argc, argv);
    size_t free_b = 0;
    char skipped[1024] = "";
    int turns = 0;
    sb_recording_fn recording = NULL;
    int rc = pin_cpu(o->cpu);
    if (!rc)
        rc = recording_turns_wanted(&turns);
    if (!rc)
        rc = add_sinks(o, suite_samples, &sinks);
    int visible = 0;
    if (!rc)
        rc = fit_gpus(plan, &visible, skipped, sizeof skipped);
    if (!rc)
        rc = sb_env_open_device(&env, (int)o->device);
    if (!rc)
        rc = recording_switch(turns, &recording);
    if (!rc && visible) /* what the multi-GPU entries need beyond their GPUs: NCCL, P2P */
        rc = sb_plan_check_gpus(plan, visible);
    if (!rc)
        rc = sb_device_free_memory(&free_b);
    if (!rc)
        rc = sb_plan_fits(plan, env.gpu, free_b);
    if (!rc)
        rc = sb_sinks_open(&sinks, &env);
    if (rc) {
        sb_sinks_abort(&sinks);
        sb_sinks_free(&sinks);
        return rc;
    }
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigaction(SIGINT, &sa, NULL);
    if (*skipped)
        fprintf(stderr, "syncbench: note: %s\n", skipped);

    sb_measure_cfg cfg = {.device = (int)o->device,
                          .capture = 1,
                          .sample_clocks = env.has_nvml ? sb_nvml_sample : NULL,
                          .recording = recording};
    int terminal = !o->quiet && isatty(STDERR_FILENO); /* a progress line only there */
    rc = sb_run_plan(plan, cfg, &sinks, &env, terminal);
    if (terminal)
        for (int i = 0; i < sinks.n; i++)
            if (sinks.s[i].out.state == SB_OUT_COMMITTED && !sinks.s[i].out.to_stdout)
                fprintf(stderr, "wrote %s\n", sinks.s[i].out.path);
    sb_sinks_free(&sinks);
    sb_nvml_close();
    return rc;
}

int sb_cmd_run(int argc, char **argv)
{
    sb_options o;
    sb_options_defaults(&o);
    int rc = sb_cli_parse(argc, argv, &o);
    if (rc)
        return rc;
    if (o.help) {
        sb_cli_usage(stdout);
        return 0;
    }
    if (o.version) {
        printf("syncbench %s (git %s)\n", SB_VERSION, SB_GIT_REV);
        return 0;
    }
    if (o.list)
        return sb_cmd_list(0, NULL);
    sb_plan plan;
    char suite_samples[4096];
    if ((rc = sb_cli_plan_outputs(&o, &plan, suite_samples, sizeof suite_samples)) != 0)
        return rc;
    if (o.dry_run) {
        /* the outputs are checked as a real run would check them, then left alone */
        sb_sinks sinks;
        memset(&sinks, 0, sizeof sinks);
        rc = add_sinks(&o, suite_samples, &sinks);
        sb_sinks_abort(&sinks);
        sb_sinks_free(&sinks);
        if (!rc)
            sb_plan_print(stdout, &plan);
    } else
        rc = measure_plan(&o, &plan, suite_samples, argc, argv);
    sb_plan_free(&plan);
    return rc;
}
