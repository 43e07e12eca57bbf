/* NCCL, loaded with dlopen when a run plans the collective scenario, so that the binary starts,
 * builds and runs everything else on machines without it (as cuBLAS: gpu/cublas_api.h).
 *
 * The CUDA toolkit does not ship nccl.h (NCCL comes as its own package or inside a framework's
 * wheels), so the few types and values syncbench uses are declared here, from NCCL 2's stable
 * ABI; where nccl.h is found at build time, nccl_api.c checks them against it. */
#ifndef SB_NCCL_API_H
#define SB_NCCL_API_H

#include <cuda_runtime.h>
#include <stddef.h>

#include "gpu/cuda_check.h"

typedef struct ncclComm *sb_nccl_comm; /* ncclComm_t */
typedef int sb_nccl_result;            /* ncclResult_t: an enum, passed as an int */

enum {
    SB_NCCL_SUCCESS = 0,     /* ncclSuccess */
    SB_NCCL_IN_PROGRESS = 7, /* ncclInProgress: not an error (a non-blocking call under way) */
    SB_NCCL_FLOAT = 7,       /* ncclFloat (ncclDataType_t) */
    SB_NCCL_SUM = 0,         /* ncclSum (ncclRedOp_t) */
};

/* Exactly the calls syncbench makes; the names in comments are the exported symbols. */
typedef struct sb_nccl_api {
    sb_nccl_result (*get_version)(int *);                              /* ncclGetVersion */
    sb_nccl_result (*comm_init_all)(sb_nccl_comm *, int, const int *); /* ncclCommInitAll */
    sb_nccl_result (*comm_destroy)(sb_nccl_comm);                      /* ncclCommDestroy */
    sb_nccl_result (*comm_abort)(sb_nccl_comm);                        /* ncclCommAbort */
    sb_nccl_result (*comm_get_async_error)(sb_nccl_comm,
                                           sb_nccl_result *); /* ncclCommGetAsyncError */
    sb_nccl_result (*all_reduce)(const void *, void *, size_t, int, int, sb_nccl_comm,
                                 cudaStream_t);      /* ncclAllReduce */
    const char *(*get_error_string)(sb_nccl_result); /* ncclGetErrorString */
    const char *(*get_last_error)(sb_nccl_comm);     /* ncclGetLastError (2.13+; may be NULL) */
} sb_nccl_api;

/* The table; valid once sb_nccl_load() returned 0. */
extern sb_nccl_api sb_nccl;

/* Loads NCCL and every symbol, once: the file SYNCBENCH_NCCL_LIB names if set, else
 * libnccl.so.2, else libnccl.so (LD_LIBRARY_PATH, the rpath, the system's folders). 0, or one
 * line naming the library and the loader's reason recorded, and SB_EXIT_NODEV. */
int sb_nccl_load(void);
/* The environment NCCL starts with, where the user set none (sb_nccl_load calls it first, in
 * the main thread): NCCL_LAUNCH_MODE=GROUP. */
void sb_nccl_defaults(void);
/* The attempt itself, without the once and without recording an error: 0, or -1 with the
 * reason (one line) in `why`. The library's names are tried in order. */
int sb_nccl_open(const char *const *names, int n, char *why, size_t why_len);
/* NCCL's version as "2.28.9" (after sb_nccl_load), or "not loaded". */
void sb_nccl_version(char *buf, size_t n);

/* One communicator per GPU, GPUs 0..n-1 of the visible ones (ncclCommInitAll). 0, or one line
 * naming NCCL's reason recorded, and SB_EXIT_NODEV: NCCL cannot drive these GPUs. */
int sb_nccl_init_all(sb_nccl_comm *comms, int n);
/* For SB_NCCL: "CALL failed: NCCL's text (its last error) in CONTEXT [file:line]", exit 1. */
int sb_nccl_fail(const char *call, sb_nccl_result r, const char *file, int line);

#define SB_NCCL(call) SB_CHECK(sb_nccl_result, call, SB_NCCL_SUCCESS, sb_nccl_fail)

#endif
