/* Where a CUDA library that syncbench loads at run time is, beyond the loader's own search: for a
 * Python environment with PyTorch's CUDA wheels and no toolkit, as for a toolkit the loader does
 * not know. CUPTI for the audit (cmd/cupti_find.c), cuBLAS for the GEMMs (gpu/cublas_api.c).
 * The folders, in order:
 *   1. LD_LIBRARY_PATH's, as the loader takes them;
 *   2. the CUDA toolkit's: each of lib->toolkit under $CUDA_HOME, then under /usr/local/cuda;
 *      skipped with SYNCBENCH_NO_TOOLKIT=1 (a machine's toolkit hidden, as a user without one
 *      sees it: the callers then skip the loader's own search too);
 *   3. NVIDIA's CUDA wheels: each of lib->wheels under every site-packages folder of
 *      $SYNCBENCH_SITE_PACKAGES (colon-separated; the `syncbench` that pip installs sets it to
 *      its Python's), then of $VIRTUAL_ENV and $CONDA_PREFIX (lib/python3.N/site-packages). */
#ifndef SB_BASE_CUDALIB_H
#define SB_BASE_CUDALIB_H

#include <stddef.h>

typedef struct sb_cudalib {
    const char *soname;         /* the file looked for: "libcupti.so.13" */
    const char *const *toolkit; /* folders under a toolkit's root, NULL-terminated */
    const char *const *wheels;  /* folders under a site-packages folder, NULL-terminated */
} sb_cudalib;

typedef enum {
    SB_CUDALIB_NONE,    /* not found */
    SB_CUDALIB_LD_PATH, /* in a folder of LD_LIBRARY_PATH */
    SB_CUDALIB_TOOLKIT, /* in the toolkit */
    SB_CUDALIB_WHEEL    /* in a wheel */
} sb_cudalib_from;

/* SYNCBENCH_NO_TOOLKIT=1: the toolkit's folders and the loader's own search are skipped. */
int sb_cudalib_no_toolkit(void);
/* The first of the folders above that holds a readable lib->soname: its path in path (n bytes)
 * and the kind of place. SB_CUDALIB_NONE when none does, with where it looked in `looked` (one
 * line, escaped, for a message: "LD_LIBRARY_PATH (unset); the toolkit's ...; the wheels' ...",
 * and another major's file seen on the way: "; there: libcupti.so.12 in ..."). */
sb_cudalib_from sb_cudalib_find(const sb_cudalib *lib, char *path, size_t n, char *looked,
                                size_t looked_n);
/* "LD_LIBRARY_PATH", "the toolkit", "a wheel" */
const char *sb_cudalib_from_name(sb_cudalib_from from);

#endif
