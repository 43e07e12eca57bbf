#include "gpu/device.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "base/nvml.h"
#include "gpu/cublas_api.h"
#include "gpu/cuda_check.h"

/* cuBLAS's version if it can be loaded; a run without GEMMs needs no cuBLAS, so failing to
 * load it here is no error (the first GEMM reports it). */
static void cublas_version(char *buf, size_t n)
{
    int major = 0, minor = 0, patch = 0;
    if (sb_cublas_try_load() != 0 || sb_cublas.get_property(MAJOR_VERSION, &major) ||
        sb_cublas.get_property(MINOR_VERSION, &minor) ||
        sb_cublas.get_property(PATCH_LEVEL, &patch)) {
        snprintf(buf, n, "not loaded");
        return;
    }
    snprintf(buf, n, "%d.%d.%d", major, minor, patch);
}

static void format_uuid(const cudaUUID_t *u, char *buf, size_t n)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

int sb_cuda_device_count(int *count)
{
    *count = 0;
    /* without a driver cudart says "CUDA driver version is insufficient for CUDA runtime
     * version", which points at the wrong fix: the driver is looked for first, by its name */
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!libcuda)
        return sb_fail(SB_EXIT_NODEV, "no usable CUDA device: the NVIDIA driver is not installed "
                                      "(libcuda.so.1 not found); run on a machine with an "
                                      "NVIDIA GPU");
    dlclose(libcuda);
    cudaError_t err = cudaGetDeviceCount(count);
    if (err != cudaSuccess) {
        *count = 0;
        return sb_fail(SB_EXIT_NODEV,
                       "no usable CUDA device: %s; check that an NVIDIA GPU and its driver are "
                       "installed (nvidia-smi)",
                       cudaGetErrorString(err));
    }
    return 0;
}

int sb_env_open_device(sb_env *e, int device)
{
    int count = 0;
    int rc = sb_cuda_device_count(&count);
    if (rc)
        return rc;
    if (count == 0)
        return sb_fail(SB_EXIT_NODEV, "no usable CUDA device: no device found; check that an "
                                      "NVIDIA GPU and its driver are installed (nvidia-smi)");
    if (device >= count)
        return sb_fail(SB_EXIT_USAGE,
                       "--device %d: out of range, this machine has %d CUDA "
                       "device%s (0..%d)",
                       device, count, count == 1 ? "" : "s", count - 1);
    cudaError_t err = cudaSetDevice(device);
    if (err == cudaSuccess)
        err = cudaFree(NULL); /* create the context now, so its cost is not measured */
    if (err != cudaSuccess)
        return sb_fail(SB_EXIT_NODEV, "no usable CUDA device: device %d: %s", device,
                       cudaGetErrorString(err));
    e->device = device;
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
        snprintf(e->gpu, sizeof e->gpu, "%s", prop.name);
        e->sm_count = prop.multiProcessorCount;
        format_uuid(&prop.uuid, e->uuid, sizeof e->uuid);
    }
    sb_gpu_slug(e->gpu, e->gpu_slug, sizeof e->gpu_slug);
    cudaDeviceGetPCIBusId(e->pci_bus_id, sizeof e->pci_bus_id, device);
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    snprintf(e->cuda_runtime, sizeof e->cuda_runtime, "%d.%d", rt / 1000, (rt % 1000) / 10);
    snprintf(e->cuda_driver, sizeof e->cuda_driver, "%d.%d", drv / 1000, (drv % 1000) / 10);
    cublas_version(e->cublas, sizeof e->cublas);
    if (sb_nvml_open() == 0 && sb_nvml_driver_version(e->driver, sizeof e->driver) == 0) {
        e->has_nvml = sb_nvml_select(e->pci_bus_id) == 0 && sb_nvml_info_get(&e->nvml) == 0;
    } else {
        snprintf(e->driver, sizeof e->driver, "cuda %s", e->cuda_driver);
    }
    return 0;
}

int sb_device_free_memory(size_t *free_b)
{
    size_t total = 0;
    SB_CUDA(cudaMemGetInfo(free_b, &total));
    return 0;
}
