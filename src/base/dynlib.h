/* Libraries loaded with dlopen at run time (cuBLAS, NCCL, NVML, the driver, CUPTI's injection
 * library, libpython), so that the binary starts where they are missing: the first of a list of
 * names that loads, and a table of the symbols wanted, each looked up into its pointer. */
#ifndef SB_BASE_DYNLIB_H
#define SB_BASE_DYNLIB_H

#include <stddef.h>

/* One symbol wanted: where its address goes. */
typedef struct sb_dynsym {
    const char *name; /* the exported symbol */
    void **slot;      /* set to its address, NULL when missing */
    int optional;     /* may be missing */
    const char *alt;  /* another name tried when `name` is missing (an older release's); NULL */
} sb_dynsym;

/* dlopen(flags) of names[0], else names[1], ...: the handle and, in *opened (may be NULL), the
 * name that loaded. NULL when none does, with the first name's reason (dlerror's, on one line)
 * in why (may be NULL). */
void *sb_dynlib_open(const char *const *names, size_t n, int flags, const char **opened, char *why,
                     size_t why_len);
/* Looks every entry of syms[0..n) up in lib (a handle, or RTLD_DEFAULT), in order. NULL when
 * every one that is not optional was found; else the first missing one, with dlerror's reason on
 * one line (or its name) in why (may be NULL); the entries after it are left as they were. */
const sb_dynsym *sb_dynlib_resolve(void *lib, const sb_dynsym *syms, size_t n, char *why,
                                   size_t why_len);
/* Both, RTLD_NOW | RTLD_LOCAL: the handle, or NULL with the reason in why (a library that loads
 * but misses a symbol is closed again). */
void *sb_dynlib_load(const char *const *names, size_t n, const sb_dynsym *syms, size_t nsyms,
                     const char **opened, char *why, size_t why_len);

#endif
