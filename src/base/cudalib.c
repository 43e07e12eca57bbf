#include "base/cudalib.h"

#include <ctype.h>
#include <dirent.h>
#include <glob.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/envvars.h"
#include "base/error.h"

#define MAX_SITES 16

/* The site-packages folders whose wheels are looked in, in order, each once. */
typedef struct {
    char dir[MAX_SITES][PATH_MAX];
    int n;
} sites;

/* Text appended to a bounded buffer; what does not fit is left out. */
typedef struct {
    char *buf;
    size_t cap, len;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...)
{
    if (t->len + 1 >= t->cap)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t->buf + t->len, t->cap - t->len, fmt, ap);
    va_end(ap);
    if (k > 0)
        t->len = t->len + (size_t)k < t->cap ? t->len + (size_t)k : t->cap - 1;
}

/* A path from the environment, escaped for a message. */
static void put_path(text *t, const char *path)
{
    char shown[PATH_MAX];
    sb_escape(path, shown, sizeof shown);
    put(t, "%s", shown);
}

int sb_cudalib_no_toolkit(void)
{
    return sb_env_is(SB_ENV_NO_TOOLKIT, "1");
}

const char *sb_cudalib_from_name(sb_cudalib_from from)
{
    switch (from) {
    case SB_CUDALIB_LD_PATH:
        return "LD_LIBRARY_PATH";
    case SB_CUDALIB_TOOLKIT:
        return "the toolkit";
    case SB_CUDALIB_WHEEL:
        return "a wheel";
    default:
        return "nowhere";
    }
}

static void add_site(sites *s, const char *dir)
{
    if (!*dir || s->n == MAX_SITES || strlen(dir) >= PATH_MAX)
        return;
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->dir[i], dir))
            return;
    snprintf(s->dir[s->n++], PATH_MAX, "%s", dir);
}

/* $PREFIX/lib/python3.N/site-packages of an environment variable naming a prefix. */
static void add_prefix_sites(sites *s, const char *var)
{
    const char *prefix = getenv(var);
    char pattern[PATH_MAX];
    glob_t g;
    if (!prefix || !*prefix ||
        snprintf(pattern, sizeof pattern, "%s/lib/python3*/site-packages", prefix) >=
            (int)sizeof pattern)
        return;
    if (glob(pattern, GLOB_ONLYDIR, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            add_site(s, g.gl_pathv[i]);
    globfree(&g);
}

static void find_sites(sites *s)
{
    s->n = 0;
    const char *list = sb_env_str(SB_ENV_SITE_PACKAGES);
    char copy[8192];
    snprintf(copy, sizeof copy, "%s", list ? list : "");
    for (char *rest = copy, *d; (d = strsep(&rest, ":"));)
        add_site(s, d);
    add_prefix_sites(s, "VIRTUAL_ENV");
    add_prefix_sites(s, "CONDA_PREFIX");
}

/* dir/name when it is there and readable (a link followed). */
static int holds(const char *dir, const char *name, char *path, size_t n)
{
    return *dir && snprintf(path, n, "%s/%s", dir, name) < (int)n && access(path, R_OK) == 0;
}

/* Another major of the library in dir ("libcupti.so.12" where libcupti.so.13 is looked for),
 * noted once for the message: a CUDA 12 environment's CUPTI is not the one wanted. */
static void note_other_major(const char *dir, const char *soname, text *other)
{
    const char *so = strstr(soname, ".so.");
    if (other->len || !so)
        return;
    size_t plen = (size_t)(so - soname) + 4;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        const char *v = e->d_name + plen;
        if (strncmp(e->d_name, soname, plen) || !strcmp(e->d_name, soname) || !isdigit(*v))
            continue;
        while (isdigit(*v))
            v++;
        if (*v) /* libcupti.so.2025.1.0: the file behind a soname, not one */
            continue;
        put(other, "; there: %s in ", e->d_name);
        put_path(other, dir);
        break;
    }
    if (d)
        closedir(d);
}

static int in_ld_path(const sb_cudalib *lib, char *path, size_t n, text *looked, text *other)
{
    const char *env = getenv("LD_LIBRARY_PATH");
    char copy[8192];
    snprintf(copy, sizeof copy, "%s", env ? env : "");
    /* empty entries (the current folder for the loader) are not followed: CMD may change it */
    for (char *rest = copy, *d; (d = strsep(&rest, ":;"));) {
        if (holds(d, lib->soname, path, n))
            return 1;
        if (*d)
            note_other_major(d, lib->soname, other);
    }
    put(looked, "LD_LIBRARY_PATH%s", env && *env ? "" : " (unset)");
    return 0;
}

static int in_toolkit(const sb_cudalib *lib, char *path, size_t n, text *looked, text *other)
{
    if (sb_cudalib_no_toolkit()) {
        put(looked, "; the toolkit (skipped: SYNCBENCH_NO_TOOLKIT=1)");
        return 0;
    }
    const char *home = getenv("CUDA_HOME");
    const char *roots[] = {home && *home ? home : NULL, "/usr/local/cuda"};
    put(looked, "; the toolkit's");
    int first = 1;
    for (size_t r = 0; r < 2; r++) {
        if (!roots[r] || (r == 1 && roots[0] && !strcmp(roots[0], roots[1])))
            continue;
        for (const char *const *sub = lib->toolkit; *sub; sub++) {
            char dir[PATH_MAX];
            snprintf(dir, sizeof dir, "%s/%s", roots[r], *sub);
            if (holds(dir, lib->soname, path, n))
                return 1;
            note_other_major(dir, lib->soname, other);
            put(looked, "%s", first ? " " : ", ");
            put_path(looked, dir);
            first = 0;
        }
    }
    return 0;
}

static int in_wheels(const sb_cudalib *lib, char *path, size_t n, text *looked, text *other)
{
    static sites s; /* large: not on a thread's stack */
    find_sites(&s);
    if (!s.n) {
        put(looked, "; the wheels (no site-packages folder: SYNCBENCH_SITE_PACKAGES, VIRTUAL_ENV "
                    "and CONDA_PREFIX unset)");
        return 0;
    }
    for (int i = 0; i < s.n; i++)
        for (const char *const *sub = lib->wheels; *sub; sub++) {
            char dir[PATH_MAX];
            if (snprintf(dir, sizeof dir, "%s/%s", s.dir[i], *sub) >= (int)sizeof dir)
                continue;
            if (holds(dir, lib->soname, path, n))
                return 1;
            note_other_major(dir, lib->soname, other);
        }
    put(looked, "; the wheels'");
    for (const char *const *sub = lib->wheels; *sub; sub++)
        put(looked, "%s%s", sub == lib->wheels ? " " : (sub[1] ? ", " : " and "), *sub);
    put(looked, " under ");
    for (int i = 0; i < s.n; i++) {
        put(looked, "%s", i ? ", " : "");
        put_path(looked, s.dir[i]);
    }
    return 0;
}

sb_cudalib_from sb_cudalib_find(const sb_cudalib *lib, char *path, size_t n, char *looked,
                                size_t looked_n)
{
    char other_buf[PATH_MAX + 64] = "";
    text where = {looked, looked_n, 0}, other = {other_buf, sizeof other_buf, 0};
    if (looked_n)
        looked[0] = '\0';
    sb_cudalib_from from = SB_CUDALIB_NONE;
    if (in_ld_path(lib, path, n, &where, &other))
        from = SB_CUDALIB_LD_PATH;
    else if (in_toolkit(lib, path, n, &where, &other))
        from = SB_CUDALIB_TOOLKIT;
    else if (in_wheels(lib, path, n, &where, &other))
        from = SB_CUDALIB_WHEEL;
    if (from == SB_CUDALIB_NONE)
        put(&where, "%s", other_buf);
    else if (looked_n)
        looked[0] = '\0';
    return from;
}
