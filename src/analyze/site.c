/* A call's site: the first frame of its stack that is the program's, not CUDA's or ours. */
#include "analyze/analyze.h"
#include "base/utf8.h"

#include <ctype.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(offsetof(sb_audit_stack, id) == 0 && offsetof(sb_audit_pystack, id) == 0,
               "sb_audit_find_by_id: the id first");

const void *sb_audit_find_by_id(const void *records, size_t n, size_t size, int64_t id)
{
    const char *base = records;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (*(const int64_t *)(const void *)(base + mid * size) < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && *(const int64_t *)(const void *)(base + lo * size) == id ? base + lo * size
                                                                              : NULL;
}

const sb_audit_stack *sb_audit_find_stack(const sb_audit_proc *p, int64_t id)
{
    return sb_audit_find_by_id(p->stacks, p->nstacks, sizeof *p->stacks,
                               id); /* sorted (analyze.c) */
}

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

static int starts(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int cuda_object(const char *obj)
{
    static const char *const skip[] = {"libcupti",           "libcuda",       "libcudart",
                                       "libsyncbench_audit", "libnvToolsExt", NULL};
    const char *b = basename_of(obj);
    for (int i = 0; skip[i]; i++)
        if (starts(b, skip[i]))
            return 1;
    return 0;
}

static int cuda_symbol(const char *sym)
{
    if (starts(sym, "cudart::") || starts(sym, "__cudart") || starts(sym, "cuda") ||
        starts(sym, "libcudart"))
        return 1;
    return sym[0] == 'c' && sym[1] == 'u' && isupper((unsigned char)sym[2]);
}

/* libstdc++'s demangler (the binary links libstdc++ for cudart): "_ZN3c104cuda18device_
 * synchronizeEv" -> "c10::cuda::device_synchronize()". NULL when `sym` is not a C++ name. */
char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

static char *demangle(const char *sym)
{
    int status = -1;
    if (strncmp(sym, "_Z", 2) != 0)
        return NULL;
    char *s = __cxa_demangle(sym, NULL, NULL, &status);
    if (status != 0) {
        free(s);
        return NULL;
    }
    return s;
}

const char *sb_audit_site(sb_strpool *strs, const sb_audit_stack *s)
{
    if (s) {
        for (int i = 0; i < s->nframes; i++) {
            const sb_audit_frame *f = &s->frames[i];
            if (cuda_object(f->obj) || cuda_symbol(f->sym))
                continue;
            char buf[1024];
            char *plain = demangle(f->sym);
            if (f->sym[0])
                sb_audit_fmt(buf, sizeof buf, "%s!%s", basename_of(f->obj), plain ? plain : f->sym);
            else
                sb_audit_fmt(buf, sizeof buf, "%s+0x%" PRIx64, basename_of(f->obj),
                             (uint64_t)f->off);
            free(plain);
            return sb_audit_intern(strs, buf);
        }
    }
    return sb_audit_intern(strs, "?");
}
