/* Rows a user adds to the framework table (`syncbench audit --rules FILE`): an INI file read
 * with inih, one section [ID] per row, every string copied; the rows' checks, which the built-in
 * table is held to as well. Errors are one line, "FILE:LINE: [ID]: problem", LINE that of the
 * section's header or of the key at fault. */
#include "analyze/frameworks.h"

#include <errno.h>
#include <fcntl.h>
#include <ini.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/iniline.h"
#include "base/regfile.h"
#include "scenarios/registry.h"

#define MAX_ROWS 4096

/* The row's text fields, in the order of `field_at`; F_REMOVES is the int. */
enum {
    F_ID,
    F_PACKAGE,
    F_VERSIONS,
    F_MODULE,
    F_FUNC,
    F_TEXT,
    F_WHAT,
    F_FIX,
    F_CAVEAT,
    F_WHERE,
    F_SCENARIO,
    F_REMOVES,
    F_N
};

static const char *const key_names[F_N] = {
    "id",   "package", "versions", "module", "function", "text",
    "what", "fix",     "caveat",   "where",  "scenario", "removes",
};
static const size_t field_at[F_REMOVES] = {
    offsetof(sb_fw_row, id),     offsetof(sb_fw_row, package),  offsetof(sb_fw_row, versions),
    offsetof(sb_fw_row, module), offsetof(sb_fw_row, func),     offsetof(sb_fw_row, text),
    offsetof(sb_fw_row, what),   offsetof(sb_fw_row, fix),      offsetof(sb_fw_row, caveat),
    offsetof(sb_fw_row, where),  offsetof(sb_fw_row, scenario),
};

static const char **field(sb_fw_row *r, int f)
{
    return (const char **)((char *)r + field_at[f]);
}

static const char *field_of(const sb_fw_row *r, int f)
{
    return *(const char *const *)((const char *)r + field_at[f]);
}

/* ---- the rows kept for the analysis ---- */

static const sb_fw_row *user_rows;
static size_t n_user_rows;

void sb_fw_use_user_rows(const sb_fw_row *rows, size_t n)
{
    user_rows = n ? rows : NULL;
    n_user_rows = rows ? n : 0;
}

const sb_fw_row *sb_fw_user_rows(size_t *n)
{
    *n = n_user_rows;
    return user_rows;
}

/* ---- a row's checks ---- */

static int id_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '.' || ch == '_' || ch == '-';
}

/* Is any alternative of "a|b" empty ("a||b", "|a", "a|")? */
static int empty_alternative(const char *alts)
{
    for (const char *p = alts;; p++) {
        size_t len = strcspn(p, "|");
        if (!len)
            return 1;
        p += len;
        if (!*p)
            return 0;
    }
}

/* The package as a module's first folder: itself, or with '-' read as '_'
 * ("pytorch-lightning" -> "pytorch_lightning"); a single-file package is PACKAGE.py. */
static int in_package(const char *pkg, const char *mod, size_t len)
{
    size_t n = strlen(pkg);
    const char *slash = memchr(mod, '/', len);
    size_t first = slash ? (size_t)(slash - mod) : len;
    if (!slash && first == n + 3 && !strncmp(mod + n, ".py", 3))
        first = n;
    if (first != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (mod[i] != pkg[i] && !(pkg[i] == '-' && mod[i] == '_'))
            return 0;
    return 1;
}

static const char *module_problem(const char *pkg, const char *alts, char *buf, size_t n)
{
    for (const char *p = alts;; p++) {
        size_t len = strcspn(p, "|");
        if (len < 3 || strncmp(p + len - 3, ".py", 3)) {
            snprintf(buf, n, "module '%.*s' is not a .py file", (int)(len > 80 ? 80 : len), p);
            return buf;
        }
        if (!in_package(pkg, p, len)) {
            snprintf(buf, n, "module '%.*s' is not in package '%s' (its first folder is not %s)",
                     (int)(len > 80 ? 80 : len), p, pkg, pkg);
            return buf;
        }
        p += len;
        if (!*p)
            return NULL;
    }
}

/* sb_fw_row_problem, with the field at fault in *f. */
static const char *row_problem(const sb_fw_row *r, int *f)
{
    static _Thread_local char buf[320];
    *f = F_ID;
    if (!r->id || !*r->id)
        return "no id";
    for (const char *p = r->id; *p; p++)
        if (!id_char(*p))
            return "the id may hold only letters, digits, '.', '_' and '-'";
    for (*f = F_PACKAGE; *f <= F_FIX; ++*f)
        if (!field_of(r, *f) || !*field_of(r, *f)) {
            snprintf(buf, sizeof buf, "no %s (%s = ... is required)", key_names[*f], key_names[*f]);
            return buf;
        }
    if (((*f = F_MODULE), module_problem(r->package, r->module, buf, sizeof buf)))
        return buf;
    for (*f = F_FUNC; *f <= F_WHERE; ++*f) {
        const char *alts = field_of(r, *f);
        if ((*f == F_FUNC || *f == F_TEXT || *f == F_WHERE) && alts && *alts &&
            empty_alternative(alts)) {
            snprintf(buf, sizeof buf, "%s: an empty alternative ('a||b', or '|' at an end)",
                     key_names[*f]);
            return buf;
        }
    }
    *f = F_SCENARIO;
    if (r->scenario && *r->scenario && !sb_scenario_find(r->scenario)) {
        sb_unknown_scenario(r->scenario, buf, sizeof buf);
        return buf;
    }
    *f = F_REMOVES;
    if (r->removes != 0 && r->removes != 1)
        return "removes is neither 0 nor 1";
    return NULL;
}

const char *sb_fw_row_problem(const sb_fw_row *r)
{
    int f;
    return row_problem(r, &f);
}

/* ---- the file ---- */

typedef struct {
    const char *path;
    FILE *f;
    int line; /* of the line inih is handling */
    sb_fw_row *rows;
    int (*lines)[F_N]; /* per row, the line of its header (F_ID) and of each key given; 0: none */
    size_t n, cap;
    char *err;
    size_t errn;
    int err_line; /* of the first error, 0 if none */
} fw_file;

static int fw_error(fw_file *c, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "FILE:LINE: [ID]: problem" (without [ID] before the first section); the first one wins. */
static int fw_error(fw_file *c, int line, const char *fmt, ...)
{
    if (c->err_line)
        return 0;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->err_line = line > 0 ? line : 1;
    char raw[1200];
    snprintf(raw, sizeof raw, "%s:%d: %s", c->path, c->err_line, msg);
    sb_escape(raw, c->err, c->errn); /* an id or a value of the file may hold control bytes */
    return 0;
}

/* "[ID]: " of the row that holds line, or "" before the first. */
static const char *row_at(const fw_file *c, int line, char *buf, size_t n)
{
    size_t i = c->n;
    while (i && c->lines[i - 1][F_ID] > line)
        i--;
    if (!i)
        return "";
    snprintf(buf, n, "[%.60s]: ", c->rows[i - 1].id);
    return buf;
}

/* The current row's "[ID]: ", or "" before the first. */
static const char *row_tag(const fw_file *c, char *buf, size_t n)
{
    return row_at(c, c->line, buf, n);
}

/* A header "[ID]" (blanks and a ; or # comment may follow): a new row. The line is left as it
 * is, for inih. */
static int read_header(fw_file *c, const char *p)
{
    const char *end = strchr(p, ']');
    if (!end)
        return fw_error(c, c->line, "section header without ']'");
    const char *name = p + 1 + strspn(p + 1, " \t"), *rest = end + 1;
    int len = (int)(end - name);
    while (len && (name[len - 1] == ' ' || name[len - 1] == '\t'))
        len--;
    rest += strspn(rest, " \t");
    if (*rest && *rest != ';' && *rest != '#')
        return fw_error(c, c->line,
                        "[%.*s]: text after the header (a key goes on a line of its own, below "
                        "it)",
                        len > 60 ? 60 : len, name);
    for (size_t i = 0; i < c->n; i++)
        if (strlen(c->rows[i].id) == (size_t)len && !strncmp(c->rows[i].id, name, len))
            return fw_error(c, c->line, "[%.*s]: row id given twice (first at line %d)",
                            len > 60 ? 60 : len, name, c->lines[i][F_ID]);
    if (c->n == MAX_ROWS)
        return fw_error(c, c->line, "more than %d rows", MAX_ROWS);
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        sb_fw_row *rows = realloc(c->rows, cap * sizeof *rows);
        if (rows)
            c->rows = rows;
        int(*lines)[F_N] = rows ? realloc(c->lines, cap * sizeof *lines) : NULL;
        if (!lines)
            return fw_error(c, c->line, "out of memory");
        c->lines = lines;
        c->cap = cap;
    }
    memset(&c->rows[c->n], 0, sizeof c->rows[c->n]);
    memset(c->lines[c->n], 0, sizeof c->lines[c->n]);
    c->rows[c->n].id = strndup(name, (size_t)len);
    c->lines[c->n][F_ID] = c->line;
    if (!c->rows[c->n].id)
        return fw_error(c, c->line, "out of memory");
    c->n++;
    return 1;
}

/* One physical line (base/iniline.h); a header starts a row here, where its line is known. */
static char *read_line(char *buf, int num, void *stream)
{
    fw_file *c = stream;
    char why[64];
    int at = 0;
    if (c->err_line)
        return NULL;
    int rc = sb_ini_line(c->f, buf, num, &c->line, why, sizeof why, &at);
    if (rc < 0)
        fw_error(c, at, "%s", why);
    if (rc <= 0 || (buf[0] == '[' && !read_header(c, buf)))
        return NULL;
    return buf;
}

static int key_index(const char *name)
{
    for (int f = F_PACKAGE; f < F_N; f++)
        if (!strcmp(key_names[f], name))
            return f;
    return -1;
}

static int set_removes(fw_file *c, sb_fw_row *r, const char *value)
{
    static const char *const yes[] = {"true", "1", "yes"}, *const no[] = {"false", "0", "no"};
    for (int i = 0; i < 3; i++)
        if (!strcasecmp(value, yes[i]) || !strcasecmp(value, no[i])) {
            r->removes = !strcasecmp(value, yes[i]);
            return 1;
        }
    return fw_error(c, c->line, "[%.60s]: removes = %.40s: expected true or false (1/0, yes/no)",
                    r->id, value);
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    fw_file *c = user;
    char tag[80];
    (void)section; /* the rows come from the headers read_line saw */
    if (c->err_line)
        return 0;
    if (!c->n)
        return fw_error(c, c->line, "key '%.40s' outside a row; each row starts with [ID]", name);
    sb_fw_row *r = &c->rows[c->n - 1];
    int *lines = c->lines[c->n - 1], f = key_index(name);
    if (f < 0)
        return fw_error(c, c->line,
                        "%sunknown key '%.40s' (keys: package, versions, module, function, text, "
                        "what, fix, caveat, where, scenario, removes)",
                        row_tag(c, tag, sizeof tag), name);
    if (lines[f])
        return fw_error(c, c->line, "%skey '%s' given twice (first at line %d)",
                        row_tag(c, tag, sizeof tag), name, lines[f]);
    lines[f] = c->line;
    if (f == F_REMOVES)
        return set_removes(c, r, value);
    if (!(*field(r, f) = strdup(value)))
        return fw_error(c, c->line, "out of memory");
    return 1;
}

void sb_fw_file_free(sb_fw_row *rows, size_t n)
{
    for (size_t i = 0; rows && i < n; i++)
        for (int f = F_ID; f < F_REMOVES; f++)
            free((char *)field_of(&rows[i], f));
    free(rows);
}

/* Opened without blocking (a FIFO would wait for a writer) and held to a regular file
 * (base/regfile.h). */
static FILE *open_rules(const char *path, char *err, size_t errn)
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

/* Every row whole, with its optional fields filled: caveat "" when not given, where and
 * scenario NULL when not given or empty. */
static void check_rows(fw_file *c)
{
    for (size_t i = 0; i < c->n && !c->err_line; i++) {
        sb_fw_row *r = &c->rows[i];
        for (int f = F_WHERE; f <= F_SCENARIO; f++)
            if (*field(r, f) && !**field(r, f)) {
                free((char *)*field(r, f));
                *field(r, f) = NULL;
            }
        if (!r->caveat && !(r->caveat = strdup(""))) {
            fw_error(c, c->lines[i][F_ID], "out of memory");
            return;
        }
        int f;
        const char *problem = row_problem(r, &f);
        if (problem)
            fw_error(c, c->lines[i][f] ? c->lines[i][f] : c->lines[i][F_ID], "[%.60s]: %s", r->id,
                     problem);
    }
}

int sb_fw_file_load(const char *path, sb_fw_row **rows, size_t *n, char *err, size_t errn)
{
    *rows = NULL;
    *n = 0;
    fw_file c = {.path = path, .err = err, .errn = errn};
    if (!(c.f = open_rules(path, err, errn)))
        return -1;
    int syntax = ini_parse_stream(read_line, &c, on_key, &c);
    if (!c.err_line && ferror(c.f))
        fw_error(&c, c.line + 1, "read error: %s", strerror(errno));
    fclose(c.f);
    if (syntax > 0 && (!c.err_line || syntax < c.err_line)) {
        char tag[80];
        c.err_line = 0; /* inih's error comes first */
        fw_error(&c, syntax, "%ssyntax error: expected [ID], key = value or a ; comment",
                 row_at(&c, syntax, tag, sizeof tag));
    } else if (syntax < 0 && !c.err_line) {
        fw_error(&c, c.line, "out of memory");
    }
    if (!c.err_line && !c.n) {
        snprintf(err, errn, "%s: no rows (an [ID] section per row)", path);
        c.err_line = -1;
    }
    if (!c.err_line)
        check_rows(&c);
    if (c.err_line) {
        sb_fw_file_free(c.rows, c.n);
        free(c.lines);
        return -1;
    }
    free(c.lines);
    *rows = c.rows;
    *n = c.n;
    return 0;
}
