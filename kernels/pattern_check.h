/* A kernel that checks, on the GPU, that a buffer holds sb_pattern_word(seed, i) (kernels.h)
 * word by word: what alloc and small-h2d use to validate every step's data without copying it
 * back. The counts accumulate on the device until the scenario reads them in its validate. */
#ifndef SB_PATTERN_CHECK_H
#define SB_PATTERN_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include <cuda_runtime.h>

#ifdef __cplusplus
extern "C" {
#endif

/* counts[0] += the number of words i < n with words[i] != sb_pattern_word(seed, i);
 * counts[1] += 1 (the checks that ran, so that a check that never ran is caught too). */
cudaError_t sb_launch_check_pattern(const uint32_t *words, size_t n, uint32_t seed,
                                    unsigned long long *counts, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
