/* The environment record every output row carries: run id, host, GPU, driver, CUDA runtime. */
#ifndef SB_ENV_H
#define SB_ENV_H

typedef struct sb_env {
    char run_id[64];
    char host[128];
    char gpu[256];
    char driver[64];
    char cuda_runtime[32];
    int device;
} sb_env;

/* Host part, no CUDA call: run id (UTC time + pid) and host name. */
void sb_env_host(sb_env *e);
/* Selects the device: exit 3 without a usable driver/device, exit 2 for an ordinal out of
 * range. Then fills the GPU part. */
int sb_env_open_device(sb_env *e, int device);
/* ISO 8601 UTC now: "2026-11-22T15:46:30Z". */
void sb_utc_now(char *buf, int n);

#endif
