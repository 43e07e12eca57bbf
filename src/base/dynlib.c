#include "base/dynlib.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

/* dlerror's text on one line (it may hold newlines), or `fallback`. */
static void keep_reason(char *why, size_t n, const char *fallback)
{
    const char *e = dlerror();
    if (!why || !n)
        return;
    snprintf(why, n, "%s", e ? e : fallback);
    for (char *p = why; *p; p++)
        if (*p == '\n' || *p == '\r' || *p == '\t')
            *p = ' ';
    size_t len = strlen(why);
    while (len && why[len - 1] == ' ')
        why[--len] = '\0';
}

void *sb_dynlib_open(const char *const *names, size_t n, int flags, const char **opened, char *why,
                     size_t why_len)
{
    for (size_t i = 0; i < n; i++) {
        void *lib = dlopen(names[i], flags);
        if (lib) {
            if (opened)
                *opened = names[i];
            return lib;
        }
        if (i == 0)
            keep_reason(why, why_len, names[0]); /* the first name's reason is the one to report */
    }
    return NULL;
}

const sb_dynsym *sb_dynlib_resolve(void *lib, const sb_dynsym *syms, size_t n, char *why,
                                   size_t why_len)
{
    for (size_t i = 0; i < n; i++) {
        const sb_dynsym *s = &syms[i];
        dlerror();
        *s->slot = dlsym(lib, s->name);
        if (!*s->slot && s->alt) {
            dlerror();
            *s->slot = dlsym(lib, s->alt);
        }
        if (!*s->slot && !s->optional) {
            keep_reason(why, why_len, s->name);
            return s;
        }
    }
    return NULL;
}

void *sb_dynlib_load(const char *const *names, size_t n, const sb_dynsym *syms, size_t nsyms,
                     const char **opened, char *why, size_t why_len)
{
    void *lib = sb_dynlib_open(names, n, RTLD_NOW | RTLD_LOCAL, opened, why, why_len);
    if (lib && sb_dynlib_resolve(lib, syms, nsyms, why, why_len)) {
        dlclose(lib);
        return NULL;
    }
    return lib;
}
