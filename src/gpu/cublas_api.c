#include "gpu/cublas_api.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "base/cudalib.h"
#include "base/dynlib.h"
#include "base/error.h"

sb_cublas_api sb_cublas;

/* The table's types must match the header's declarations (the cast into the symbol table would
 * hide a mismatch). */
#define SAME_TYPE(field, fn)                                                                       \
    _Static_assert(__builtin_types_compatible_p(__typeof__(sb_cublas.field), __typeof__(&fn)),     \
                   #field " does not match " #fn)
SAME_TYPE(create, cublasCreate_v2);
SAME_TYPE(destroy, cublasDestroy_v2);
SAME_TYPE(set_stream, cublasSetStream_v2);
SAME_TYPE(set_math_mode, cublasSetMathMode);
SAME_TYPE(set_workspace, cublasSetWorkspace_v2);
SAME_TYPE(gemm_ex, cublasGemmEx);
SAME_TYPE(get_property, cublasGetProperty);
SAME_TYPE(status_string, cublasGetStatusString);
SAME_TYPE(status_name, cublasGetStatusName);

static const char *const libnames[] = {"libcublas.so.13", "libcublas.so"};

static struct {
    int tried, ok;
    char why[512]; /* "libcublas.so.13: cannot open shared object file: ..." */
} st;

/* libcublas.so.13 in base/cudalib.h's folders (LD_LIBRARY_PATH, the toolkit's lib64, the wheels':
 * CUDA 13's nvidia/cu13/lib, nvidia/cublas/lib), loaded by its path, libcublasLt.so.13 beside it
 * first (cuBLAS needs it by name, which the loader may not find there). 0, or -1 with where it
 * looked added to st.why. */
static int load_found(const sb_dynsym *syms, size_t nsyms)
{
    static const char *const toolkit[] = {"lib64", NULL};
    static const char *const wheels[] = {"nvidia/cu13/lib", "nvidia/cublas/lib", NULL};
    const sb_cudalib what = {libnames[0], toolkit, wheels};
    char path[PATH_MAX], looked[400], lt[PATH_MAX + 32];
    size_t len = strlen(st.why);
    if (sb_cudalib_find(&what, path, sizeof path, looked, sizeof looked) == SB_CUDALIB_NONE) {
        snprintf(st.why + len, sizeof st.why - len, "; not in %s", looked);
        return -1;
    }
    snprintf(lt, sizeof lt, "%s", path);
    char *slash = strrchr(lt, '/');
    snprintf(slash + 1, sizeof lt - (size_t)(slash + 1 - lt), "libcublasLt.so.13");
    dlopen(lt, RTLD_NOW | RTLD_LOCAL);
    const char *names[] = {path};
    return sb_dynlib_load(names, 1, syms, nsyms, NULL, st.why, sizeof st.why) ? 0 : -1;
}

static int load(void)
{
    const sb_dynsym syms[] = {
        {"cublasCreate_v2", (void **)&sb_cublas.create, 0, NULL},
        {"cublasDestroy_v2", (void **)&sb_cublas.destroy, 0, NULL},
        {"cublasSetStream_v2", (void **)&sb_cublas.set_stream, 0, NULL},
        {"cublasSetMathMode", (void **)&sb_cublas.set_math_mode, 0, NULL},
        {"cublasSetWorkspace_v2", (void **)&sb_cublas.set_workspace, 0, NULL},
        {"cublasGemmEx", (void **)&sb_cublas.gemm_ex, 0, NULL},
        {"cublasGetProperty", (void **)&sb_cublas.get_property, 0, NULL},
        {"cublasGetStatusString", (void **)&sb_cublas.status_string, 0, NULL},
        {"cublasGetStatusName", (void **)&sb_cublas.status_name, 0, NULL},
    };
    /* the loader's own search first (LD_LIBRARY_PATH, the rpath, ld.so.cache), the versioned
     * name's reason the one reported; then the toolkit's and the wheels' folders */
    size_t nsyms = sizeof syms / sizeof *syms;
    if (sb_cudalib_no_toolkit())
        snprintf(st.why, sizeof st.why, "the loader's search skipped: SYNCBENCH_NO_TOOLKIT=1");
    else if (sb_dynlib_load(libnames, sizeof libnames / sizeof *libnames, syms, nsyms, NULL, st.why,
                            sizeof st.why))
        return 0; /* never closed: handles may live until exit */
    if (load_found(syms, nsyms) == 0)
        return 0;
    memset(&sb_cublas, 0, sizeof sb_cublas);
    return -1;
}

int sb_cublas_try_load(void)
{
    if (!st.tried) {
        st.tried = 1;
        st.ok = load() == 0;
    }
    return st.ok ? 0 : -1;
}

int sb_cublas_load(void)
{
    if (sb_cublas_try_load() == 0)
        return 0;
    return sb_fail(SB_EXIT_NODEV,
                   "cannot load cuBLAS (%s); install the CUDA toolkit's cuBLAS or NVIDIA's "
                   "wheel (pip install nvidia-cublas), or set LD_LIBRARY_PATH",
                   st.why);
}
