/* The Python line a user sees for a blocking call: the innermost frame of their own code, its
 * file shown relative to the current folder, and the text of that line. */
#include "analyze/analyze.h"
#include "base/regfile.h"
#include "base/arrays.h"
#include "base/utf8.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const sb_audit_pystack *sb_audit_find_pystack(const sb_audit_proc *p, int64_t id)
{
    return sb_audit_find_by_id(p->pystacks, p->npystacks, sizeof *p->pystacks, id); /* sorted */
}

/* Not the user's code: "<frozen runpy>" and "<string>", the standard library
 * (.../lib/python3.12/...), installed packages (site-packages, dist-packages) and code torch
 * generated (compile_group.c: Inductor's cache). */
int sb_audit_py_library(const char *file)
{
    return file[0] == '<' || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
           strstr(file, "/lib/python3") || strstr(file, "/lib64/python3") ||
           sb_audit_py_generated(file);
}

/* The innermost frame that is not generated code, which no site or line may name; NULL: none. */
static const sb_audit_pyframe *innermost_shown(const sb_audit_pystack *s)
{
    for (int i = 0; s && i < s->nframes; i++)
        if (!sb_audit_py_generated(s->frames[i].file))
            return &s->frames[i];
    return NULL;
}

const sb_audit_pyframe *sb_audit_py_pick(const sb_audit_pystack *s, int innermost)
{
    if (!s || !s->nframes)
        return NULL;
    for (int i = 0; !innermost && i < s->nframes; i++)
        if (!sb_audit_py_library(s->frames[i].file))
            return &s->frames[i];
    return innermost_shown(s); /* only library frames: the innermost, as it is (not generated) */
}

const char *sb_audit_py_in_package(const char *file)
{
    static const char *const roots[] = {"/site-packages/", "/dist-packages/"};
    const char *pkg = NULL;
    for (size_t i = 0; i < sizeof roots / sizeof roots[0]; i++)
        for (const char *at = file; (at = strstr(at, roots[i])); at++)
            pkg = at + strlen(roots[i]);
    return pkg && *pkg ? pkg : NULL;
}

const char *sb_audit_py_package(const char *file, char *buf, size_t n)
{
    const char *pkg = sb_audit_py_in_package(file);
    size_t len = pkg ? strcspn(pkg, "/") : 0;
    if (pkg && !pkg[len]) /* a module of its own ("six.py"): its name */
        len = strcspn(pkg, ".");
    sb_audit_fmt(buf, n, "%.*s", (int)len, pkg ? pkg : "");
    return buf;
}

static int framework(const char *pkg)
{
    for (int i = 0; sb_audit_rule_frameworks[i]; i++)
        if (!strcmp(pkg, sb_audit_rule_frameworks[i]))
            return 1;
    return 0;
}

const sb_audit_pyframe *sb_audit_py_lib_frame(const sb_audit_pystack *s, char *pkg, size_t n)
{
    for (int i = 0; s && i < s->nframes; i++) {
        const char *file = s->frames[i].file;
        if (!sb_audit_py_library(file))
            break; /* the user's code: what it calls is its own */
        if (*sb_audit_py_package(file, pkg, n) && !framework(pkg))
            return &s->frames[i];
    }
    sb_audit_fmt(pkg, n, "%s", "");
    return NULL;
}

/* A frame's file as a user reads it: relative to the current folder when under it; with
 * installed, an installed package's file from its package on ("transformers/utils.py"). */
static const char *shown_file(const char *file, int installed)
{
    static char cwd[PATH_MAX];
    static size_t ncwd;
    if (!ncwd && getcwd(cwd, sizeof cwd - 1)) {
        ncwd = strlen(cwd);
        if (ncwd > 1)
            cwd[ncwd++] = '/', cwd[ncwd] = 0;
    }
    const char *pkg = installed ? sb_audit_py_in_package(file) : NULL;
    if (pkg)
        return pkg;
    if (ncwd > 1 && !strncmp(file, cwd, ncwd))
        return file + ncwd;
    return file;
}

static const char *site_text(sb_strpool *strs, const sb_audit_pyframe *f, int installed)
{
    const char *file = shown_file(f->file, installed);
    char buf[2048];
    if (f->line > 0)
        sb_audit_fmt(buf, sizeof buf, "%s:%d in %s", file, f->line, f->func);
    else
        sb_audit_fmt(buf, sizeof buf, "%s in %s", file, f->func);
    return sb_audit_intern(strs, buf);
}

const char *sb_audit_py_site(sb_strpool *strs, const sb_audit_pyframe *f)
{
    return site_text(strs, f, 0);
}

const char *sb_audit_py_file_line(sb_strpool *strs, const char *file, int line)
{
    char buf[2048];
    sb_audit_fmt(buf, sizeof buf, "%s:%d", shown_file(file, 0), line);
    return sb_audit_intern(strs, buf);
}

int sb_audit_py_made(sb_audit_analysis *an, const sb_audit_pystack *s, const sb_audit_call_info *ci,
                     sb_audit_made *m)
{
    sb_audit_run *run = an->run;
    const char *none = sb_audit_intern(&run->strs, "");
    *m = (sb_audit_made){.via_site = none,
                         .via_source = none,
                         .lib_source = none,
                         .library = none,
                         .fix = none,
                         .fix_at = none};
    if (!none)
        return -1;
    if (!s || !s->nframes || !ci->pyframe)
        return 0;
    if (ci->pyframe != innermost_shown(s)) {
        m->via = innermost_shown(s);
        m->via_site = site_text(&run->strs, m->via, 1);
        m->via_source = sb_audit_py_source(an, m->via);
        if (!m->via_site || !m->via_source)
            return -1;
    }
    char pkg[256];
    if (!(m->lib = sb_audit_py_lib_frame(s, pkg, sizeof pkg)))
        return 0;
    m->library = sb_audit_intern(&run->strs, pkg);
    m->lib_source = m->lib == m->via        ? m->via_source
                    : m->lib == ci->pyframe ? ci->source
                                            : sb_audit_py_source(an, m->lib);
    return m->library && m->lib_source ? 0 : -1;
}

/* ---- source lines, read once per file ---- */

typedef struct {
    const char *file; /* interned: compared by pointer */
    char *text;       /* NULL: unreadable */
    size_t *starts;   /* offset of each line */
    size_t nlines;
} source_file;

typedef struct sb_audit_py_files {
    source_file *f;
    size_t n, cap;
} source_cache;

#define SOURCE_MAX (16 << 20) /* larger files are not read */

/* A path that names a Python source: *.py. */
static int is_py(const char *path)
{
    size_t n = strlen(path);
    return n > 3 && !strcmp(path + n - 3, ".py") && path[n - 4] != '/';
}

static void read_source(source_file *s)
{
    /* a Python source only, a regular file: a record (--from) may name a FIFO or a device,
     * which could block, or /etc/shadow, whose line the report would show */
    FILE *f;
    char real[PATH_MAX];
    if (s->file[0] != '/' || !is_py(s->file) || !realpath(s->file, real) || !is_py(real) ||
        sb_open_regular(real, &f) != SB_REG_OK)
        return;
    char *text = malloc(SOURCE_MAX + 1);
    size_t n = text ? fread(text, 1, SOURCE_MAX + 1, f) : 0;
    fclose(f);
    if (!text || n > SOURCE_MAX) {
        free(text);
        return;
    }
    text[n] = 0;
    size_t lines = 1;
    for (size_t i = 0; i < n; i++)
        lines += text[i] == '\n';
    s->starts = malloc(lines * sizeof *s->starts);
    if (!s->starts) {
        free(text);
        return;
    }
    s->starts[s->nlines++] = 0;
    for (size_t i = 0; i < n; i++)
        if (text[i] == '\n') {
            text[i] = 0;
            s->starts[s->nlines++] = i + 1;
        }
    s->text = text;
}

/* The file's lines, read once (file interned); NULL out of memory. */
static source_file *source_of(sb_audit_analysis *an, const char *file)
{
    source_cache *c = an->py_files;
    if (!c && !(c = an->py_files = calloc(1, sizeof *c)))
        return NULL;
    for (size_t i = 0; i < c->n; i++)
        if (c->f[i].file == file)
            return &c->f[i];
    if (sb_grow(&c->f, &c->cap, c->n, sizeof *c->f) < 0)
        return NULL;
    source_file *s = &c->f[c->n++];
    memset(s, 0, sizeof *s);
    s->file = file;
    read_source(s);
    return s;
}

/* Does a triple quote open or close a string on this line (an odd count of them)? */
static int toggles_docstring(const char *line)
{
    int n = 0;
    for (const char *p = line; *p; p++)
        if ((p[0] == '"' || p[0] == '\'') && p[1] == p[0] && p[2] == p[0]) {
            n++;
            p += 2;
        }
    return n % 2;
}

int sb_audit_py_find_line(sb_audit_analysis *an, const char *file, const char *alts)
{
    const source_file *s = source_of(an, file);
    int in_string = 0; /* inside a docstring: text, not code */
    for (size_t i = 0; s && s->text && i < s->nlines; i++) {
        const char *line = s->text + s->starts[i];
        int was = in_string;
        in_string ^= toggles_docstring(line);
        const char *code = line + strspn(line, " \t");
        if (was || in_string || code[0] == '#' || !strncmp(code, "\"\"\"", 3) ||
            !strncmp(code, "\'\'\'", 3))
            continue;
        for (const char *a = alts; *a;) {
            size_t n = strcspn(a, "|");
            for (const char *p = line; n && (p = strchr(p, a[0])); p++)
                if (!strncmp(p, a, n))
                    return (int)i + 1;
            a += n + (a[n] == '|');
        }
    }
    return 0;
}

const char *sb_audit_py_source(sb_audit_analysis *an, const sb_audit_pyframe *f)
{
    sb_audit_run *run = an->run;
    source_file *s = source_of(an, f->file);
    if (!s)
        return NULL;
    if (!s->text || f->line <= 0 || (size_t)f->line > s->nlines)
        return sb_audit_intern(&run->strs, "");
    const char *line = s->text + s->starts[f->line - 1];
    while (*line == ' ' || *line == '\t')
        line++;
    char buf[512];
    sb_audit_fmt(buf, sizeof buf, "%s", line);
    size_t n = strlen(buf);
    while (n && (buf[n - 1] == '\r' || buf[n - 1] == ' '))
        buf[--n] = 0;
    return sb_audit_intern(&run->strs, buf);
}

void sb_audit_py_cache_free(sb_audit_analysis *an)
{
    source_cache *c = an->py_files;
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->f[i].text);
        free(c->f[i].starts);
    }
    free(c->f);
    free(c);
    an->py_files = NULL;
}
