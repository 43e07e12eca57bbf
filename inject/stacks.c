#include "stacks.h"

#include <dlfcn.h>
#include <execinfo.h>
#include <link.h>
#include <limits.h>
#include <stdlib.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "out.h"
#include "stackreuse.h"

/* Frames inside this library and CUPTI are dropped before the stack is kept (the analyzer
 * drops the CUDA libraries' frames when it picks a call site). */
#define SKIP_OWN 2
#define TABLE_SIZE 8192 /* distinct stacks; more are written without a stack id */

static int depth;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    uint64_t hash;
    long id;
} table[TABLE_SIZE];
static long next_id;
static void *self_base; /* where this library is loaded: its frames are left out */

/* The code of this library and of libcupti (the callback's callers), found once: a frame is
 * skipped by comparing addresses, not by dladdr, which scans the symbol table of the object
 * on every call (several microseconds a frame inside a callback that runs on every sync). */
#define MAX_SKIP_RANGES 16
static struct {
    uintptr_t lo, hi;
} skip[MAX_SKIP_RANGES];
static int nskip;

static int find_skipped(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    int cupti = info->dlpi_name && strstr(info->dlpi_name, "libcupti");
    if (!cupti && (void *)info->dlpi_addr != self_base)
        return 0;
    for (int i = 0; i < info->dlpi_phnum && nskip < MAX_SKIP_RANGES; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            skip[nskip].lo = info->dlpi_addr + ph->p_vaddr;
            skip[nskip++].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        }
    }
    return 0;
}

static int skipped(const void *pc)
{
    for (int i = 0; i < nskip; i++)
        if ((uintptr_t)pc >= skip[i].lo && (uintptr_t)pc < skip[i].hi)
            return 1;
    return 0;
}

void sba_stacks_init(int d)
{
    Dl_info self;
    if (dladdr((void *)sba_stacks_init, &self))
        self_base = self.dli_fbase;
    dl_iterate_phdr(find_skipped, NULL);
    sba_stackreuse_init();
    depth = d < 0 ? 0 : d > SBA_MAX_FRAMES ? SBA_MAX_FRAMES : d;
    if (depth) {
        void *warm[4];
        backtrace(warm, 4); /* loads libgcc_s now, not inside the first callback */
    }
}

int sba_stack_capture(void **pcs)
{
    if (!depth)
        return 0;
    void *all[SBA_MAX_FRAMES + 8];
    int n = backtrace(all, depth + 8);
    /* skip frames in this library and in libcupti (the callback's callers) */
    int first = 0;
    while (first < n && skipped(all[first]))
        first++;
    int k = 0;
    for (int i = first; i < n && k < depth; i++)
        pcs[k++] = all[i];
    return k;
}

static uint64_t hash_pcs(void *const *pcs, int n)
{
    uint64_t h = 1469598103934665603ull;
    for (int i = 0; i < n; i++) {
        h ^= (uint64_t)(uintptr_t)pcs[i];
        h *= 1099511628211ull;
    }
    return h ? h : 1;
}

/* dladdr gives the main program's path as it was started ("./build/app"): made absolute so
 * that the analyzer, in another folder, can find it. */
static const char *object_path(const char *name, char *buf, size_t n)
{
    if (!name || !*name)
        return "?";
    if (name[0] == '/' || !realpath(name, buf) || strlen(buf) >= n)
        return name;
    return buf;
}

/* Each stack's record, kept for the blocks (blocks.c), which repeat the records their calls
 * refer to: only once the in-process API attached (api.c), so that an audit that opens no block
 * keeps no copy; written and read under the table's lock. */
static char *lines[TABLE_SIZE];
static int keep_lines;

void sba_stacks_keep_lines(void)
{
    pthread_mutex_lock(&lock);
    keep_lines = 1;
    pthread_mutex_unlock(&lock);
    /* a stack first walked before now has its line kept by its next walk (sba_stack_id): every
     * Python stack's native stack is walked again until three walks agree, at least two of them
     * from now on */
    sba_stackreuse_init();
}

/* Stack id's record; write: into the record file too (the first time), else only kept. */
static void write_stack(long id, void *const *pcs, int n, int write)
{
    char line[16384], obj[1024], sym[1024], abs_path[PATH_MAX];
    size_t len =
        (size_t)snprintf(line, sizeof line, "{\"t\":\"stack\",\"id\":%ld,\"frames\":[", id);
    for (int i = 0; i < n && len < sizeof line - 2400; i++) {
        Dl_info info;
        const ElfW(Sym) *es = NULL;
        memset(&info, 0, sizeof info);
        dladdr1(pcs[i], &info, (void **)&es, RTLD_DL_SYMENT);
        uintptr_t pc = (uintptr_t)pcs[i], base = (uintptr_t)info.dli_fbase;
        /* a return address points after the call: -1 lands in the calling instruction */
        uintptr_t at = pc ? pc - 1 : 0;
        /* dladdr names the nearest exported symbol below the address, which in a library of
         * hidden functions is some other function: kept only when the address is inside it,
         * its size known (the proc record's "symsize"; the analyzer names the rest from the
         * object's symbol table, or as library+offset) */
        if (info.dli_sname &&
            (!es || !es->st_size || at - (uintptr_t)info.dli_saddr >= (uintptr_t)es->st_size))
            info.dli_sname = NULL;
        len += (size_t)snprintf(
            line + len, sizeof line - len, "%s[\"%s\",\"%s\",%llu,%llu]", i ? "," : "",
            sba_json_escape(obj, sizeof obj,
                            object_path(info.dli_fname, abs_path, sizeof abs_path)),
            sba_json_escape(sym, sizeof sym, info.dli_sname ? info.dli_sname : ""),
            (unsigned long long)(at - base), (unsigned long long)at);
    }
    len += (size_t)snprintf(line + len, sizeof line - len, "]}");
    if (write)
        sba_out_line(line, len);
    if (keep_lines)
        lines[id] = strndup(line, len);
}

char *sba_stack_line(long id)
{
    pthread_mutex_lock(&lock);
    char *s = id >= 0 && id < TABLE_SIZE && lines[id] ? strdup(lines[id]) : NULL;
    pthread_mutex_unlock(&lock);
    return s;
}

long sba_stack_id(void *const *pcs, int n)
{
    if (n <= 0)
        return -1;
    uint64_t h = hash_pcs(pcs, n);
    long id = -1;
    pthread_mutex_lock(&lock);
    for (size_t i = h % TABLE_SIZE, probes = 0; probes < TABLE_SIZE;
         i = (i + 1) % TABLE_SIZE, probes++) {
        if (table[i].hash == h) {
            id = table[i].id;
            if (keep_lines && !lines[id]) /* first seen before the API attached */
                write_stack(id, pcs, n, 0);
            break;
        }
        if (table[i].hash == 0) {
            if (next_id >= TABLE_SIZE * 3 / 4)
                break; /* nearly full: new stacks go without an id */
            table[i].hash = h;
            table[i].id = id = next_id++;
            write_stack(id, pcs, n, 1);
            break;
        }
    }
    pthread_mutex_unlock(&lock);
    return id;
}
