#include "base/env.h"

#include <ctype.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"

void sb_utc_now(char *buf, int n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, (size_t)n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void sb_gpu_slug(const char *gpu, char *buf, size_t n)
{
    if (!strncmp(gpu, "NVIDIA ", 7))
        gpu += 7;
    size_t j = 0;
    for (; *gpu && j + 1 < n; gpu++) {
        unsigned char c = (unsigned char)*gpu;
        if (isalnum(c))
            buf[j++] = (char)tolower(c);
        else if (j && buf[j - 1] != '-')
            buf[j++] = '-';
    }
    while (j && buf[j - 1] == '-')
        j--;
    buf[j] = '\0';
    if (!j)
        snprintf(buf, n, "gpu");
}

static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10)) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ')
                    p++;
                p[strcspn(p, "\n")] = '\0';
                snprintf(buf, n, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

void sb_env_host(sb_env *e, int argc, char **argv)
{
    memset(e, 0, sizeof *e);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(e->run_id, sizeof e->run_id, "%s-%d", stamp, (int)getpid());
    strftime(e->date, sizeof e->date, "%Y%m%d-%H%M%S", &tm);
    if (gethostname(e->host, sizeof e->host - 1) != 0)
        strcpy(e->host, "unknown");
    cpu_model(e->cpu, sizeof e->cpu);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(e->kernel, sizeof e->kernel, "%s %s %s", u.sysname, u.release, u.machine);
    snprintf(e->version, sizeof e->version, "%s", SB_VERSION);
    snprintf(e->git_rev, sizeof e->git_rev, "%s", SB_GIT_REV);
    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof e->command_line; i++) {
        int w = snprintf(e->command_line + used, sizeof e->command_line - used, "%s%s",
                         i ? " " : "", argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    snprintf(e->gpu, sizeof e->gpu, "unknown");
}

static void format_uuid(const cudaUUID_t *u, char *buf, size_t n)
{
    const unsigned char *b = (const unsigned char *)u->bytes;
    snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

int sb_env_open_device(sb_env *e, int device)
{
    void *libcuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!libcuda)
        return sb_fail(SB_EXIT_NODEV, "no usable CUDA device: the NVIDIA driver is not installed "
                                      "(libcuda.so.1 not found); run on a machine with an "
                                      "NVIDIA GPU");
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
    int major = 0, minor = 0, patch = 0;
    cublasGetProperty(MAJOR_VERSION, &major);
    cublasGetProperty(MINOR_VERSION, &minor);
    cublasGetProperty(PATCH_LEVEL, &patch);
    snprintf(e->cublas, sizeof e->cublas, "%d.%d.%d", major, minor, patch);
    if (sb_nvml_open() == 0 && sb_nvml_driver_version(e->driver, sizeof e->driver) == 0) {
        e->has_nvml = sb_nvml_select(e->pci_bus_id) == 0 && sb_nvml_info_get(&e->nvml) == 0;
    } else {
        snprintf(e->driver, sizeof e->driver, "cuda %s", e->cuda_driver);
    }
    return 0;
}
