/* The Python line a user sees for a blocking call: the innermost frame of their own code, its
 * file shown relative to the current folder, and the text of that line. */
#include "analyze/analyze.h"

#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const sb_audit_pystack *sb_audit_find_pystack(const sb_audit_proc *p, int64_t id)
{
    return sb_audit_find_by_id(p->pystacks, p->npystacks, sizeof *p->pystacks, id); /* sorted */
}

/* Not the user's code: "<frozen runpy>" and "<string>", the standard library
 * (.../lib/python3.12/...) and installed packages (site-packages, dist-packages). */
int sb_audit_py_library(const char *file)
{
    return file[0] == '<' || strstr(file, "/site-packages/") || strstr(file, "/dist-packages/") ||
           strstr(file, "/lib/python3") || strstr(file, "/lib64/python3");
}

const sb_audit_pyframe *sb_audit_py_pick(const sb_audit_pystack *s, int innermost)
{
    if (!s || !s->nframes)
        return NULL;
    for (int i = 0; !innermost && i < s->nframes; i++)
        if (!sb_audit_py_library(s->frames[i].file))
            return &s->frames[i];
    return &s->frames[0]; /* only library frames: the innermost, as it is */
}

const char *sb_audit_py_site(sb_strpool *strs, const sb_audit_pyframe *f)
{
    static char cwd[PATH_MAX];
    static size_t ncwd;
    if (!ncwd && getcwd(cwd, sizeof cwd - 1)) {
        ncwd = strlen(cwd);
        if (ncwd > 1)
            cwd[ncwd++] = '/', cwd[ncwd] = 0;
    }
    const char *file = f->file;
    if (ncwd > 1 && !strncmp(file, cwd, ncwd))
        file += ncwd;
    char buf[2048];
    if (f->line > 0)
        sb_audit_fmt(buf, sizeof buf, "%s:%d in %s", file, f->line, f->func);
    else
        sb_audit_fmt(buf, sizeof buf, "%s in %s", file, f->func);
    return sb_audit_intern(strs, buf);
}

/* ---- source lines, read once per file ---- */

typedef struct {
    const char *file; /* interned: compared by pointer */
    char *text;       /* NULL: unreadable */
    size_t *starts;   /* offset of each line */
    size_t nlines;
} source_file;

typedef struct {
    source_file *f;
    size_t n, cap;
} source_cache;

#define SOURCE_MAX (16 << 20) /* larger files are not read */

static void read_source(source_file *s)
{
    /* a regular file only: a record may name a FIFO or a device, which could block */
    int fd = s->file[0] == '/' ? open(s->file, O_RDONLY | O_NONBLOCK | O_CLOEXEC) : -1;
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    FILE *f = fd >= 0 ? fdopen(fd, "rb") : NULL;
    if (!f) {
        if (fd >= 0)
            close(fd);
        return;
    }
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

const char *sb_audit_py_source(sb_audit_run *run, const sb_audit_pyframe *f)
{
    source_cache *c = run->py_files;
    if (!c && !(c = run->py_files = calloc(1, sizeof *c)))
        return NULL;
    source_file *s = NULL;
    for (size_t i = 0; i < c->n && !s; i++)
        if (c->f[i].file == f->file)
            s = &c->f[i];
    if (!s) {
        if (sb_grow(&c->f, &c->cap, c->n, sizeof *c->f) < 0)
            return NULL;
        s = &c->f[c->n++];
        memset(s, 0, sizeof *s);
        s->file = f->file;
        read_source(s);
    }
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

void sb_audit_py_cache_free(sb_audit_run *run)
{
    source_cache *c = run->py_files;
    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++) {
        free(c->f[i].text);
        free(c->f[i].starts);
    }
    free(c->f);
    free(c);
    run->py_files = NULL;
}
