/* small-gemm and big-gemm: one cuBLAS GEMM per iteration, async or with a forced sync after
 * every iteration. The two presets share this code and differ in parameter defaults: a small
 * GEMM is launch-bound, so a sync per iteration costs a large share of it; a big one is
 * GPU-bound, so the same sync is noise. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "gpu/gemm_op.h"
#include "gpu/kernel_timer.h"
#include "scenarios/validation.h"
#include "scenarios/variant_sync.h"
#include "kernels.h"

#define SAMPLES 16
#define TIMED_BATCH 32 /* GEMMs queued behind the waiting kernel for kernel_us */

static const char *const dtypes[] = {"fp16", "bf16", "fp32", NULL};

/* clang-format off */
#define GEMM_PARAMS(dim) {                                                                  \
    {"m", SB_PARAM_INT, dim, "rows of A and C", 1, 262144, NULL},                           \
    {"n", SB_PARAM_INT, dim, "columns of B and C", 1, 262144, NULL},                        \
    {"k", SB_PARAM_INT, dim, "columns of A, rows of B", 1, 262144, NULL},                   \
    {"dtype", SB_PARAM_ENUM, "fp16", "element type (fp32 accumulation)", 0, 0, dtypes},     \
    {"tf32", SB_PARAM_BOOL, "0", "fp32 only: allow TF32 tensor cores", 0, 1, NULL},         \
    {NULL, 0, NULL, NULL, 0, 0, NULL},                                                      \
}
/* clang-format on */

static const sb_param_def small_params[] = GEMM_PARAMS("512");
static const sb_param_def big_params[] = GEMM_PARAMS("8192");

/* a variant's mode is the sync policy it applies after every iteration */
static const sb_variant variants[] = {
    {"async", "enqueue every iteration, one sync at the end", 0, NULL, SB_SYNC_NONE},
    {"sync-device", "cudaDeviceSynchronize after every iteration", 1, "async", SB_SYNC_DEVICE},
    {"sync-stream", "cudaStreamSynchronize after every iteration", 1, "async", SB_SYNC_STREAM},
    {"sync-event", "cudaEventRecord + cudaEventSynchronize after every iteration", 1, "async",
     SB_SYNC_EVENT},
    {"sync-readback", "blocking 4-byte cudaMemcpy into pageable memory after every iteration", 1,
     "async", SB_SYNC_READBACK},
    {"sync-item", "4-byte cudaMemcpyAsync into pinned memory + cudaStreamSynchronize (.item())", 1,
     "async", SB_SYNC_ITEM},
    {NULL, NULL, 0, NULL, 0},
};

static const sb_metric_def metrics[] = {
    {"wall_us_per_iter", "us", SB_LOWER, "wall µs/iter"},
    {"gpu_us_per_iter", "us", SB_LOWER, "GPU µs/iter"},
    {"overhead_us", "us", SB_LOWER, "overhead µs"},
    {"overhead_pct", "%", SB_LOWER, "overhead %"},
    {"kernel_us", "us", SB_LOWER, "kernel µs"},
    {"TFLOPs", "TFLOP/s", SB_HIGHER, "TFLOP/s"},
    {NULL, NULL, 0, NULL},
};

static const sb_delta_def delta = {"wall_us_per_iter", "overhead_us", "overhead_pct", 0};

typedef struct gemm_state {
    sb_gemm_op op;
    int tf32;
    cudaStream_t stream;
    cudaEvent_t ev_start, ev_stop;
    sb_kernel_timer timer;
    sb_variant_syncs syncs;
    float *gather_dev, *gather_host;
    float readback; /* pageable destination of sync-readback (sync-item's is pinned) */
    unsigned validations;
} gemm_state;

static int check(const sb_param_values *p, char *err, size_t n)
{
    if (sb_param(p, "tf32") && sb_param(p, "dtype") != SB_DTYPE_F32) {
        snprintf(err, n, "tf32=1 applies to dtype=fp32 only");
        return -1;
    }
    return 0;
}

static size_t gather_floats(long long k)
{
    return (size_t)SAMPLES * (2 * (size_t)k + 1);
}

static size_t device_bytes(const sb_param_values *p)
{
    return sb_gemm_op_bytes(sb_param(p, "m"), sb_param(p, "n"), sb_param(p, "k"),
                            (sb_dtype)sb_param(p, "dtype")) +
           gather_floats(sb_param(p, "k")) * sizeof(float);
}

static size_t host_bytes(const sb_param_values *p)
{
    return gather_floats(sb_param(p, "k")) * sizeof(float);
}

static int setup(sb_run *r)
{
    gemm_state *s = r->state;
    s->tf32 = (int)sb_run_param(r, "tf32");
    size_t gather = gather_floats(sb_run_param(r, "k")) * sizeof(float);
    sb_resources *res = &r->res;
    int rc;
    /* a blocking stream (not cudaStreamNonBlocking): the legacy default stream, which a plain
     * cudaMemcpy uses, then waits for it, as in a framework's default setup */
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamDefault)) ||
        (rc = sb_gemm_op_init(&s->op, res, (int)sb_run_param(r, "m"), (int)sb_run_param(r, "n"),
                              (int)sb_run_param(r, "k"), (sb_dtype)sb_run_param(r, "dtype"),
                              s->tf32, s->stream)) ||
        (rc = sb_get_device(res, &s->gather_dev, gather)) ||
        (rc = sb_get_host(res, &s->gather_host, gather)) ||
        (rc = sb_get_event(res, &s->ev_start, cudaEventDefault)) ||
        (rc = sb_get_event(res, &s->ev_stop, cudaEventDefault)) ||
        (rc = sb_kernel_timer_init(&s->timer, res, s->stream)))
        return rc;
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    gemm_state *s = r->state;
    const sb_sync *sync = NULL;
    int rc = sb_variant_sync(&s->syncs, r, s->stream, s->op.C, &s->readback, 4, &sync);
    if (rc)
        return rc;
    const long long iters = r->iters;

    double t0 = sb_now_us();
    SB_CUDA(cudaEventRecord(s->ev_start, s->stream));
    for (long long i = 0; i < iters; i++) {
        SB_CUBLAS(sb_gemm_op_run(&s->op));
        SB_CUDA(sb_sync_point(sync));
    }
    SB_CUDA(cudaEventRecord(s->ev_stop, s->stream));
    SB_CUDA(cudaEventSynchronize(s->ev_stop));
    double t1 = sb_now_us();
    float gpu_ms;
    SB_CUDA(cudaEventElapsedTime(&gpu_ms, s->ev_start, s->ev_stop));
    sb_record(rec, "wall_us_per_iter", (t1 - t0) / (double)iters);
    sb_record(rec, "gpu_us_per_iter", gpu_ms * 1e3 / (double)iters);

    /* the GEMM's own time: queued behind a waiting kernel, so no launch gaps */
    int batch = iters < TIMED_BATCH ? (int)iters : TIMED_BATCH;
    float kernel_ms;
    if ((rc = sb_kernel_timer_begin(&s->timer)) != 0)
        return rc;
    for (int i = 0; i < batch; i++)
        SB_CUBLAS(sb_gemm_op_run(&s->op));
    if ((rc = sb_kernel_timer_end(&s->timer, &kernel_ms)) != 0)
        return rc;
    double kernel_us = kernel_ms * 1e3 / batch;
    sb_record(rec, "kernel_us", kernel_us);
    sb_record(rec, "TFLOPs", sb_gemm_op_flops(&s->op) / (kernel_us * 1e-6) / 1e12);
    return 0;
}

/* Unit roundoff of the output type. */
static double unit_roundoff(sb_dtype dt)
{
    return dt == SB_DTYPE_F16 ? ldexp(1, -11) : dt == SB_DTYPE_BF16 ? ldexp(1, -8) : ldexp(1, -24);
}

static int validate(sb_run *r)
{
    gemm_state *s = r->state;
    const sb_gemm_op *op = &s->op;
    if (sb_fault("gemm-output")) /* test hook: a wrong result must be caught */
        SB_LAUNCH(
            sb_fill_uniform(op->C, op->dt, (size_t)op->m * op->n, 0xBAD, -1.0f, 1.0f, s->stream));

    /* sampled elements: the corners plus pseudo-random ones, different at every validation */
    sb_gemm_samples smp = {.count = SAMPLES};
    unsigned x = 2463534242u ^ (++s->validations * 2654435761u);
    for (int i = 0; i < SAMPLES; i++) {
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        smp.row[i] = i == 0 ? 0 : i == 1 ? op->m - 1 : (int)(x % (unsigned)op->m);
        x ^= x << 13, x ^= x >> 17, x ^= x << 5;
        smp.col[i] = i == 0 ? 0 : i == 1 ? op->n - 1 : (int)(x % (unsigned)op->n);
    }
    SB_LAUNCH(sb_gather_gemm_samples(op->A, op->B, op->C, op->dt, op->m, op->n, op->k, smp,
                                     s->gather_dev, s->stream));
    SB_CUDA(sb_read_back(s->gather_host, s->gather_dev, gather_floats(op->k) * sizeof(float),
                         s->stream));

    /* products of fp16/bf16 inputs are exact in fp32; TF32 rounds the inputs */
    double u_out = unit_roundoff(op->dt);
    double u_in = (op->dt == SB_DTYPE_F32 && s->tf32) ? ldexp(1, -11) : 0.0;
    double u_acc = ldexp(1, -23) * sqrt((double)op->k);
    for (int i = 0; i < SAMPLES; i++) {
        const float *a = s->gather_host + (size_t)i * (2 * (size_t)op->k + 1);
        const float *b = a + op->k;
        double ref = 0, mag = 0;
        for (int p = 0; p < op->k; p++) {
            ref += (double)a[p] * b[p];
            mag += fabs((double)a[p] * b[p]);
        }
        double got = a[2 * (size_t)op->k];
        double tol = 2 * u_out * fabs(ref) + (2 * u_in + u_acc) * mag + 1e-6;
        if (!(fabs(got - ref) <= tol)) /* NaN (poison left unwritten) fails too */
            return sb_invalid("C[%d,%d] = %g, CPU reference %g (tolerance %.3g)", smp.row[i],
                              smp.col[i], got, ref, tol);
    }
    /* re-poison: the next measurement cannot pass on this one's output */
    int rc = sb_gemm_op_poison(&s->op);
    if (!rc)
        SB_CUDA(cudaStreamSynchronize(s->stream));
    return rc;
}

#define GEMM_SCENARIO(var, scen_name, text, param_defs, iters, warmup)                             \
    SB_SCENARIO(var, scen_name, gemm_state, text, .params = param_defs, .metrics = metrics,        \
                .delta = &delta, .default_iters = iters, .warmup_s = warmup, .check = check,       \
                .device_bytes = device_bytes, .host_bytes = host_bytes, .validate = validate)

GEMM_SCENARIO(sb_small_gemm, "small-gemm",
              "512^3 fp16 cuBLAS GEMM: launch-bound, a sync per iteration is a large share",
              small_params, 1000, 0);
GEMM_SCENARIO(sb_big_gemm, "big-gemm",
              "8192^3 fp16 cuBLAS GEMM: GPU-bound, a sync per iteration is noise", big_params, 20,
              3.0);
