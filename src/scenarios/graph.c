/* graph: K short kernels per step, then a stream sync (a step that must end on the host: a
 * readback, a log, a decision). Launched one by one, each kernel costs the host a launch of a
 * few microseconds, and after the sync the GPU is idle until the host has launched the next one:
 * with short kernels the step is launch-bound. Captured once into a CUDA graph, the K kernels
 * are one cudaGraphLaunch, and the GPU runs them back to back.
 *
 * The sync stays outside the graph, and must: a graph holds GPU work only. While a stream is
 * being captured, cudaStreamSynchronize and cudaDeviceSynchronize (also the sync after a
 * readback's cudaMemcpyAsync) fail with cudaErrorStreamCaptureUnsupported and invalidate the
 * capture: the next launch and cudaStreamEndCapture fail with cudaErrorStreamCaptureInvalidated
 * and no graph comes out. A blocking cudaMemcpy on the legacy stream while a non-blocking stream
 * is captured is worse: it succeeds, once, at capture time, and is not in the graph, so no
 * replay reads the value again (all checked on an H100 with CUDA 13.0). A step with a sync in
 * its middle is two graphs with the sync between them: removing syncs comes before graphs. */
#include <stdio.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "scenarios/scenario.h"
#include "scalars.h"

static const sb_param_def params[] = {
    {"kernels", SB_PARAM_INT, "20", "kernels per step (K)", 1, 10000, NULL},
    {"work_us", SB_PARAM_INT, "2", "GPU time of each kernel", 0, 100000, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};
enum { LAUNCHES, GRAPH };

static const sb_variant variants[] = {
    {"launches", "K kernel launches, then cudaStreamSynchronize", 1, NULL, LAUNCHES},
    {"graph", "the K kernels captured once, one cudaGraphLaunch, then cudaStreamSynchronize", 0,
     "launches", GRAPH},
    {NULL, NULL, 0, NULL, 0},
};

static const sb_metric_def metrics[] = {
    {"step_us", "us", SB_LOWER, "step µs"},     {"saving_us", "us", SB_HIGHER, "saving µs"},
    {"saving_pct", "%", SB_HIGHER, "saving %"}, {"syncs_per_step", "count", SB_LOWER, "syncs/step"},
    {"launch_us", "us", SB_LOWER, "launch µs"}, {NULL, NULL, 0, NULL},
};

static const sb_delta_def delta = {"step_us", "saving_us", "saving_pct", 1};

typedef struct graph_state {
    cudaStream_t stream;
    int kernels;
    unsigned long long ns;
    unsigned long long *counter; /* device: +1 per kernel run */
    unsigned long long *count_h; /* pinned */
    unsigned long long steps;    /* steps run since the counter was zeroed */
    cudaGraphExec_t exec;
} graph_state;

static size_t device_bytes(const sb_param_values *p)
{
    (void)p;
    return sizeof(unsigned long long);
}

/* Step estimate of the launch-bound variant: ~3 us of launch per kernel, or its work. */
static long long iters_for(const sb_param_values *p)
{
    long long work = sb_param(p, "work_us");
    long long est = sb_param(p, "kernels") * (work > 3 ? work : 3) + 10;
    long long n = 3000 / est;
    return n < 1 ? 1 : n > 10000 ? 10000 : n;
}

static void destroy_graph(void *p)
{
    cudaGraphDestroy((cudaGraph_t)p);
}

static void destroy_exec(void *p)
{
    cudaGraphExecDestroy((cudaGraphExec_t)p);
}

static int enqueue_kernels(graph_state *s)
{
    for (int k = 0; k < s->kernels; k++)
        SB_LAUNCH(sb_launch_spin_count(s->ns, s->counter, s->stream));
    return 0;
}

/* The K kernels into a graph, once. A failed launch ends the capture before returning, so the
 * stream is never left capturing. */
static int capture(graph_state *s, sb_resources *res)
{
    cudaGraph_t graph = NULL;
    SB_CUDA(cudaStreamBeginCapture(s->stream, cudaStreamCaptureModeThreadLocal));
    int rc = enqueue_kernels(s);
    cudaError_t e = cudaStreamEndCapture(s->stream, &graph);
    if (graph && (e != cudaSuccess || rc)) /* a capture invalidated part way */
        cudaGraphDestroy(graph);
    if (rc)
        return rc;
    SB_CUDA(e);
    if ((rc = sb_keep(res, destroy_graph, graph)) != 0)
        return rc;
    SB_CUDA(cudaGraphInstantiate(&s->exec, graph, 0));
    if ((rc = sb_keep(res, destroy_exec, s->exec)) != 0)
        return rc;
    SB_CUDA(cudaGraphUpload(s->exec, s->stream));
    return 0;
}

static int setup(sb_run *r)
{
    graph_state *s = r->state;
    sb_resources *res = &r->res;
    int rc;
    s->kernels = (int)sb_run_param(r, "kernels");
    s->ns = (unsigned long long)sb_run_param(r, "work_us") * 1000ull;
    /* a non-blocking stream: capture must not meet the legacy default stream */
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->counter, sizeof *s->counter)) ||
        (rc = sb_get_pinned(res, &s->count_h, sizeof *s->count_h, cudaHostAllocDefault)) ||
        (rc = capture(s, res)))
        return rc;
    SB_CUDA(cudaMemsetAsync(s->counter, 0, sizeof *s->counter, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    graph_state *s = r->state;
    const int mode = sb_run_mode(r);
    double launch = 0;
    double t0 = sb_now_us();
    for (long long i = 0; i < r->iters; i++) {
        double a = sb_now_us();
        if (mode == GRAPH) {
            SB_CUDA(cudaGraphLaunch(s->exec, s->stream));
        } else {
            int rc = enqueue_kernels(s);
            if (rc)
                return rc;
        }
        launch += sb_now_us() - a;
        SB_CUDA(cudaStreamSynchronize(s->stream));
    }
    double t1 = sb_now_us();
    s->steps += (unsigned long long)r->iters;
    sb_record(rec, "step_us", (t1 - t0) / (double)r->iters);
    sb_record(rec, "syncs_per_step", 1.0); /* one cudaStreamSynchronize per step, either way */
    sb_record(rec, "launch_us", launch / (double)r->iters);
    return 0;
}

/* Every kernel of every step ran, launched or replayed: the counter is K x steps. */
static int validate(sb_run *r)
{
    graph_state *s = r->state;
    SB_CUDA(cudaMemcpyAsync(s->count_h, s->counter, sizeof *s->count_h, cudaMemcpyDeviceToHost,
                            s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    unsigned long long got = *s->count_h, want = (unsigned long long)s->kernels * s->steps;
    if (sb_fault("graph-counter")) /* test hook: a kernel that did not run must be caught */
        got--;
    if (got != want)
        return sb_fail(SB_EXIT_FAIL,
                       "validation failed in %s: the kernels ran %llu times, expected %d kernels "
                       "x %llu steps = %llu",
                       sb_error_context(), got, s->kernels, s->steps, want);
    SB_CUDA(cudaMemsetAsync(s->counter, 0, sizeof *s->counter, s->stream));
    SB_CUDA(cudaStreamSynchronize(s->stream));
    s->steps = 0;
    return 0;
}

const sb_scenario sb_graph = {
    .name = "graph",
    .state_size = sizeof(graph_state),
    .summary = "K short kernels and a sync per step: K launches vs one CUDA graph launch",
    .params = params,
    .variants = variants,
    .metrics = metrics,
    .delta = &delta,
    .default_iters = 42,
    .iters_for = iters_for,
    .device_bytes = device_bytes,
    .setup = setup,
    .measure = measure,
    .validate = validate,
};
