/* dynamic-shape: an output whose size depends on the data, as `x[mask]`, `nonzero` and
 * `unique` produce. To allocate an output of the right size the host must know the size, so
 * these operations count on the GPU, read the count back (a sync), size the output and launch
 * the compaction: every such call drains the GPU's queue. Keeping the shape fixed (a full-size
 * output, padded past the last selected element, with the count kept on the GPU, as
 * `nonzero_static` does) needs no readback: the next kernels take the count from GPU memory.
 * Both ways run the same three kernels (count per tile, scan, scatter); the compaction keeps
 * the input order. */
#include <stdio.h>

#include "base/clock.h"
#include "base/fault.h"
#include "gpu/cuda_check.h"
#include "gpu/sync.h"
#include "scenarios/fixes.h"
#include "scenarios/validation.h"
#include "compact.h"

#define INPUT_SEED 0x5EEDu
#define POISON 0xFEFEFEFEu /* neither an input value (< 2^31) nor SB_COMPACT_FILL */

static const sb_param_def params[] = {
    {"n", SB_PARAM_INT, "1048576", "input elements", 1, 1LL << 28, NULL},
    {"density", SB_PARAM_INT, "50", "percent of the elements selected", 0, 100, NULL},
    {NULL, 0, NULL, NULL, 0, 0, NULL},
};
enum { COUNT_READBACK, FIXED_SHAPE };

static const sb_variant variants[] = {
    {"count-readback", "count on the GPU, read the count back, size the output, compact", 1, NULL,
     COUNT_READBACK},
    {"fixed-shape", "compact into a full-size padded output, the count stays on the GPU", 0,
     "count-readback", FIXED_SHAPE},
    {NULL, NULL, 0, NULL, 0},
};

typedef struct shape_state {
    cudaStream_t stream;
    size_t n, tiles;
    int density;
    uint32_t *in, *out;         /* device, n each */
    uint32_t *counts, *offsets; /* device, one per tile */
    uint32_t *total;            /* device: the count */
    uint32_t *total_h;          /* pinned */
    uint32_t *expected;         /* host: the CPU's selection, in order */
    uint32_t expected_count;
    uint32_t *got;   /* host: validate's copy of the output */
    int last_mode;   /* the variant that wrote the output last */
    sb_mismatch bad; /* counts read back in the measurement that were wrong */
} shape_state;

static size_t device_bytes(const sb_param_values *p)
{
    size_t n = (size_t)sb_param(p, "n");
    return 2 * n * sizeof(uint32_t) + 2 * sb_compact_tiles(n) * sizeof(uint32_t) + 64;
}

static size_t host_bytes(const sb_param_values *p)
{
    return 2 * (size_t)sb_param(p, "n") * sizeof(uint32_t);
}

/* About 3 ms: ~30 us of launches and readback, plus 12 bytes per element at ~2.5 TB/s. */
static long long iters_for(const sb_param_values *p)
{
    return sb_fix_steps(30.0 + (double)sb_param(p, "n") / 200000.0, 1000);
}

static int setup(sb_run *r)
{
    shape_state *s = r->state;
    s->n = (size_t)sb_run_param(r, "n");
    s->density = (int)sb_run_param(r, "density");
    s->tiles = sb_compact_tiles(s->n);
    size_t bytes = s->n * sizeof(uint32_t), tile_bytes = s->tiles * sizeof(uint32_t);
    sb_resources *res = &r->res;
    int rc;
    if ((rc = sb_get_stream(res, &s->stream, cudaStreamNonBlocking)) ||
        (rc = sb_get_device(res, &s->in, bytes)) || (rc = sb_get_device(res, &s->out, bytes)) ||
        (rc = sb_get_device(res, &s->counts, tile_bytes)) ||
        (rc = sb_get_device(res, &s->offsets, tile_bytes)) ||
        (rc = sb_get_device(res, &s->total, sizeof(uint32_t))) ||
        (rc = sb_get_pinned(res, &s->total_h, sizeof(uint32_t), cudaHostAllocDefault)) ||
        (rc = sb_get_host(res, &s->expected, bytes)) || (rc = sb_get_host(res, &s->got, bytes)))
        return rc;
    SB_LAUNCH(sb_compact_fill(s->in, s->n, INPUT_SEED, s->stream));
    SB_CUDA(cudaMemsetAsync(s->out, 0xFE, bytes, s->stream));
    SB_CUDA(cudaMemsetAsync(s->total, 0xFF, sizeof(uint32_t), s->stream));
    /* the CPU's selection, while the GPU fills the input */
    uint32_t c = 0;
    for (size_t i = 0; i < s->n; i++) {
        uint32_t x = sb_compact_input(INPUT_SEED, i);
        if (sb_compact_selected(x, s->density))
            s->expected[c++] = x;
    }
    s->expected_count = c;
    SB_CUDA(cudaStreamSynchronize(s->stream));
    return 0;
}

static int measure(sb_run *r, sb_recorder *rec)
{
    shape_state *s = r->state;
    const int mode = sb_run_mode(r);
    sb_fix_timer t = sb_fix_start();
    for (long long i = 0; i < r->iters; i++) {
        SB_LAUNCH(sb_compact_count(s->in, s->n, s->density, s->counts, s->stream));
        SB_LAUNCH(sb_compact_scan(s->counts, s->tiles, s->offsets, s->total, s->stream));
        if (mode == COUNT_READBACK) {
            /* the output's size on the host: x[mask].shape[0] */
            SB_CUDA(sb_read_back(s->total_h, s->total, sizeof(uint32_t), s->stream));
            t.syncs++;
            uint32_t count = *s->total_h;
            if (count != s->expected_count)
                sb_mismatch_note(&s->bad, "counts read back were wrong (got %u, expected %u)",
                                 count, s->expected_count);
            SB_LAUNCH(sb_compact_scatter(s->in, s->n, s->density, s->offsets, s->total, count, 0,
                                         s->out, s->stream));
        } else {
            SB_LAUNCH(sb_compact_scatter(s->in, s->n, s->density, s->offsets, s->total,
                                         (uint32_t)s->n, 1, s->out, s->stream));
        }
    }
    /* the last step's compaction is still queued either way */
    SB_CUDA(cudaStreamSynchronize(s->stream));
    t.syncs++;
    sb_fix_record(rec, &t, sb_now_us(), r->iters);
    s->last_mode = mode;
    return 0;
}

/* The count and the compacted elements against the CPU's selection of the same input, in
 * order; past the count, fixed-shape's padding, or for count-readback nothing it wrote (only
 * the poison, or the padding that fixed-shape, paired with it, left). */
static int validate(sb_run *r)
{
    shape_state *s = r->state;
    if (s->bad.count)
        return sb_mismatch_report(&s->bad);
    SB_CUDA(
        cudaMemcpyAsync(s->total_h, s->total, sizeof(uint32_t), cudaMemcpyDeviceToHost, s->stream));
    SB_CUDA(sb_read_back(s->got, s->out, s->n * sizeof(uint32_t), s->stream));
    uint32_t count = *s->total_h;
    if (sb_fault("compact-output")) /* test hook: a wrong element (the padding if none) */
        s->got[s->expected_count / 2] ^= 1u;
    if (count != s->expected_count)
        return sb_invalid("the GPU counted %u selected elements, the CPU %u", count,
                          s->expected_count);
    for (size_t i = 0; i < s->n; i++) {
        uint32_t got = s->got[i];
        int ok = i < count                     ? got == s->expected[i]
                 : s->last_mode == FIXED_SHAPE ? got == SB_COMPACT_FILL
                                               : got == POISON || got == SB_COMPACT_FILL;
        if (!ok)
            return sb_invalid("output element %zu of %zu (count %u) is 0x%08x, expected 0x%08x", i,
                              s->n, count, got,
                              i < count                     ? s->expected[i]
                              : s->last_mode == FIXED_SHAPE ? SB_COMPACT_FILL
                                                            : POISON);
    }
    /* poison: the next measurement must write the output and the count again */
    SB_CUDA(cudaMemsetAsync(s->out, 0xFE, s->n * sizeof(uint32_t), s->stream));
    return sb_memset_sync(s->total, 0xFF, sizeof(uint32_t), s->stream);
}

SB_SCENARIO(sb_dynamic_shape, "dynamic-shape", shape_state,
            "a data-dependent output size (x[mask], nonzero): count readback vs fixed shape",
            .params = params, .metrics = sb_fix_metrics, .delta = &sb_fix_delta,
            .default_iters = 85, .iters_for = iters_for, .device_bytes = device_bytes,
            .host_bytes = host_bytes, .validate = validate);
