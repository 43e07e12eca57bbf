/* The device side of the environment record, and what the run asks the open device. */
#ifndef SB_DEVICE_H
#define SB_DEVICE_H

#include <stddef.h>

#include "base/env.h"

/* Visible CUDA devices into *count: 0, or SB_EXIT_NODEV recorded with one message for each
 * cause, whoever asks first (no driver: libcuda.so.1 not found; else cudart's error). */
int sb_cuda_device_count(int *count);
/* Selects the device: exit 3 without a usable driver/device, exit 2 for an ordinal out of
 * range. Then fills the device part of `e` (properties, versions, NVML; cuBLAS's version only
 * if it can be loaded). */
int sb_env_open_device(sb_env *e, int device);
/* Free memory on the current device (cudaMemGetInfo); 0, or SB_EXIT_FAIL with the message. */
int sb_device_free_memory(size_t *free_b);

#endif
