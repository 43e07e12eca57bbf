#include "env.h"

#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "error.h"
#include "nvml.h"

void sb_utc_now(char *buf, int n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, (size_t)n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void sb_env_host(sb_env *e)
{
    memset(e, 0, sizeof *e);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(e->run_id, sizeof e->run_id, "%s-%d", stamp, (int)getpid());
    if (gethostname(e->host, sizeof e->host - 1) != 0)
        strcpy(e->host, "unknown");
}

int sb_env_open_device(sb_env *e, int device)
{
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!libcuda)
        return sb_fail(SB_EXIT_NODEV,
                       "no usable CUDA device: the NVIDIA driver is not installed "
                       "(libcuda.so.1 not found); run on a machine with an NVIDIA GPU");
    dlclose(libcuda);
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0)
        return sb_fail(SB_EXIT_NODEV,
                       "no usable CUDA device: %s; check that an NVIDIA GPU and its driver are "
                       "installed (nvidia-smi)",
                       err != cudaSuccess ? cudaGetErrorString(err) : "no device found");
    if (device >= count)
        return sb_fail(SB_EXIT_USAGE,
                       "--device %d: out of range, this machine has %d CUDA "
                       "device%s (0..%d)",
                       device, count, count == 1 ? "" : "s", count - 1);
    err = cudaSetDevice(device);
    if (err == cudaSuccess)
        err = cudaFree(NULL); /* create the context now, so its cost is not measured */
    if (err != cudaSuccess)
        return sb_fail(SB_EXIT_NODEV, "no usable CUDA device: device %d: %s", device,
                       cudaGetErrorString(err));
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess)
        snprintf(e->gpu, sizeof e->gpu, "%s", prop.name);
    e->device = device;
    int rt = 0, drv = 0;
    cudaRuntimeGetVersion(&rt);
    cudaDriverGetVersion(&drv);
    snprintf(e->cuda_runtime, sizeof e->cuda_runtime, "%d.%d", rt / 1000, (rt % 1000) / 10);
    if (sb_nvml_open() != 0 || sb_nvml_driver_version(e->driver, sizeof e->driver) != 0)
        snprintf(e->driver, sizeof e->driver, "cuda %d.%d", drv / 1000, (drv % 1000) / 10);
    return 0;
}
