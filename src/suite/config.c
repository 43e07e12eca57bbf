#include "suite/config.h"

#include <errno.h>
#include <ini.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"
#include "base/textutil.h"
#include "scenarios/registry.h"

#define MAX_SECTIONS 256
#define MAX_KEYS 64
/* inih passes at most 49 characters of a section name (MAX_SECTION in its ini.c): a longer one
 * would not be found again when its keys arrive */
#define MAX_SECTION_NAME 49
/* a suite is a few hundred short lines; this bounds what a link to /dev/zero costs */
#define MAX_SUITE_BYTES (16u << 20)

typedef struct {
    char *key, *value;
    int line;
} cfg_key;

typedef struct {
    char name[64];
    int line;
    cfg_key keys[MAX_KEYS];
    int n_keys;
} cfg_section;

typedef struct {
    const char *path;
    char *text; /* the whole file, read once: a pipe (`--config <(...)`) cannot be read twice */
    size_t len, pos;
    int line;        /* of the line inih is handling */
    sb_suite *suite; /* its `samples = PATH`: set once, by the key before the first section */
    cfg_section *sections;
    int n_sections;
    int failed;           /* the exit code of the first error, 0 if none */
    char found[PATH_MAX]; /* an installed suite's path (find_installed) */
} cfg_file;

static int cfg_getc(cfg_file *c)
{
    return c->pos < c->len ? (unsigned char)c->text[c->pos++] : EOF;
}

static int cfg_error(cfg_file *c, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int cfg_error(cfg_file *c, int line, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return c->failed = sb_fail(SB_EXIT_USAGE, "%s:%d: %s", c->path, line, msg);
}

/* A CR just read is part of a CRLF ending or the file's last byte; any other (CR-only line
 * endings, a CR inside a line) is refused: inih would read a CR-only file as one line, its
 * first header, and plan the defaults without a word. */
static int cr_ends_line(cfg_file *c, int lineno)
{
    if (c->pos == c->len || c->text[c->pos] == '\n')
        return 1;
    cfg_error(c, lineno,
              "carriage return without a line feed (CR-only line endings?); save the file with "
              "LF or CRLF line endings");
    return 0;
}

/* One physical line into buf (num bytes): a line that does not fit is refused, never split
 * (inih would read its rest as a new line), and so is a NUL byte (inih would read the line only
 * up to it, and a long line holding one would pass for a short one); a CRLF ending counts as one
 * byte, as LF (a line that fits with LF fits with CRLF), and a CR anywhere else is refused; a UTF-8
 * byte order mark on line 1 is dropped. Leading blanks are dropped too: inih would take an indented
 * line for the continuation of the key above it (a tab-indented key glued to the previous value);
 * here an indented line is read like any other. */
static char *get_line(cfg_file *c, char *buf, int num, int *lineno)
{
    int len = 0, ch = EOF;
    while (len < num - 1 && (ch = cfg_getc(c)) != EOF) {
        if (ch == '\0') {
            cfg_error(c, *lineno + 1, "NUL byte in the line (not a text file?)");
            return NULL;
        }
        if (ch == '\r' && !cr_ends_line(c, *lineno + 1))
            return NULL;
        buf[len++] = (char)ch;
        if (ch == '\n')
            break;
    }
    if (len == 0)
        return NULL;
    buf[len] = '\0';
    ++*lineno;
    if (len == num - 1 && buf[len - 1] != '\n' && (ch = cfg_getc(c)) != EOF) {
        if (buf[len - 1] == '\r' && ch == '\n') {
            buf[len - 1] = '\n'; /* CRLF: the line fits */
        } else {
            cfg_error(c, *lineno, "line longer than %d bytes", num - 2);
            return NULL;
        }
    }
    if (*lineno == 1 && !strncmp(buf, "\xEF\xBB\xBF", 3)) {
        memmove(buf, buf + 3, (size_t)len - 2);
        len -= 3;
    }
    size_t blanks = strspn(buf, " \t");
    if (blanks)
        memmove(buf, buf + blanks, (size_t)len - blanks + 1);
    return buf;
}

/* inih reads through this, so the handler knows the line it is called for. */
static char *read_line(char *str, int num, void *stream)
{
    cfg_file *c = stream;
    return c->failed ? NULL : get_line(c, str, num, &c->line);
}

static cfg_section *section_named(cfg_file *c, const char *name, size_t len)
{
    for (int i = 0; i < c->n_sections; i++)
        if (strlen(c->sections[i].name) == len && !strncmp(c->sections[i].name, name, len))
            return &c->sections[i];
    return NULL;
}

static int on_key(void *user, const char *section, const char *name, const char *value)
{
    cfg_file *c = user;
    if (c->failed)
        return 0;
    if (!*section && !strcmp(name, "samples") && !c->suite->samples[0] && *value) {
        snprintf(c->suite->samples, sizeof c->suite->samples, "%s", value);
        return 1;
    }
    if (!*section) {
        cfg_error(c, c->line,
                  "key '%s' outside a section; runs start with [name] (only samples = PATH "
                  "stands before them, once)",
                  name);
        return 0;
    }
    /* inih keeps blanks inside the brackets; the header scan trims them */
    while (*section == ' ' || *section == '\t')
        section++;
    size_t len = strlen(section);
    while (len && (section[len - 1] == ' ' || section[len - 1] == '\t'))
        len--;
    cfg_section *s = section_named(c, section, len);
    if (!s) { /* a header the scan did not read the way inih did */
        cfg_error(c, c->line, "cannot read the header of section [%s]", section);
        return 0;
    }
    for (int i = 0; i < s->n_keys; i++)
        if (!strcmp(s->keys[i].key, name)) {
            cfg_error(c, c->line, "key '%s' given twice in [%s] (first at line %d)", name, s->name,
                      s->keys[i].line);
            return 0;
        }
    if (s->n_keys == MAX_KEYS) {
        cfg_error(c, c->line, "more than %d keys in [%s]", MAX_KEYS, s->name);
        return 0;
    }
    cfg_key *k = &s->keys[s->n_keys++];
    k->key = strdup(name);
    k->value = strdup(value);
    k->line = c->line;
    if (!k->key || !k->value) {
        c->failed = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", c->path);
        return 0;
    }
    return 1;
}

/* What follows a header's ']' may be blanks or a ; or # comment, nothing else: inih ignores the
 * rest of a header line, so `[small-gemm] iters=5` would plan iters=1000 without a word. */
static int text_after_header(cfg_file *c, int lineno, const char *name, const char *rest)
{
    rest += strspn(rest, " \t");
    size_t len = strcspn(rest, "\r\n");
    if (!len || *rest == ';' || *rest == '#')
        return 0;
    while (len && (rest[len - 1] == ' ' || rest[len - 1] == '\t'))
        len--;
    return cfg_error(c, lineno,
                     "text after the header [%s]: '%.*s' (a key goes on a line of its own, below "
                     "the header)",
                     name, len > 60 ? 60 : (int)len, rest);
}

/* Sections in file order with their header lines, before inih reads the keys: inih reports a
 * section only through its keys, so it would neither see an empty section nor tell two
 * sections of the same name apart. */
static int scan_headers(cfg_file *c)
{
    char line[INI_MAX_LINE];
    int n = 0;
    while (get_line(c, line, sizeof line, &n)) {
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p != '[')
            continue;
        char *end = strchr(p, ']');
        if (!end)
            return cfg_error(c, n, "section header without ']'");
        *end = '\0';
        char *name = p + 1;
        while (*name == ' ' || *name == '\t')
            name++;
        for (char *t = name + strlen(name); t > name && (t[-1] == ' ' || t[-1] == '\t');)
            *--t = '\0';
        if (!*name)
            return cfg_error(c, n, "empty section name []");
        if (text_after_header(c, n, name, end + 1))
            return c->failed;
        cfg_section *dup = section_named(c, name, strlen(name));
        if (dup)
            return cfg_error(c, n, "duplicate section [%s] (first at line %d)", name, dup->line);
        if (c->n_sections == MAX_SECTIONS)
            return cfg_error(c, n, "more than %d sections", MAX_SECTIONS);
        if (strlen(name) > MAX_SECTION_NAME)
            return cfg_error(c, n, "section name [%.20s...] is too long (%d characters at most)",
                             name, MAX_SECTION_NAME);
        cfg_section *s = &c->sections[c->n_sections++];
        memset(s, 0, sizeof *s);
        snprintf(s->name, sizeof s->name, "%s", name);
        s->line = n;
    }
    if (c->failed)
        return c->failed;
    c->pos = 0; /* inih reads the keys from the start again */
    return 0;
}

static void cfg_free(cfg_file *c)
{
    if (!c->sections)
        return;
    for (int i = 0; i < c->n_sections; i++)
        for (int k = 0; k < c->sections[i].n_keys; k++) {
            free(c->sections[i].keys[k].key);
            free(c->sections[i].keys[k].value);
        }
    free(c->sections);
    c->sections = NULL;
}

static int unknown_key(cfg_file *c, const cfg_section *s, const cfg_key *k, const sb_scenario *sc)
{
    const char *cands[64 + SB_MAX_PARAMS + 1];
    int n = 0;
    for (int j = 0; sb_run_optdefs[j].name; j++)
        if (sb_run_optdefs[j].key)
            cands[n++] = sb_run_optdefs[j].key;
    for (int j = 0; sc->params[j].name; j++)
        cands[n++] = sc->params[j].name;
    cands[n] = NULL;
    const char *hint = sb_suggest(k->key, cands, sizeof cands[0]);
    if (hint)
        return cfg_error(c, k->line, "unknown key '%s' in [%s]; did you mean '%s'?", k->key,
                         s->name, hint);
    return cfg_error(c, k->line,
                     "unknown key '%s' in [%s] (keys: scenario, variants, iters, ... and %s's "
                     "parameters, see --list)",
                     k->key, s->name, sc->name);
}

/* One section -> one run request. */
static int section_spec(cfg_file *c, const cfg_section *s, sb_run_spec *spec)
{
    sb_run_spec_init(spec);
    spec->file = c->path;
    snprintf(spec->section, sizeof spec->section, "%s", s->name);
    spec->line = s->line;
    spec->scenarios = s->name;
    for (int i = 0; i < s->n_keys; i++)
        if (!strcmp(s->keys[i].key, "scenario")) {
            spec->scenarios = s->keys[i].value;
            spec->scenario_line = s->keys[i].line;
        }
    const sb_scenario *sc = sb_scenario_find(spec->scenarios);
    if (!sc) {
        char msg[256];
        sb_unknown_scenario(spec->scenarios, msg, sizeof msg);
        if (!spec->scenario_line)
            return cfg_error(c, s->line, "[%s] %s (name the scenario: scenario = NAME)", s->name,
                             msg);
        return cfg_error(c, spec->scenario_line, "[%s] %s", s->name, msg);
    }
    for (int i = 0; i < s->n_keys; i++) {
        const cfg_key *k = &s->keys[i];
        const sb_optdef *d = sb_optdef_by_key(sb_run_optdefs, k->key);
        if (d && !strcmp(k->key, "scenario"))
            continue;
        if (d) {
            char err[256];
            if (sb_optdef_set(d, k->value, spec, err, sizeof err) != 0)
                return cfg_error(c, k->line, "[%s] %s = %s: %s", s->name, k->key, k->value, err);
            spec->given |= 1ull << (d - sb_run_optdefs);
            if (!strcmp(k->key, "variants"))
                spec->variants_line = k->line;
        } else if (sb_param_index(sc->params, k->key) >= 0) {
            sb_set_opt *set = &spec->sets[spec->n_sets++];
            snprintf(set->key, sizeof set->key, "%s", k->key);
            set->value = k->value;
            set->line = k->line;
        } else {
            return unknown_key(c, s, k, sc);
        }
    }
    return 0;
}

/* A bare name (`--config default.ini`) that is no file here: the installed suites, in
 * ../share/syncbench/configs beside the binary (PREFIX/bin, and the wheel's syncbench/_bin, whose
 * package data holds share/ the same way). Its path into c->found, or the folder looked in. */
static FILE *find_installed(cfg_file *c, const char *path, int err)
{
    if (strchr(path, '/') || err != ENOENT)
        return NULL;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
    if (!slash)
        return NULL;
    *slash = '\0';
    int w = snprintf(c->found, sizeof c->found, "%s/../share/syncbench/configs/%s", exe, path);
    if (w < 0 || (size_t)w >= sizeof c->found)
        return c->found[0] = '\0', NULL;
    FILE *f = fopen(c->found, "r");
    if (!f)
        c->found[strlen(c->found) - strlen(path) - 1] = '\0'; /* the folder, for the error */
    return f;
}

/* The file into c->text, once: a pipe, /dev/stdin or a FIFO cannot be rewound for the second
 * pass, so both passes read this copy. */
static int read_suite(cfg_file *c, const char *path)
{
    FILE *f = fopen(path, "r");
    int err = errno;
    if (!f && (f = find_installed(c, path, err)) != NULL)
        c->path = c->suite->path = path = c->found;
    if (!f && c->found[0])
        return sb_fail(SB_EXIT_USAGE, "--config %s: cannot open: %s; nor is it in %s", path,
                       strerror(err), c->found);
    if (!f)
        return sb_fail(SB_EXIT_USAGE, "--config %s: cannot open: %s", path, strerror(err));
    struct stat st;
    int rc = 0;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))
        rc = sb_fail(SB_EXIT_USAGE, "--config %s: is a directory", path);
    size_t cap = 0;
    while (!rc) {
        if (c->len == cap && cap == MAX_SUITE_BYTES) {
            rc = sb_fail(SB_EXIT_USAGE, "--config %s: %u MiB or more (not a suite file?)", path,
                         MAX_SUITE_BYTES >> 20);
            break;
        }
        if (c->len == cap) {
            char *t = realloc(c->text, cap ? 2 * cap : 4096);
            if (!t) {
                rc = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
                break;
            }
            c->text = t;
            cap = cap ? 2 * cap : 4096;
        }
        size_t got = fread(c->text + c->len, 1, cap - c->len, f);
        c->len += got;
        if (got == 0 && ferror(f))
            rc = sb_fail(SB_EXIT_USAGE, "--config %s: read error: %s", path, strerror(errno));
        else if (got == 0)
            break;
    }
    fclose(f);
    return rc;
}

int sb_suite_load(const char *path, sb_suite *s)
{
    memset(s, 0, sizeof *s);
    s->path = path;
    cfg_file *c = calloc(1, sizeof *c);
    if (!c)
        return sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    s->text = c;
    c->path = path;
    c->suite = s;
    int rc = read_suite(c, path);
    if (rc)
        return rc;
    c->sections = calloc(MAX_SECTIONS, sizeof *c->sections);
    if (!c->sections)
        return sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    rc = scan_headers(c);
    if (!rc) {
        int line = ini_parse_stream(read_line, c, on_key, c);
        rc = c->failed;
        if (!rc && line > 0)
            rc = cfg_error(c, line, "syntax error: expected [name], key = value or a ; comment");
    }
    if (!rc && c->n_sections == 0)
        rc = sb_fail(SB_EXIT_USAGE, "%s: no runs (sections) in the file", path);
    if (!rc && !(s->specs = calloc((size_t)c->n_sections, sizeof *s->specs)))
        rc = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    /* every section is checked, also those --scenario leaves out: a broken suite is broken */
    for (int i = 0; i < c->n_sections && !rc; i++, s->n++)
        rc = section_spec(c, &c->sections[i], &s->specs[i]);
    return rc;
}

void sb_suite_free(sb_suite *s)
{
    cfg_file *c = s->text;
    if (c) {
        free(c->text);
        cfg_free(c);
        free(c);
    }
    free(s->specs);
    memset(s, 0, sizeof *s);
}
