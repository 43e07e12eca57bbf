/* What torch.compile made, apart from the loop's run time: a call made while Dynamo traced a
 * frame, Inductor compiled a graph, autotuned or benchmarked kernels, or compiled them, or made
 * by one of its worker processes, happens once per compiled graph (and again at a recompile), not
 * at each step. Such calls are the "compile" group: named as torch.compile's work at the user's
 * line that called into the compiled function, apart from the gate (unless --include-compile)
 * and from the replay's savings. Code torch generates (Inductor's cache) is never a site. */
#include "analyze/analyze.h"

#include <string.h>

/* The fix common to every compile-time call: why it is apart. */
#define APART " (compile time: gated only with --include-compile, never in the predicted savings)"

typedef enum { WORK_DYNAMO, WORK_INDUCTOR, WORK_AUTOTUNE, WORK_KERNELS, WORK_WORKER } compile_work;

/* What each kind of compile work is called, and what the user can do about it. */
static const struct {
    const char *op, *fix;
} works[] = {
    [WORK_DYNAMO] = {"torch.compile: Dynamo tracing and compiling a frame",
                     "once per compiled frame, and again at each recompile (TORCH_LOGS=recompiles "
                     "says which guard failed): not a step's cost" APART},
    [WORK_INDUCTOR] = {"torch.compile: Inductor compiling a graph",
                       "once per graph: not a step's cost; a warm Inductor cache "
                       "(TORCHINDUCTOR_CACHE_DIR kept between runs) skips most of it" APART},
    [WORK_AUTOTUNE] =
        {"torch.compile: autotuning/benchmarking",
         "Inductor timing kernel configurations to choose one, once per kernel: not a "
         "step's cost; mode=\"max-autotune\" times more of them, a warm Inductor "
         "cache (TORCHINDUCTOR_CACHE_DIR kept between runs) keeps the choice" APART},
    [WORK_KERNELS] = {"torch.compile: compiling and loading kernels",
                      "once per kernel: not a step's cost; a warm Inductor cache "
                      "(TORCHINDUCTOR_CACHE_DIR kept between runs) skips the compile" APART},
    [WORK_WORKER] = {"torch.compile: compile worker",
                     "a worker process of Inductor, compiling kernels for the main process: not a "
                     "step's cost" APART},
};

/* A frame of torch.compile's compile-time machinery. `path`: a file ("torch/_dynamo/
 * convert_frame.py", matched at the end of a frame's file, after a '/') or a folder (ending in
 * '/', matched after a '/'). `funcs`: "a|b", only these functions; "!a|b", any but these; NULL,
 * any. `in_torch`: only inside torch.compile (a frame of torch/_dynamo/ or torch/_inductor/ on
 * the stack too), for code that a program may call itself (Triton's). At RUN time a compiled
 * step passes through torch/_dynamo/eval_frame.py (_fn), the AOTAutograd and Inductor wrappers
 * (output_code.py, compile_fx.py's run closures, codecache.py's CompiledFxGraph of torch <= 2.4),
 * the generated module's call() and a kernel's launcher (triton_heuristics.py's run): none of
 * those is a marker, so the run-time calls stay in the gate. */
typedef struct {
    const char *path, *funcs;
    compile_work work;
    int in_torch;
} compile_marker;

/* clang-format off */
static const compile_marker markers[] = {
    /* Dynamo's callback on a frame with no compiled code that fits (the first call, a recompile):
     * never entered when compiled code runs, which the C frame evaluator looks up itself */
    {"torch/_dynamo/convert_frame.py", NULL, WORK_DYNAMO, 0},
    /* Dynamo's bytecode tracer, and its graph handed to the backend (call_user_compiler) */
    {"torch/_dynamo/symbolic_convert.py", NULL, WORK_DYNAMO, 0},
    {"torch/_dynamo/output_graph.py", NULL, WORK_DYNAMO, 0},
    /* Inductor's compile entry points, by name: the file also holds the run-time closures that
     * align inputs and replay CUDA graphs (both called run). A backward is compiled at its first
     * run (AOTAutograd's lazy backward) through compile_fx_inner too */
    {"torch/_inductor/compile_fx.py", "compile_fx|compile_fx_inner|_compile_fx_inner|"
     "fx_codegen_and_compile|codegen_and_compile|compile_fx_aot|fw_compiler_base|"
     "_fw_compiler_base|fw_compiler_freezing|bw_compiler|inference_compiler|partition_fn",
     WORK_INDUCTOR, 0},
    /* the graph's lowering and its kernels' fusion and code generation */
    {"torch/_inductor/graph.py", NULL, WORK_INDUCTOR, 0},
    {"torch/_inductor/scheduler.py", NULL, WORK_INDUCTOR, 0},
    /* max-autotune: every choice of a template or an extern kernel benchmarked, in this
     * process or in a subprocess */
    {"torch/_inductor/select_algorithm.py", NULL, WORK_AUTOTUNE, 0},
    {"torch/_inductor/autotune_process.py", NULL, WORK_AUTOTUNE, 0},
    /* Inductor's benchmarker and its coordinate-descent tuner */
    {"torch/_inductor/runtime/benchmarking.py", NULL, WORK_AUTOTUNE, 0},
    {"torch/_inductor/runtime/coordinate_descent_tuner.py", NULL, WORK_AUTOTUNE, 0},
    /* a Triton kernel's configurations benchmarked at its first launch, by name: the kernel's
     * own launch (run) is run time (torch <= 2.2 kept the file in torch/_inductor/) */
    {"torch/_inductor/runtime/triton_heuristics.py", "benchmark_all_configs|"
     "autotune_to_one_config|bench|coordinate_descent_tuning", WORK_AUTOTUNE, 0},
    {"torch/_inductor/triton_heuristics.py", "benchmark_all_configs|autotune_to_one_config|bench|"
     "coordinate_descent_tuning", WORK_AUTOTUNE, 0},
    /* Triton's benchmark, when Inductor calls it (a program's own do_bench is its own) */
    {"triton/testing.py", "do_bench|do_bench_cudagraph", WORK_AUTOTUNE, 1},
    /* a kernel's configurations compiled before its first launch */
    {"torch/_inductor/runtime/triton_heuristics.py", "precompile|_precompile_config",
     WORK_KERNELS, 0},
    {"torch/_inductor/triton_heuristics.py", "precompile|_precompile_config", WORK_KERNELS, 0},
    /* Inductor's code caches and its asynchronous compile: kernels and graphs compiled or
     * loaded; codecache.py of torch <= 2.4 also holds the compiled graph, whose __call__ and
     * get_current_callable run it at run time */
    {"torch/_inductor/codecache.py", "!__call__|get_current_callable|_run_from_cache|run",
     WORK_KERNELS, 0},
    {"torch/_inductor/async_compile.py", NULL, WORK_KERNELS, 0},
    /* Triton compiling a kernel for Inductor */
    {"triton/compiler/", NULL, WORK_KERNELS, 1},
    /* the compile workers' own code (a worker process, or a pool's thread in the main one) */
    {"torch/_inductor/compile_worker/", NULL, WORK_WORKER, 0},
};
/* clang-format on */

int sb_audit_py_generated(const char *file)
{
    /* Inductor's cache (/tmp/torchinductor_USER/ by default): the graphs' modules and the
     * kernels' launchers; Triton's cache; an FX graph module's code, made in memory */
    return strstr(file, "/torchinductor_") || !strncmp(file, "torchinductor_", 14) ||
           strstr(file, "/.triton/cache/") || !strncmp(file, "<eval_with_key>", 15);
}

/* Is `file` the marker's path: the file itself, or a file in the folder? */
static int in_path(const char *file, const char *path)
{
    size_t n = strlen(file), m = strlen(path);
    if (path[m - 1] == '/') {
        for (const char *at = file; (at = strstr(at, path)); at++)
            if (at == file || at[-1] == '/')
                return 1;
        return 0;
    }
    return n >= m && !strcmp(file + n - m, path) && (n == m || file[n - m - 1] == '/');
}

/* Does `funcs` ("a|b", "!a|b" or NULL) take the function `func`? */
static int takes(const char *funcs, const char *func)
{
    if (!funcs)
        return 1;
    int except = funcs[0] == '!', listed = 0;
    size_t len = strlen(func);
    for (const char *at = funcs + except; *at && !listed; at += *at == '|') {
        size_t k = strcspn(at, "|");
        listed = k == len && !strncmp(at, func, k);
        at += k;
    }
    return listed != except;
}

static int inside_torch_compile(const sb_audit_pystack *s)
{
    for (int i = 0; i < s->nframes; i++)
        if (in_path(s->frames[i].file, "torch/_dynamo/") ||
            in_path(s->frames[i].file, "torch/_inductor/"))
            return 1;
    return 0;
}

/* The marker of the innermost frame of compile-time machinery on the stack, or NULL. */
static const compile_marker *marker_of(const sb_audit_pystack *s)
{
    int in_torch = -1; /* not looked at yet */
    for (int i = 0; s && i < s->nframes; i++) {
        const sb_audit_pyframe *f = &s->frames[i];
        for (size_t k = 0; k < sizeof markers / sizeof markers[0]; k++) {
            const compile_marker *m = &markers[k];
            if (!in_path(f->file, m->path) || !takes(m->funcs, f->func))
                continue;
            if (m->in_torch && in_torch < 0)
                in_torch = inside_torch_compile(s);
            if (!m->in_torch || in_torch)
                return m;
        }
    }
    return NULL;
}

int sb_audit_compile_worker(const sb_audit_proc *p)
{
    /* Inductor's SubprocPool starts `python .../torch/_inductor/compile_worker/__main__.py
     * --pickler=... --workers=N`, whose workers it forks keep that command line */
    if (p->cmd && (strstr(p->cmd, "torch/_inductor/compile_worker") ||
                   strstr(p->cmd, "torch._inductor.compile_worker")))
        return 1;
    /* a worker started otherwise (a binary of its own): its entry point on a stack */
    for (size_t i = 0; i < p->npystacks; i++)
        for (int k = 0; k < p->pystacks[i].nframes; k++)
            if (in_path(p->pystacks[i].frames[k].file,
                        "torch/_inductor/compile_worker/__main__.py"))
                return 1;
    return 0;
}

int sb_audit_compile_name(sb_audit_analysis *an, int worker, const sb_audit_pystack *s,
                          sb_audit_call_info *ci, sb_audit_made *m)
{
    sb_audit_run *run = an->run;
    const compile_marker *k = marker_of(s);
    if (!k && !worker)
        return 0;
    compile_work w = k ? k->work : WORK_WORKER;
    m->compile = 1;
    m->op = sb_audit_intern(&run->strs, works[w].op);
    m->fix = sb_audit_intern(&run->strs, works[w].fix);
    ci->rule = NULL; /* no scenario prices compile work */
    return m->op && m->fix ? 0 : -1;
}

int sb_audit_compile_time(const sb_audit_call_info *ci)
{
    return ci->made && ci->made->compile;
}

int sb_audit_gated(const sb_audit_opts *o, const sb_audit_call_info *ci)
{
    return sb_audit_blocking(ci->cls) && (o->include_compile || !sb_audit_compile_time(ci));
}

void sb_audit_compile_sums(sb_audit_proc_result *r)
{
    const sb_audit_proc *p = r->proc;
    for (size_t i = 0; i < p->ncalls; i++) {
        const sb_audit_call *c = &p->calls[i];
        const sb_audit_call_info *ci = &r->calls[i];
        if (!sb_audit_compile_time(ci))
            continue;
        r->compile_polls += ci->cls == SB_AUDIT_POLL;
        if (sb_audit_blocking(ci->cls)) {
            r->compile_blocking++;
            r->compile_blocked_us += (double)(c->end - c->start) / 1e3;
        }
    }
}

const char *sb_audit_phase_name(int compile)
{
    return compile ? "compile" : "run";
}
