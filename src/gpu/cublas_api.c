#include "gpu/cublas_api.h"

#include <string.h>

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
    /* the versioned name's reason is the one reported */
    if (!sb_dynlib_load(libnames, sizeof libnames / sizeof *libnames, syms,
                        sizeof syms / sizeof *syms, NULL, st.why, sizeof st.why)) {
        memset(&sb_cublas, 0, sizeof sb_cublas);
        return -1;
    }
    return 0; /* never closed: handles may live until exit */
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
                   "cannot load cuBLAS (%s); install the CUDA toolkit's cuBLAS or set "
                   "LD_LIBRARY_PATH",
                   st.why);
}
