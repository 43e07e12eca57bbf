#include <jansson.h>
#include <math.h>
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
    json_t *flags = json_array();
    char buf[32];
    snprintf(buf, sizeof buf, "%s", r->flags);
    for (char *t = strtok(buf, ";"); t; t = strtok(NULL, ";"))
        json_array_append_new(flags, json_string(t));
    json_t *o = json_pack("{s:s, s:s, s:s, s:s, s:I, s:i, s:s, s:s, s:s}", "timestamp",
                          r->timestamp, "scenario", r->scenario, "variant", r->variant, "params",
                          r->params, "iters", (json_int_t)r->iters, "reps", r->reps, "metric",
                          r->metric, "unit", r->unit, "better", sb_better_name(r->better));
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

int sb_json_commit(sb_out_file *o, const sb_env *env, const sb_results *res)
{
    if (!o->f)
        return 0;
    json_t *rows = json_array();
    for (int i = 0; i < res->n; i++)
        json_array_append_new(rows, row(&res->rows[i]));
    json_t *root =
        json_pack("{s:{s:s, s:s}, s:s, s:s, s:o, s:o}", "syncbench", "version", env->version,
                  "git_revision", env->git_rev, "run_id", env->run_id, "command_line",
                  env->command_line, "environment", environment(env), "rows", rows);
    int bad = !root || json_dumpf(root, o->f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0;
    fputc('\n', o->f);
    json_decref(root);
    if (bad) {
        sb_out_discard(o);
        return sb_fail(SB_EXIT_FAIL, "--json: could not encode the results");
    }
    return sb_out_commit(o, env);
}
