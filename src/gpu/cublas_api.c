#include "gpu/cublas_api.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "base/error.h"

sb_cublas_api sb_cublas;

/* The table's types must match the header's declarations (the cast from dlsym would hide a
 * mismatch). */
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

/* dlerror's text on one line (it may hold newlines), or `fallback`. */
static void keep_reason(const char *fallback)
{
    const char *e = dlerror();
    snprintf(st.why, sizeof st.why, "%s", e ? e : fallback);
    for (char *p = st.why; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    size_t n = strlen(st.why);
    while (n && st.why[n - 1] == ' ')
        st.why[--n] = '\0';
}

static int load(void)
{
    void *lib = NULL;
    for (size_t i = 0; i < sizeof libnames / sizeof *libnames && !lib; i++) {
        lib = dlopen(libnames[i], RTLD_NOW | RTLD_LOCAL);
        if (!lib && i == 0)
            keep_reason(libnames[0]); /* the versioned name's reason is the one to report */
    }
    if (!lib)
        return -1;
    struct {
        void **slot;
        const char *symbol;
    } syms[] = {
        {(void **)&sb_cublas.create, "cublasCreate_v2"},
        {(void **)&sb_cublas.destroy, "cublasDestroy_v2"},
        {(void **)&sb_cublas.set_stream, "cublasSetStream_v2"},
        {(void **)&sb_cublas.set_math_mode, "cublasSetMathMode"},
        {(void **)&sb_cublas.set_workspace, "cublasSetWorkspace_v2"},
        {(void **)&sb_cublas.gemm_ex, "cublasGemmEx"},
        {(void **)&sb_cublas.get_property, "cublasGetProperty"},
        {(void **)&sb_cublas.status_string, "cublasGetStatusString"},
        {(void **)&sb_cublas.status_name, "cublasGetStatusName"},
    };
    for (size_t i = 0; i < sizeof syms / sizeof *syms; i++) {
        dlerror();
        *syms[i].slot = dlsym(lib, syms[i].symbol);
        if (!*syms[i].slot) {
            keep_reason(syms[i].symbol);
            dlclose(lib);
            memset(&sb_cublas, 0, sizeof sb_cublas);
            return -1;
        }
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
