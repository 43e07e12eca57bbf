#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "sinks/sink.h"

static json_t *num(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

static json_t *uint_or_null(unsigned v)
{
    return v ? json_integer(v) : json_null();
}

static json_t *environment(const sb_env *e)
{
    json_t *gpu = json_pack("{s:s, s:s, s:s, s:i}", "name", e->gpu, "uuid", e->uuid, "pci_bus_id",
                            e->pci_bus_id, "sm_count", e->sm_count);
    if (e->has_nvml) {
        json_object_set_new(gpu, "clocks_mhz",
                            json_pack("{s:o, s:o, s:o, s:o}", "sm", uint_or_null(e->nvml.sm_mhz),
                                      "sm_max", uint_or_null(e->nvml.sm_max_mhz), "memory",
                                      uint_or_null(e->nvml.mem_mhz), "memory_max",
                                      uint_or_null(e->nvml.mem_max_mhz)));
        json_object_set_new(gpu, "pcie",
                            json_pack("{s:o, s:o, s:o, s:o}", "generation",
                                      uint_or_null(e->nvml.pcie_gen), "width",
                                      uint_or_null(e->nvml.pcie_width), "max_generation",
                                      uint_or_null(e->nvml.pcie_max_gen), "max_width",
                                      uint_or_null(e->nvml.pcie_max_width)));
    } else {
        json_object_set_new(gpu, "clocks_mhz", json_null());
        json_object_set_new(gpu, "pcie", json_null());
    }
    return json_pack("{s:s, s:s, s:s, s:o, s:s, s:s, s:s, s:s}", "host", e->host, "cpu", e->cpu,
                     "kernel", e->kernel, "gpu", gpu, "driver", e->driver, "cuda_runtime",
                     e->cuda_runtime, "cuda_driver", e->cuda_driver, "cublas", e->cublas);
}

static json_t *row(const sb_row *r)
{
    char stamp[32];
    sb_utc_format(r->finished, stamp, sizeof stamp);
    json_t *flags = json_array();
    char buf[32];
    snprintf(buf, sizeof buf, "%s", r->flags);
    for (char *t = strtok(buf, ";"); t; t = strtok(NULL, ";"))
        json_array_append_new(flags, json_string(t));
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:i, s:s, s:s, s:s}", "timestamp", stamp,
                          "scenario", r->scenario, "variant", r->variant, "params", r->params,
                          "iters", (json_int_t)r->iters, "reps", r->reps, "metric", r->metric,
                          "unit", r->unit, "better", sb_better_name(r->better));
    json_object_set_new(o, "median", num(r->st.median));
    json_object_set_new(o, "mean", num(r->st.mean));
    json_object_set_new(o, "stddev", num(r->st.stddev));
    json_object_set_new(o, "min", num(r->st.min));
    json_object_set_new(o, "max", num(r->st.max));
    json_object_set_new(o, "p05", num(r->st.p05));
    json_object_set_new(o, "p95", num(r->st.p95));
    json_object_set_new(o, "cv", num(r->st.cv));
    json_object_set_new(o, "flags", flags);
    return o;
}

/* The document is written as it grows: its head (everything but the rows) at begin, then
 * `"rows": [`, each row as it comes, and the closing brackets at end. Every piece is dumped by
 * jansson and indented to its depth, so the file is the same bytes as one json_dumpf of the
 * whole document with JSON_INDENT(2). */
#define FLAGS (JSON_INDENT(2) | JSON_PRESERVE_ORDER)

typedef struct {
    long rows; /* written so far */
} json_state;

static int encode_failed(const sb_sink *s)
{
    return sb_fail(SB_EXIT_FAIL, "--%s %s: could not encode the results", s->out.opt, s->out.path);
}

static int json_begin(sb_sink *s, const sb_env *env)
{
    s->state = calloc(1, sizeof(json_state));
    json_t *root = json_pack("{s:{s:s, s:s}, s:s, s:s, s:o}", "syncbench", "version", env->version,
                             "git_revision", env->git_rev, "run_id", env->run_id, "command_line",
                             env->command_line, "environment", environment(env));
    char *text = root ? json_dumps(root, FLAGS) : NULL;
    json_decref(root);
    size_t n = text ? strlen(text) : 0;
    /* "{\n  ...\n}": drop the closing "\n}", the rows go in before it */
    if (!s->state || n < 2 || strcmp(text + n - 2, "\n}")) {
        free(text);
        return encode_failed(s);
    }
    fprintf(s->out.f, "%.*s,\n  \"rows\": [", (int)(n - 2), text);
    free(text);
    return 0;
}

static int json_row(sb_sink *s, const sb_env *env, const sb_row *r)
{
    (void)env;
    json_state *st = s->state;
    json_t *o = row(r);
    char *text = o ? json_dumps(o, FLAGS) : NULL;
    json_decref(o);
    if (!text)
        return encode_failed(s);
    fputs(st->rows++ ? ",\n    " : "\n    ", s->out.f);
    for (const char *p = text; *p; p++) {
        fputc(*p, s->out.f);
        if (*p == '\n')
            fputs("    ", s->out.f);
    }
    free(text);
    return 0;
}

static int json_end(sb_sink *s, const sb_env *env)
{
    (void)env;
    const json_state *st = s->state;
    fputs(st->rows ? "\n  ]\n}\n" : "]\n}\n", s->out.f);
    return 0;
}

static void json_destroy(sb_sink *s)
{
    free(s->state);
    s->state = NULL;
}

const sb_sink_ops sb_json_sink = {
    .name = "json",
    .begin = json_begin,
    .row = json_row,
    .end = json_end,
    .destroy = json_destroy,
};
