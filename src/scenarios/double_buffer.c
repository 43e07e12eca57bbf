/* double-buffer: feeding a GPU from host memory chunk by chunk, each chunk copied in and then
 * processed by a kernel. Done serially, the copy engine and the SMs take turns; with two
 * device buffers, two streams and events for the dependencies, chunk i+1 is copied while
 * chunk i is processed, and the whole takes about max(copy, compute) instead of their sum. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "scenarios/scenario.h"
#include "scenarios/validation.h"
#include "kernels.h"

static const sb_param_def params[] = {
    {"bytes", SB_PARAM_SIZE, "400MB", "total bytes streamed (floats)", 4, 64LL << 30, NULL},
    {"chunks", SB_PARAM_INT, "10", "steps the data is split into", 1, 4096, NULL},
    {"compute_us", SB_PARAM_INT, "0",
     "kernel time per chunk; 0: as long as copying one chunk (balanced)", 0, 10000000, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};
/* a variant's mode: the loop it runs */
enum { SERIAL_PAGEABLE, SERIAL_PINNED, DOUBLE_BUFFERED };

static const sb_variant variants[] = {
    {"serial-pageable", "one stream, pageable host buffer, sync after every step", 1, NULL,
     SERIAL_PAGEABLE},
    {"serial-pinned", "one stream, pinned host buffer, no sync inside the loop", 0, NULL,
     SERIAL_PINNED},
    {"double-buffered",
     "copy and compute streams, two device buffers, pinned, events for the dependencies", 0, NULL,
     DOUBLE_BUFFERED},
    {NULL, NULL, 0, NULL, 0},
};

static const sb_metric_def metrics[] = {
    {"total_ms", "ms", SB_LOWER, "total ms"},         {"copy_ms", "ms", SB_LOWER, "copy ms"},
    {"compute_ms", "ms", SB_LOWER, "compute ms"},     {"ideal_ms", "ms", SB_LOWER, "ideal ms"},
    {"efficiency", "ratio", SB_HIGHER, "efficiency"}, {NULL, NULL, 0, NULL},
};

typedef struct db_state {
    size_t bytes, chunk_bytes, chunk_floats;
    int chunks, blocks;
    unsigned long long compute_ns;
    cudaStream_t copy_stream, compute_stream;
    float *host_pageable, *host_pinned;
    float *buf[2];
    double *sums, *sums_host, *expected;
    cudaEvent_t *copied, *computed; /* per chunk */
} db_state;

static int check(const sb_param_values *p, char *err, size_t n)
{
    long long bytes = sb_param(p, "bytes"), chunks = sb_param(p, "chunks");
    if (bytes % (4 * chunks)) {
        snprintf(err, n, "bytes=%lld does not divide into chunks=%lld of whole floats", bytes,
                 chunks);
        return -1;
    }
    return 0;
}

static size_t device_bytes(const sb_param_values *p)
{
    long long chunks = sb_param(p, "chunks");
    return 2 * (size_t)(sb_param(p, "bytes") / chunks) + (size_t)chunks * sizeof(double);
}

static size_t host_bytes(const sb_param_values *p)
{
    return 2 * (size_t)sb_param(p, "bytes");
}

/* Values whose sums are exact in double, so the checksum can be compared for equality. */
static float value_at(size_t i)
{
    return (float)(i % 1000) * 0.25f;
}

/* GPU time of copying one chunk from pinned memory: the balanced compute time. */
static int measure_chunk_copy_ns(db_state *s, sb_resources *res, unsigned long long *ns)
{
    cudaEvent_t a, b;
    int rc = sb_get_event(res, &a, cudaEventDefault);
    if (!rc)
        rc = sb_get_event(res, &b, cudaEventDefault);
    if (rc)
        return rc;
    float best = 1e30f;
    for (int i = 0; i < 5; i++) {
        SB_CUDA(cudaEventRecord(a, s->copy_stream));
        SB_CUDA(cudaMemcpyAsync(s->buf[0], s->host_pinned, s->chunk_bytes, cudaMemcpyHostToDevice,
                                s->copy_stream));
        SB_CUDA(cudaEventRecord(b, s->copy_stream));
        SB_CUDA(cudaEventSynchronize(b));
        float ms;
        SB_CUDA(cudaEventElapsedTime(&ms, a, b));
        if (i && ms < best) /* the first one warms up */
            best = ms;
    }
    *ns = (unsigned long long)(best * 1e6f);
    return 0;
}

static int setup(sb_run *r)
{
    db_state *s = r->state;
    s->bytes = (size_t)sb_run_param(r, "bytes");
    s->chunks = (int)sb_run_param(r, "chunks");
    s->chunk_bytes = s->bytes / (size_t)s->chunks;
    s->chunk_floats = s->chunk_bytes / sizeof(float);
    int dev, sms;
    SB_CUDA(cudaGetDevice(&dev));
    SB_CUDA(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    s->blocks = 2 * sms; /* one wave: the blocks start together, so the spin sets the time */
    size_t per_chunk = (size_t)s->chunks;
    sb_resources *res = &r->res;
    int rc;
    if ((rc = sb_get_stream(res, &s->copy_stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_stream(res, &s->compute_stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->buf[0], s->chunk_bytes)) ||
        (rc = sb_get_device(res, &s->buf[1], s->chunk_bytes)) ||
        (rc = sb_get_device(res, &s->sums, per_chunk * sizeof(double))) ||
        (rc = sb_get_pinned(res, &s->host_pinned, s->bytes, cudaHostAllocDefault)) ||
        (rc = sb_get_host(res, &s->host_pageable, s->bytes)) ||
        (rc = sb_get_host(res, &s->sums_host, per_chunk * sizeof(double))) ||
        (rc = sb_get_host(res, &s->expected, per_chunk * sizeof(double))) ||
        (rc = sb_get_host(res, &s->copied, per_chunk * sizeof(cudaEvent_t))) ||
        (rc = sb_get_host(res, &s->computed, per_chunk * sizeof(cudaEvent_t))))
        return rc;
    for (int c = 0; c < s->chunks; c++)
        if ((rc = sb_get_event(res, &s->copied[c], cudaEventDisableTiming)) ||
            (rc = sb_get_event(res, &s->computed[c], cudaEventDisableTiming)))
            return rc;
    size_t n = s->bytes / sizeof(float);
    for (size_t i = 0; i < n; i++) {
        float v = value_at(i);
        s->host_pageable[i] = s->host_pinned[i] = v;
        s->expected[i / s->chunk_floats] += v;
    }
    if (sb_run_param(r, "compute_us"))
        s->compute_ns = (unsigned long long)sb_run_param(r, "compute_us") * 1000ull;
    else
        return measure_chunk_copy_ns(s, res, &s->compute_ns);
    return 0;
}

static const float *source(const db_state *s, int variant, int c)
{
    const float *base = variant == SERIAL_PAGEABLE ? s->host_pageable : s->host_pinned;
    return base + (size_t)c * s->chunk_floats;
}

static int copy_chunk(db_state *s, int variant, int c, float *dst)
{
    SB_CUDA(cudaMemcpyAsync(dst, source(s, variant, c), s->chunk_bytes, cudaMemcpyHostToDevice,
                            s->copy_stream));
    return 0;
}

static int compute_chunk(db_state *s, int c, const float *src, cudaStream_t stream)
{
    SB_LAUNCH(
        sb_launch_sum_for(src, s->chunk_floats, s->compute_ns, &s->sums[c], s->blocks, stream));
    return 0;
}

static int pipeline(db_state *s, int variant)
{
    int rc = 0;
    for (int c = 0; c < s->chunks && !rc; c++) {
        if (variant == DOUBLE_BUFFERED) {
            float *buf = s->buf[c % 2];
            if (c >= 2) /* the buffer is free once chunk c-2 has been processed */
                SB_CUDA(cudaStreamWaitEvent(s->copy_stream, s->computed[c - 2], 0));
            rc = copy_chunk(s, variant, c, buf);
            if (rc)
                break;
            SB_CUDA(cudaEventRecord(s->copied[c], s->copy_stream));
            SB_CUDA(cudaStreamWaitEvent(s->compute_stream, s->copied[c], 0));
            rc = compute_chunk(s, c, buf, s->compute_stream);
            SB_CUDA(cudaEventRecord(s->computed[c], s->compute_stream));
        } else {
            rc = copy_chunk(s, variant, c, s->buf[0]);
            if (!rc)
                rc = compute_chunk(s, c, s->buf[0], s->copy_stream);
            if (!rc && variant == SERIAL_PAGEABLE)
                SB_CUDA(cudaStreamSynchronize(s->copy_stream));
        }
    }
    if (rc)
        return rc;
    SB_CUDA(cudaStreamSynchronize(s->copy_stream));
    SB_CUDA(cudaStreamSynchronize(s->compute_stream));
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    db_state *s = r->state;
    const int v = sb_run_mode(r); /* the loop this variant runs */
    double copy_us = 0, compute_us = 0, total_us = 0;
    int rc = 0;
    for (long long it = 0; it < r->iters && !rc; it++) {
        /* the copies alone, from this variant's host memory */
        double t0 = sb_now_us();
        for (int c = 0; c < s->chunks && !rc; c++)
            rc = copy_chunk(s, v, c, s->buf[c % 2]);
        SB_CUDA(cudaStreamSynchronize(s->copy_stream));
        double t1 = sb_now_us();
        /* the kernels alone */
        for (int c = 0; c < s->chunks && !rc; c++)
            rc = compute_chunk(s, c, s->buf[c % 2], s->compute_stream);
        SB_CUDA(cudaStreamSynchronize(s->compute_stream));
        double t2 = sb_now_us();
        /* the pipeline, on poisoned buffers and zeroed sums, so its checksum is its own */
        SB_CUDA(cudaMemsetAsync(s->buf[0], 0xFF, s->chunk_bytes, s->copy_stream));
        SB_CUDA(cudaMemsetAsync(s->buf[1], 0xFF, s->chunk_bytes, s->copy_stream));
        SB_CUDA(cudaMemsetAsync(s->sums, 0, (size_t)s->chunks * sizeof(double), s->copy_stream));
        SB_CUDA(cudaStreamSynchronize(s->copy_stream));
        double t3 = sb_now_us();
        if (!rc)
            rc = pipeline(s, v);
        double t4 = sb_now_us();
        copy_us += t1 - t0;
        compute_us += t2 - t1;
        total_us += t4 - t3;
    }
    if (rc)
        return rc;
    double n = (double)r->iters;
    double copy_ms = copy_us / n / 1e3, compute_ms = compute_us / n / 1e3;
    double total_ms = total_us / n / 1e3;
    double ideal_ms = copy_ms > compute_ms ? copy_ms : compute_ms;
    sb_record(rec, "total_ms", total_ms);
    sb_record(rec, "copy_ms", copy_ms);
    sb_record(rec, "compute_ms", compute_ms);
    sb_record(rec, "ideal_ms", ideal_ms);
    sb_record(rec, "efficiency", ideal_ms / total_ms);
    return 0;
}

/* The last pipeline's per-chunk sums against the CPU's: every chunk copied and processed. */
static int validate(sb_run *r)
{
    db_state *s = r->state;
    SB_CUDA(cudaMemcpy(s->sums_host, s->sums, (size_t)s->chunks * sizeof(double),
                       cudaMemcpyDeviceToHost));
    if (sb_fault("pipeline-sum")) /* test hook: a lost chunk must be caught */
        s->sums_host[s->chunks - 1] = 0;
    for (int c = 0; c < s->chunks; c++)
        if (s->sums_host[c] != s->expected[c])
            return sb_invalid("checksum of chunk %d is %.17g, expected %.17g", c, s->sums_host[c],
                              s->expected[c]);
    return 0;
}

SB_SCENARIO(sb_double_buffer, "double-buffer", db_state,
            "stream chunks host->device and process them: serial vs copy/compute overlap",
            .params = params, .metrics = metrics, .default_iters = 1, .check = check,
            .device_bytes = device_bytes, .host_bytes = host_bytes, .validate = validate);
