/* The environment record: what the CSV's environment columns and the JSON's "environment"
 * object say about where a run happened. This is the host part (no CUDA); gpu/device.h opens
 * the device and fills the device part. */
#ifndef SB_ENV_H
#define SB_ENV_H

#include <time.h>

#include "base/nvml.h"

typedef struct sb_env {
    /* host part: no CUDA call */
    char run_id[64];
    char date[32]; /* "20261122-154630": for {date} in output file names */
    char host[128];
    char cpu[256];
    char kernel[256];
    char version[32];
    char git_rev[64];
    char command_line[4096];
    /* device part: sb_env_open_device (gpu/device.h) */
    int device;
    char gpu[256];
    char gpu_slug[128]; /* "h100-80gb-hbm3": for {gpu} in output file names */
    char uuid[64];
    char pci_bus_id[32];
    int sm_count;
    char driver[64];       /* NVML's driver version, else "cuda X.Y" */
    char cuda_runtime[32]; /* "13.0" */
    char cuda_driver[32];  /* the CUDA version the driver supports */
    char cublas[32];       /* "13.1.0", or "not loaded" when cuBLAS cannot be loaded */
    int has_nvml;
    sb_nvml_info nvml; /* clocks and PCIe link at the start of the run */
} sb_env;

/* Host part: run id (UTC time + pid), host name, CPU model, kernel, version, command line. */
void sb_env_host(sb_env *e, int argc, char **argv);
/* ISO 8601 UTC now: "2026-11-22T15:46:30Z". */
void sb_utc_now(char *buf, int n);
/* The same for a given time. */
void sb_utc_format(time_t t, char *buf, int n);
/* "NVIDIA H100 80GB HBM3" -> "h100-80gb-hbm3" */
void sb_gpu_slug(const char *gpu, char *buf, size_t n);

#endif
