/* The sync baseline's file (docs/baseline.md): an INI file read with inih as strictly as the
 * framework rows (fw_file.c): a [syncbench] section and a [site.N] section per site, every key
 * known, none twice, the required ones there. Errors are one line, "FILE:LINE: [SECTION]:
 * problem", LINE that of the section's header or of the key at fault. */
#include "analyze/baseline.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/iniline.h"
#include "base/regfile.h"

#define MAX_SITES 10000

enum { H_VERSION, H_PER, H_RANGE, H_SKIP, H_SYNCS, H_BLOCKED, H_N };
static const char *const head_keys[H_N] = {
    "version", "per", "range", "skip_first", "syncs_per_step", "blocked_us_per_step"};
enum { S_FILE, S_FUNC, S_TEXT, S_OP, S_LIB, S_LINE, S_BUDGET, S_SKIP, S_THREAD, S_NOTE, S_N };
static const char *const site_keys[S_N] = {"file",         "function", "text",   "operation",
                                           "library_line", "line",     "budget", "skip_first",
                                           "thread",       "note"};

typedef struct {
    const char *path;
    FILE *f;
    int line;
    char *err;
    size_t errn;
    int err_line; /* the line of the first error; -1 one without a line */
    sb_baseline *b;
    int section; /* 0 none, 1 [syncbench], 2 [site.N] */
    int head_at, head_lines[H_N], version;
    int (*site_lines)[S_N];
    size_t cap;
} bl_file;

__attribute__((format(printf, 3, 4))) static int bl_error(bl_file *c, int line, const char *fmt,
                                                          ...)
{
    if (c->err_line)
        return 0;
    char raw[1200];
    int k = snprintf(raw, sizeof raw, "%s:%d: ", c->path, line);
    va_list ap;
    va_start(ap, fmt);
    if (k >= 0 && (size_t)k < sizeof raw)
        vsnprintf(raw + k, sizeof raw - (size_t)k, fmt, ap);
    va_end(ap);
    sb_escape(raw, c->err, c->errn); /* a section or a value of the file may hold control bytes */
    c->err_line = line ? line : -1;
    return 0;
}

static const char *tag(const bl_file *c)
{
    return c->section == 2 ? c->b->sites[c->b->n - 1].section : "syncbench";
}

static int new_site(bl_file *c, const char *name)
{
    sb_baseline *b = c->b;
    if (b->n >= MAX_SITES)
        return bl_error(c, c->line, "[%.60s]: more than %d sites", name, MAX_SITES);
    for (size_t i = 0; i < b->n; i++)
        if (!strcmp(b->sites[i].section, name))
            return bl_error(c, c->line, "[%.60s]: section given twice (first at line %d)", name,
                            b->sites[i].at);
    if (b->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        sb_bl_site *s = realloc(b->sites, cap * sizeof *s);
        if (s)
            b->sites = s;
        int(*l)[S_N] = s ? realloc(c->site_lines, cap * sizeof *l) : NULL;
        if (!l)
            return bl_error(c, c->line, "out of memory");
        c->site_lines = l;
        c->cap = cap;
    }
    sb_bl_site *s = &b->sites[b->n];
    memset(s, 0, sizeof *s);
    memset(c->site_lines[b->n], 0, sizeof c->site_lines[b->n]);
    s->skip_first = -1;
    s->at = c->line;
    b->n++;
    if (!(s->section = strdup(name)))
        return bl_error(c, c->line, "out of memory");
    return 1;
}

/* "[syncbench]" or "[site.N]"; anything else is refused. */
static int read_header(bl_file *c, char *buf)
{
    char *end = strchr(buf, ']');
    if (!end)
        return bl_error(c, c->line, "section header without ']'");
    *end = '\0';
    const char *name = buf + 1;
    if (!strcmp(name, "syncbench")) {
        if (c->head_at)
            return bl_error(c, c->line, "[syncbench]: section given twice (first at line %d)",
                            c->head_at);
        c->head_at = c->line;
        c->section = 1;
    } else if (!strncmp(name, "site.", 5) && name[5] &&
               strspn(name + 5, "0123456789") == strlen(name + 5)) {
        if (!new_site(c, name))
            return 0;
        c->section = 2;
    } else {
        return bl_error(c, c->line, "[%.60s]: unknown section (expected [syncbench] or [site.N])",
                        name);
    }
    *end = ']';
    return 1;
}

/* One physical line (base/iniline.h); a header starts a row here, where its line is known. */
static char *read_line(char *buf, int num, void *stream)
{
    bl_file *c = stream;
    char why[64];
    int at = 0;
    if (c->err_line)
        return NULL;
    int rc = sb_ini_line(c->f, buf, num, &c->line, why, sizeof why, &at);
    if (rc < 0)
        bl_error(c, at, "%s", why);
    if (rc <= 0 || (buf[0] == '[' && !read_header(c, buf)))
        return NULL;
    return buf;
}

static int key_of(const char *const *keys, int n, const char *name)
{
    for (int k = 0; k < n; k++)
        if (!strcmp(keys[k], name))
            return k;
    return -1;
}

/* A whole number in [lo, hi] into *v, else an error naming the key. */
static int whole(bl_file *c, const char *key, const char *value, long long lo, long long hi,
                 long long *v)
{
    char *end;
    errno = 0;
    long long x = strtoll(value, &end, 10);
    if (!*value || *end || errno)
        return bl_error(c, c->line, "[%.60s]: %s = %.40s: expected a whole number", tag(c), key,
                        value);
    if (x < lo)
        return bl_error(c, c->line, "[%.60s]: %s = %lld: negative", tag(c), key, x);
    if (x > hi)
        return bl_error(c, c->line, "[%.60s]: %s = %lld: over %lld", tag(c), key, x, hi);
    *v = x;
    return 1;
}

static int number(bl_file *c, const char *key, const char *value, double *v)
{
    char *end;
    errno = 0;
    double x = strtod(value, &end);
    if (!*value || *end || errno || !(x >= 0 && x < 1e15))
        return bl_error(c, c->line, "[%.60s]: %s = %.40s: expected a number from 0", tag(c), key,
                        value);
    *v = x;
    return 1;
}

static int head_key(bl_file *c, int k, const char *value)
{
    sb_baseline *b = c->b;
    long long v = 0;
    switch (k) {
    case H_VERSION:
        if (!whole(c, "version", value, 1, 1000000, &v))
            return 0;
        if (v > SB_BASELINE_VERSION)
            return bl_error(c, c->line,
                            "[syncbench]: version %lld: newer than this syncbench reads (%d); "
                            "update syncbench",
                            v, SB_BASELINE_VERSION);
        c->version = (int)v;
        return 1;
    case H_PER:
        if (strcmp(value, "step") && strcmp(value, "run"))
            return bl_error(c, c->line, "[syncbench]: per = %.40s: expected step or run", value);
        b->per_step = !strcmp(value, "step");
        return 1;
    case H_RANGE:
        return (b->range = strdup(value)) ? 1 : bl_error(c, c->line, "out of memory");
    case H_SKIP:
        if (!whole(c, "skip_first", value, 0, 1000000000, &v))
            return 0;
        b->skip_first = (long)v;
        return 1;
    case H_SYNCS:
        return number(c, "syncs_per_step", value, &b->syncs_per_step);
    default:
        return number(c, "blocked_us_per_step", value, &b->blocked_us_per_step);
    }
}

static int site_key(bl_file *c, int k, const char *value)
{
    sb_bl_site *s = &c->b->sites[c->b->n - 1];
    char **text[] = {&s->file, &s->function, &s->text, &s->operation, &s->library_line,
                     NULL,     NULL,         NULL,     &s->thread,    &s->note};
    long long v = 0;
    if (k == S_LINE || k == S_BUDGET || k == S_SKIP) {
        if (!whole(c, site_keys[k], value, 0, k == S_LINE ? 100000000 : 1000000000000000, &v))
            return 0;
        if (k == S_LINE)
            s->line = (int)v;
        else if (k == S_BUDGET)
            s->budget = v;
        else
            s->skip_first = (long)v;
        return 1;
    }
    if (k == S_THREAD && *value && strspn(value, "0123456789") != strlen(value))
        return bl_error(c, c->line,
                        "[%.60s]: thread = %.40s: expected a thread id (the records name threads "
                        "by tid)",
                        s->section, value);
    if ((k == S_FILE || k == S_OP) && !*value)
        return bl_error(c, c->line, "[%.60s]: %s is empty", s->section, site_keys[k]);
    free(*text[k]);
    return (*text[k] = strdup(value)) ? 1 : bl_error(c, c->line, "out of memory");
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    bl_file *c = user;
    (void)section; /* the sections come from the headers read_line saw */
    if (c->err_line)
        return 0;
    if (!c->section)
        return bl_error(c, c->line, "key '%.40s' outside a section ([syncbench] or [site.N])",
                        name);
    int head = c->section == 1;
    int k = head ? key_of(head_keys, H_N, name) : key_of(site_keys, S_N, name);
    if (k < 0)
        return bl_error(c, c->line, "[%.60s]: unknown key '%.40s' (keys: %s)", tag(c), name,
                        head ? "version, per, range, skip_first, syncs_per_step, "
                               "blocked_us_per_step"
                             : "file, function, text, operation, library_line, line, budget, "
                               "skip_first, thread, note");
    int *lines = head ? c->head_lines : c->site_lines[c->b->n - 1];
    if (lines[k])
        return bl_error(c, c->line, "[%.60s]: key '%s' given twice (first at line %d)", tag(c),
                        name, lines[k]);
    lines[k] = c->line;
    return head ? head_key(c, k, value) : site_key(c, k, value);
}

static int same_key(const sb_bl_site *a, const sb_bl_site *b)
{
    return !strcmp(a->file, b->file) && !strcmp(a->function, b->function) &&
           !strcmp(a->text, b->text) && !strcmp(a->operation, b->operation) &&
           !strcmp(a->library_line, b->library_line) && !strcmp(a->thread, b->thread);
}

/* Every required key there, the optional ones "", no two sites of one key. */
static void check_all(bl_file *c)
{
    sb_baseline *b = c->b;
    static const int required[] = {S_FILE, S_FUNC, S_TEXT, S_OP, S_BUDGET};
    if (!c->head_at)
        bl_error(c, 1, "[syncbench]: missing (the file's version, per and range)");
    else if (!c->head_lines[H_VERSION] || !c->head_lines[H_PER])
        bl_error(c, c->head_at, "[syncbench]: missing key '%s'",
                 c->head_lines[H_VERSION] ? "per" : "version");
    else if (b->per_step && (!b->range || !*b->range))
        bl_error(c, c->head_lines[H_RANGE] ? c->head_lines[H_RANGE] : c->head_at,
                 "[syncbench]: per = step needs a range (the NVTX range a step is)");
    for (size_t i = 0; i < b->n && !c->err_line; i++) {
        sb_bl_site *s = &b->sites[i];
        for (size_t r = 0; r < sizeof required / sizeof *required && !c->err_line; r++)
            if (!c->site_lines[i][required[r]])
                bl_error(c, s->at, "[%.60s]: missing key '%s'", s->section, site_keys[required[r]]);
        char **opt[] = {&s->library_line, &s->thread, &s->note};
        for (size_t k = 0; k < 3 && !c->err_line; k++)
            if (!*opt[k] && !(*opt[k] = strdup("")))
                bl_error(c, s->at, "out of memory");
        for (size_t j = 0; j < i && !c->err_line; j++)
            if (same_key(&b->sites[j], s))
                bl_error(c, s->at,
                         "[%.60s]: the same site as [%s] (line %d): file, function, "
                         "text, operation, library_line and thread",
                         s->section, b->sites[j].section, b->sites[j].at);
    }
}

/* Opened without blocking (a FIFO would wait for a writer) and held to a regular file
 * (base/regfile.h). */
static FILE *open_file(const char *path, char *err, size_t errn)
{
    FILE *f = NULL;
    int rc = sb_open_regular(path, &f);
    if (rc == SB_REG_ERRNO)
        snprintf(err, errn, "%s: cannot open: %s", path, sb_regular_why(rc));
    else if (rc)
        snprintf(err, errn, "%s: %s", path,
                 rc == SB_REG_DIR ? "is a directory" : "not a regular file");
    return rc ? NULL : f;
}

void sb_baseline_free(sb_baseline *b)
{
    if (!b)
        return;
    for (size_t i = 0; i < b->n; i++) {
        sb_bl_site *s = &b->sites[i];
        char *text[] = {s->file,         s->function, s->text, s->operation,
                        s->library_line, s->thread,   s->note, s->section};
        for (size_t k = 0; k < sizeof text / sizeof *text; k++)
            free(text[k]);
    }
    free(b->sites);
    free(b->range);
    free(b->path);
    free(b);
}

int sb_baseline_load(const char *path, sb_baseline **out, char *err, size_t errn)
{
    *out = NULL;
    bl_file c = {.path = path, .err = err, .errn = errn};
    if (!(c.b = calloc(1, sizeof *c.b)) || !(c.b->path = strdup(path))) {
        free(c.b);
        snprintf(err, errn, "%s: out of memory", path);
        return -1;
    }
    c.b->syncs_per_step = c.b->blocked_us_per_step = -1;
    if (!(c.f = open_file(path, err, errn))) {
        sb_baseline_free(c.b);
        return -1;
    }
    int syntax = ini_parse_stream(read_line, &c, on_key, &c);
    if (!c.err_line && ferror(c.f))
        bl_error(&c, c.line + 1, "read error: %s", strerror(errno));
    fclose(c.f);
    if (syntax > 0 && (!c.err_line || syntax < c.err_line)) {
        c.err_line = 0; /* inih's error comes first */
        bl_error(&c, syntax, "syntax error: expected [SECTION], key = value or a ; comment");
    } else if (syntax < 0 && !c.err_line) {
        bl_error(&c, c.line, "out of memory");
    }
    if (!c.err_line)
        check_all(&c);
    free(c.site_lines);
    if (c.err_line) {
        sb_baseline_free(c.b);
        return -1;
    }
    *out = c.b;
    return 0;
}
