/* Stream compaction for the dynamic-shape scenario: the selected elements of an input, in their
 * input order (what `x[mask]` and `nonzero` produce), in three kernels: count the selected
 * elements of each tile, scan the tile counts into offsets and the total, scatter each tile's
 * selected elements to its offset. The scan makes the result order-preserving without atomics.
 * Every launcher enqueues on the given stream and returns cudaGetLastError() of the launch. */
#ifndef SB_COMPACT_H
#define SB_COMPACT_H

#include <stddef.h>
#include <stdint.h>

#include "kernels.h" /* SB_HOST_DEVICE, cudaError_t, cudaStream_t */

/* Elements per tile (one block of the count and scatter kernels). */
#define SB_COMPACT_TILE 2048
/* What the fixed-shape compaction writes past the last selected element (nonzero_static's
 * fill_value = -1): never an input value, which are below 2^31. */
#define SB_COMPACT_FILL 0xFFFFFFFFu

#ifdef __cplusplus
extern "C" {
#endif

/* Tiles of n elements: the length of the counts and offsets arrays. */
size_t sb_compact_tiles(size_t n);

/* in[i] = sb_compact_input(seed, i) for i < n. */
cudaError_t sb_compact_fill(uint32_t *in, size_t n, uint32_t seed, cudaStream_t s);
/* counts[t] = selected elements of tile t, for every tile. */
cudaError_t sb_compact_count(const uint32_t *in, size_t n, int density, uint32_t *counts,
                             cudaStream_t s);
/* offsets[t] = counts[0] + ... + counts[t - 1]; *total = every count's sum (one block). */
cudaError_t sb_compact_scan(const uint32_t *counts, size_t tiles, uint32_t *offsets,
                            uint32_t *total, cudaStream_t s);
/* out[offsets[t] + rank] = the selected elements of tile t in input order, where the position
 * is below out_len (the output's size as the host knows it). With `pad`, out[i] =
 * SB_COMPACT_FILL for *total <= i < n as well: a full-size output whose length stays on the
 * GPU. */
cudaError_t sb_compact_scatter(const uint32_t *in, size_t n, int density, const uint32_t *offsets,
                               const uint32_t *total, uint32_t out_len, int pad, uint32_t *out,
                               cudaStream_t s);

#ifdef __cplusplus
}
#endif

/* The input: non-negative 31-bit values from a hash of (seed, index). */
static inline SB_HOST_DEVICE uint32_t sb_compact_input(uint32_t seed, size_t i)
{
    uint32_t x = (uint32_t)i * 0x9E3779B9u + seed;
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x & 0x7FFFFFFFu;
}

/* Whether an element is selected: about `density` percent of the inputs are. */
static inline SB_HOST_DEVICE int sb_compact_selected(uint32_t x, int density)
{
    return (int)(x % 100u) < density;
}

#endif
