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
#include "gpu/sync.h"
#include "scenarios/fixes.h"
#include "scenarios/validation.h"
#include "scalars.h"

static const sb_param_def params[] = {
    {"kernels", SB_PARAM_INT, "20", "kernels per step (K)", 1, 10000, NULL},
    SB_FIX_KERNEL_US("2"),
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
    SB_FIX_STEP_US,        SB_FIX_SAVING, SB_FIX_SYNCS, {"launch_us", "us", SB_LOWER, "launch µs"},
    {NULL, NULL, 0, NULL},
};

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
    long long est = sb_kernels_step_us(sb_param(p, "kernels"), sb_param(p, "work_us"));
    return sb_fix_steps((double)est, 10000);
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
    s->kernels = (int)sb_run_param(r, "kernels");
    s->ns = sb_run_param_ns(r, "work_us");
    sb_resources *res = &r->res;
    int rc;
    /* a non-blocking stream: capture must not meet the legacy default stream */
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->counter, sizeof *s->counter)) ||
        (rc = sb_get_pinned(res, &s->count_h, sizeof *s->count_h, cudaHostAllocDefault)) ||
        (rc = capture(s, res)))
        return rc;
    return sb_memset_sync(s->counter, 0, sizeof *s->counter, s->stream);
}

static int measure(sb_run *r, sb_recorder *rec)
{
    graph_state *s = r->state;
    const int replay = sb_run_mode(r) == GRAPH;
    double launch = 0;
    sb_fix_timer t = sb_fix_start();
    for (long long i = 0; i < r->iters; i++) {
        double a = sb_now_us();
        if (replay) {
            SB_CUDA(cudaGraphLaunch(s->exec, s->stream));
        } else {
            int rc = enqueue_kernels(s);
            if (rc)
                return rc;
        }
        launch += sb_now_us() - a;
        SB_CUDA(cudaStreamSynchronize(s->stream));
    }
    t.syncs = r->iters; /* one cudaStreamSynchronize per step, either way */
    sb_fix_record(rec, &t, sb_now_us(), r->iters);
    sb_record(rec, "launch_us", launch / (double)r->iters);
    s->steps += (unsigned long long)r->iters;
    return 0;
}

/* Every kernel of every step ran, launched or replayed: the counter is K x steps. */
static int validate(sb_run *r)
{
    graph_state *s = r->state;
    SB_CUDA(sb_read_back(s->count_h, s->counter, sizeof *s->count_h, s->stream));
    unsigned long long got = *s->count_h, want = (unsigned long long)s->kernels * s->steps;
    if (sb_fault("graph-counter")) /* test hook: a kernel that did not run must be caught */
        got--;
    if (got != want)
        return sb_invalid("the kernels ran %llu times, expected %d kernels x %llu steps = %llu",
                          got, s->kernels, s->steps, want);
    s->steps = 0;
    return sb_memset_sync(s->counter, 0, sizeof *s->counter, s->stream);
}

SB_SCENARIO(sb_graph, "graph", graph_state,
            "K short kernels and a sync per step: K launches vs one CUDA graph launch",
            .params = params, .metrics = metrics, .delta = &sb_fix_delta, .default_iters = 42,
            .iters_for = iters_for, .device_bytes = device_bytes, .validate = validate);
