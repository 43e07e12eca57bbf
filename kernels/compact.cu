#include "compact.h"

namespace
{

const int THREADS = 256;                     /* count and scatter blocks */
const int ITEMS = SB_COMPACT_TILE / THREADS; /* elements per thread, strided by THREADS */
const int WARPS = THREADS / 32;
const int SCAN_THREADS = 1024;
const unsigned FULL = 0xFFFFFFFFu;

__global__ void fill(uint32_t *in, size_t n, uint32_t seed)
{
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        in[i] = sb_compact_input(seed, i);
}

/* One block per tile; every thread runs every round (__syncthreads_count needs them all). */
__global__ void count_tiles(const uint32_t *in, size_t n, int density, uint32_t *counts)
{
    size_t base = (size_t)blockIdx.x * SB_COMPACT_TILE;
    uint32_t c = 0;
    for (int k = 0; k < ITEMS; k++) {
        size_t i = base + (size_t)k * THREADS + threadIdx.x;
        int sel = i < n && sb_compact_selected(in[i], density);
        c += (uint32_t)__syncthreads_count(sel);
    }
    if (threadIdx.x == 0)
        counts[blockIdx.x] = c;
}

/* Inclusive sum over a warp. */
__device__ __forceinline__ uint32_t warp_inclusive(uint32_t x, int lane)
{
    for (int d = 1; d < 32; d *= 2) {
        uint32_t y = __shfl_up_sync(FULL, x, d);
        if (lane >= d)
            x += y;
    }
    return x;
}

/* One block of SCAN_THREADS: exclusive scan of the tile counts, 1024 at a time with a carry. */
__global__ void scan_tiles(const uint32_t *counts, size_t tiles, uint32_t *offsets, uint32_t *total)
{
    __shared__ uint32_t warp_sum[SCAN_THREADS / 32];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    uint32_t carry = 0;
    for (size_t base = 0; base < tiles; base += SCAN_THREADS) {
        size_t i = base + threadIdx.x;
        uint32_t v = i < tiles ? counts[i] : 0;
        uint32_t incl = warp_inclusive(v, lane);
        if (lane == 31)
            warp_sum[warp] = incl;
        __syncthreads();
        if (warp == 0)
            warp_sum[lane] = warp_inclusive(warp_sum[lane], lane);
        __syncthreads();
        if (i < tiles)
            offsets[i] = carry + incl - v + (warp ? warp_sum[warp - 1] : 0);
        carry += warp_sum[SCAN_THREADS / 32 - 1];
        __syncthreads(); /* warp_sum is rewritten by the next round */
    }
    if (threadIdx.x == 0)
        *total = carry;
}

/* One block per tile. Round k handles elements base + k * THREADS + thread: a warp ballot ranks
 * the selected ones inside a warp, the warps' counts (in shared memory) rank the warps, and
 * `pos` carries the tile's position from round to round: input order is kept. */
__global__ void scatter(const uint32_t *in, size_t n, int density, const uint32_t *offsets,
                        const uint32_t *total, uint32_t out_len, int pad, uint32_t *out)
{
    __shared__ uint32_t warp_count[WARPS];
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    const size_t base = (size_t)blockIdx.x * SB_COMPACT_TILE;
    uint32_t pos = offsets[blockIdx.x];
    for (int k = 0; k < ITEMS; k++) {
        size_t i = base + (size_t)k * THREADS + threadIdx.x;
        uint32_t x = i < n ? in[i] : 0;
        int sel = i < n && sb_compact_selected(x, density);
        uint32_t ballot = __ballot_sync(FULL, sel);
        if (lane == 0)
            warp_count[warp] = (uint32_t)__popc(ballot);
        __syncthreads();
        uint32_t before = 0, all = 0;
        for (int w = 0; w < WARPS; w++) {
            uint32_t c = warp_count[w];
            before += w < warp ? c : 0;
            all += c;
        }
        uint32_t r = pos + before + (uint32_t)__popc(ballot & ((1u << lane) - 1u));
        if (sel && r < out_len)
            out[r] = x;
        pos += all;
        __syncthreads(); /* warp_count is rewritten by the next round */
    }
    if (pad) {
        size_t t = *total;
        for (int k = 0; k < ITEMS; k++) {
            size_t i = base + (size_t)k * THREADS + threadIdx.x;
            if (i < n && i >= t)
                out[i] = SB_COMPACT_FILL;
        }
    }
}

} // namespace

extern "C" size_t sb_compact_tiles(size_t n)
{
    return (n + SB_COMPACT_TILE - 1) / SB_COMPACT_TILE;
}

extern "C" cudaError_t sb_compact_fill(uint32_t *in, size_t n, uint32_t seed, cudaStream_t s)
{
    size_t want = (n + THREADS - 1) / THREADS;
    int blocks = (int)(want < 4096 ? (want ? want : 1) : 4096);
    fill<<<blocks, THREADS, 0, s>>>(in, n, seed);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_compact_count(const uint32_t *in, size_t n, int density, uint32_t *counts,
                                        cudaStream_t s)
{
    size_t tiles = sb_compact_tiles(n);
    if (tiles < 1 || tiles > 0x7FFFFFFF)
        return cudaErrorInvalidValue;
    count_tiles<<<(unsigned)tiles, THREADS, 0, s>>>(in, n, density, counts);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_compact_scan(const uint32_t *counts, size_t tiles, uint32_t *offsets,
                                       uint32_t *total, cudaStream_t s)
{
    scan_tiles<<<1, SCAN_THREADS, 0, s>>>(counts, tiles, offsets, total);
    return cudaGetLastError();
}

extern "C" cudaError_t sb_compact_scatter(const uint32_t *in, size_t n, int density,
                                          const uint32_t *offsets, const uint32_t *total,
                                          uint32_t out_len, int pad, uint32_t *out, cudaStream_t s)
{
    size_t tiles = sb_compact_tiles(n);
    if (tiles < 1 || tiles > 0x7FFFFFFF)
        return cudaErrorInvalidValue;
    scatter<<<(unsigned)tiles, THREADS, 0, s>>>(in, n, density, offsets, total, out_len, pad, out);
    return cudaGetLastError();
}
