/* readback: what reading one value back to the host costs — `loss.item()`, `print(tensor)` —
 * with GPU work still pending, and with nothing pending. A blocking readback waits for every
 * kernel queued before it: with 1 ms of pending work it costs 1 ms, whatever the copy itself
 * costs. The pending work is a kernel that spins for exactly pending_us on the GPU's own clock
 * (or a big GEMM), then writes a marker value that the readback must return. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "gpu/gemm_op.h"
#include "gpu/sync.h"
#include "scenarios/scenario.h"
#include "scenarios/validation.h"
#include "kernels.h"

#define GEMM_DIM 8192 /* pending=gemm: one 8192^3 fp16 GEMM */

static const char *const pending_kinds[] = {"spin", "gemm", NULL};
enum { PENDING_SPIN, PENDING_GEMM };

static const sb_param_def params[] = {
    {"pending_us", SB_PARAM_INT, "1000", "pending=spin: GPU work queued before the readback", 1,
     10000000, NULL},
    {"pending", SB_PARAM_ENUM, "spin", "spin kernel, or an 8192^3 fp16 GEMM", 0, 0, pending_kinds},
    {"print_elems", SB_PARAM_INT, "16", "print variants: values read back and formatted", 1, 65536,
     NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};
/* a variant's mode: how the value comes back, and whether the pending work is synchronized
 * before the readback starts (IDLE) */
enum { RB_PAGEABLE = 0, RB_PINNED = 1, RB_PRINT = 2, IDLE = 4 };
#define HOW(mode) ((mode)&3)

static const sb_variant variants[] = {
    {"idle-pageable", "blocking 4-byte copy to pageable memory after a sync (nothing pending)", 0,
     NULL, RB_PAGEABLE | IDLE},
    {"pending-pageable", "blocking 4-byte copy to pageable memory with work pending (plain C)", 1,
     "idle-pageable", RB_PAGEABLE},
    {"idle-pinned", "cudaMemcpyAsync to pinned memory + stream sync, nothing pending", 0, NULL,
     RB_PINNED | IDLE},
    {"pending-pinned", "cudaMemcpyAsync to pinned memory + stream sync, work pending (.item())", 1,
     "idle-pinned", RB_PINNED},
    {"print-idle", "read back print_elems values and format them, nothing pending", 0, NULL,
     RB_PRINT | IDLE},
    {"print-pending", "read back print_elems values and format them (print(tensor)), work pending",
     1, "print-idle", RB_PRINT},
    {NULL, NULL, 0, NULL, 0},
};

static const sb_metric_def metrics[] = {
    {"readback_us", "us", SB_LOWER, "readback µs"},
    {"wait_us", "us", SB_LOWER, "wait µs"},
    {NULL, NULL, 0, NULL},
};

static const sb_delta_def delta = {"readback_us", "wait_us", NULL, 0};

typedef struct readback_state {
    cudaStream_t stream;
    int pending; /* PENDING_SPIN or PENDING_GEMM */
    unsigned long long pending_ns;
    int print_elems;
    float *marker;   /* device: written by the pending work */
    float *pageable; /* host, malloc */
    float *pinned;   /* host, cudaHostAlloc */
    char *text;      /* print variants: the formatted values */
    sb_gemm_op gemm; /* pending=gemm */
    unsigned seq;    /* marker value of the current iteration */
    sb_mismatch bad; /* readbacks that returned a stale value */
} readback_state;

static size_t device_bytes(const sb_param_values *p)
{
    size_t b = (size_t)sb_param(p, "print_elems") * sizeof(float);
    if (sb_param(p, "pending") == PENDING_GEMM)
        b += sb_gemm_op_bytes(GEMM_DIM, GEMM_DIM, GEMM_DIM, SB_DTYPE_F16);
    return b;
}

static size_t host_bytes(const sb_param_values *p)
{
    return (size_t)sb_param(p, "print_elems") * (2 * sizeof(float) + 16);
}

static int setup(sb_run *r)
{
    readback_state *s = r->state;
    s->pending = (int)sb_run_param(r, "pending");
    s->pending_ns = sb_run_param_ns(r, "pending_us");
    s->print_elems = (int)sb_run_param(r, "print_elems");
    size_t bytes = (size_t)s->print_elems * sizeof(float);
    sb_resources *res = &r->res;
    int rc;
    /* a blocking stream: a plain cudaMemcpy (legacy default stream) waits for it, as
     * `.item()` waits for the work queued on PyTorch's current stream */
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamDefault)) ||
        (rc = sb_get_device(res, &s->marker, bytes)) ||
        (rc = sb_get_pinned(res, &s->pinned, bytes, cudaHostAllocDefault)) ||
        (rc = sb_get_host(res, &s->pageable, bytes)) ||
        (rc = sb_get_host(res, &s->text, (size_t)s->print_elems * 16 + 64)))
        return rc;
    if (s->pending == PENDING_GEMM && (rc = sb_gemm_op_init(&s->gemm, res, GEMM_DIM, GEMM_DIM,
                                                            GEMM_DIM, SB_DTYPE_F16, 0, s->stream)))
        return rc;
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

/* Queues the pending work; its last kernel writes marker[i] = seq + i. */
static int enqueue_pending(readback_state *s, int n)
{
    unsigned long long ns = s->pending_ns;
    if (s->pending == PENDING_GEMM) {
        SB_CUBLAS(sb_gemm_op_run(&s->gemm));
        ns = 0;
    }
    SB_LAUNCH(sb_launch_spin_then_mark(ns, s->marker, n, (float)s->seq, s->stream));
    return 0;
}

/* torch-style text of n floats, as print(tensor) produces it */
static void format_values(char *out, const float *v, int n)
{
    char *p = out + sprintf(out, "tensor([");
    for (int i = 0; i < n; i++)
        p += sprintf(p, "%s%.4f", i ? ", " : "", v[i]);
    sprintf(p, "], device='cuda:0')");
}

static int read_back(readback_state *s, int mode, int n, const float **got)
{
    switch (mode) {
    case RB_PAGEABLE:
    case RB_PRINT:
        /* synchronous copy into pageable memory: the implicit sync of a plain C readback */
        SB_CUDA(
            cudaMemcpy(s->pageable, s->marker, (size_t)n * sizeof(float), cudaMemcpyDeviceToHost));
        if (mode == RB_PRINT)
            format_values(s->text, s->pageable, n);
        *got = s->pageable;
        return 0;
    default:
        SB_CUDA(sb_read_back(s->pinned, s->marker, sizeof(float), s->stream));
        *got = s->pinned;
        return 0;
    }
}

static void stale(readback_state *s, float got, float want)
{
    sb_mismatch_note(&s->bad,
                     "readbacks returned a stale value (got %g, expected %g): the copy did not "
                     "wait for the pending work",
                     got, want);
}

static int measure(sb_run *r, sb_recorder *rec)
{
    readback_state *s = r->state;
    const int mode = HOW(sb_run_mode(r)), idle = sb_run_mode(r) & IDLE;
    const int n = mode == RB_PRINT ? s->print_elems : 1;
    double total = 0;
    for (long long i = 0; i < r->iters; i++) {
        s->seq = (s->seq + 1) & 0xFFFFF; /* exact in a float */
        int rc = enqueue_pending(s, n);
        if (rc)
            return rc;
        if (idle)
            SB_CUDA(cudaStreamSynchronize(s->stream));
        const float *got = NULL;
        double t0 = sb_now_us();
        rc = read_back(s, mode, n, &got);
        double t1 = sb_now_us();
        if (rc)
            return rc;
        total += t1 - t0;
        /* the value must be the one the pending work wrote: the readback waited for it */
        for (int j = 0; j < n; j++) {
            if (got[j] != (float)s->seq + (float)j)
                stale(s, got[j], (float)s->seq + (float)j);
        }
    }
    sb_record(rec, "readback_us", total / (double)r->iters);
    return 0;
}

static int validate(sb_run *r)
{
    readback_state *s = r->state;
    if (sb_fault("readback-value")) /* test hook */
        stale(s, -1, (float)s->seq);
    if (s->bad.count)
        return sb_mismatch_report(&s->bad);
    /* poison the marker so that the next measurement must write it again */
    return sb_memset_sync(s->marker, 0xFF, (size_t)s->print_elems * sizeof(float), s->stream);
}

SB_SCENARIO(sb_readback, "readback", readback_state,
            ".item() and print() with GPU work pending vs after a sync, pageable vs pinned",
            .params = params, .metrics = metrics, .delta = &delta, .default_iters = 20,
            .device_bytes = device_bytes, .host_bytes = host_bytes, .validate = validate);
