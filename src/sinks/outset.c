/* The output files of one command, checked once. */
#include "sinks/outset.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"

static int clash(const sb_outset_rules *r, const sb_out_file *old, const sb_out_file *o)
{
    if (r->wording == SB_CLASH_WRITE_SAME)
        return sb_fail(SB_EXIT_USAGE, "%s--%s %s and --%s %s write the same file", r->prefix,
                       old->opt, old->pattern, o->opt, o->pattern);
    return sb_fail(SB_EXIT_USAGE, "%s--%s %s: same file as --%s %s", r->prefix, o->opt, o->pattern,
                   old->opt, old->pattern);
}

/* Whether b lands on a's temporary file: a is written as A.partial and renamed onto A at the
 * end, so that b's file would be replaced by a's (or a's rows by b's). */
static int on_partial_of(const sb_out_file *a, const sb_out_file *b)
{
    if (a->to_stdout || a->direct || b->to_stdout)
        return 0;
    size_t n = strlen(a->target);
    return !strncmp(b->target, a->target, n) && !strcmp(b->target + n, SB_PARTIAL_SUFFIX);
}

int sb_outset_partial_clash(const char *prefix, const sb_out_file *old, const sb_out_file *o)
{
    if (on_partial_of(old, o))
        return sb_fail(SB_EXIT_USAGE,
                       "%s--%s %s: is the temporary file of --%s %s (written there until the "
                       "end); choose another name",
                       prefix, o->opt, o->pattern, old->opt, old->pattern);
    if (on_partial_of(o, old))
        return sb_fail(SB_EXIT_USAGE,
                       "%s--%s %s: its temporary file (" SB_PARTIAL_SUFFIX
                       " until the end) is --%s %s; choose another name",
                       prefix, o->opt, o->pattern, old->opt, old->pattern);
    return 0;
}

int sb_outset_add(sb_out_file *o, const char *opt, const char *path, const sb_outset_rules *r,
                  sb_out_file *const *earlier, size_t n)
{
    memset(o, 0, sizeof *o);
    int rc = sb_out_prepare(o, opt, path);
    if (!rc)
        rc = sb_out_check_inputs(o, r->inputs);
    for (size_t i = 0; !rc && i < n; i++)
        if (sb_out_same(earlier[i], o))
            rc = clash(r, earlier[i], o);
        else
            rc = sb_outset_partial_clash(r->prefix, earlier[i], o);
    if (rc)
        memset(o, 0, sizeof *o);
    return rc;
}

int sb_outset_add_summary(sb_out_file *s, const sb_outset_rules *r, sb_out_file *const *earlier,
                          size_t n)
{
    /* read as sinks/github.c reads it when it appends */
    const char *path = getenv("GITHUB_STEP_SUMMARY");
    if (!path || !*path || sb_out_describe(s, "GITHUB_STEP_SUMMARY", path) != 0) {
        memset(s, 0, sizeof *s); /* none, or one the summary's own warning names at the end */
        return 0;
    }
    int rc = sb_out_check_inputs(s, r->inputs);
    for (size_t i = 0; !rc && i < n; i++)
        if (sb_out_same(earlier[i], s))
            rc = sb_fail(SB_EXIT_USAGE,
                         "%sGITHUB_STEP_SUMMARY=%s: same file as --%s %s; refusing to append the "
                         "step summary to it",
                         r->prefix, s->pattern, earlier[i]->opt, earlier[i]->pattern);
    if (rc)
        memset(s, 0, sizeof *s);
    return rc;
}

/* What ends a word of a shell string (`sh -c 'cat in.txt'`) or an option's value
 * (`--file=in.txt`, `--files=a,b`). */
static const char word_ends[] = " \t\n;|&<>()`'\"=,:";

typedef struct {
    char **paths; /* NULL-terminated */
    size_t n, cap;
} path_list;

/* s[0..len) kept when it is a regular file that exists: 0, or -1 out of memory. */
static int keep_file(path_list *l, const char *s, size_t len)
{
    char buf[PATH_MAX];
    struct stat st;
    if (!len || len >= sizeof buf)
        return 0;
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (stat(buf, &st) != 0 || !S_ISREG(st.st_mode)) /* a device or FIFO is written through */
        return 0;
    if (l->n + 2 > l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 16;
        char **p = realloc(l->paths, cap * sizeof *p);
        if (!p)
            return -1;
        l->paths = p;
        l->cap = cap;
    }
    if (!(l->paths[l->n] = strdup(buf)))
        return -1;
    l->paths[++l->n] = NULL;
    return 0;
}

int sb_outset_command_inputs(char *const *argv, char ***paths)
{
    path_list l = {NULL, 0, 0};
    int rc = 0;
    for (size_t i = 0; !rc && argv[i]; i++) {
        const char *a = argv[i];
        rc = keep_file(&l, a, strlen(a));
        for (const char *p = a; !rc && *p;) {
            size_t len = strcspn(p, word_ends);
            if (len && len < strlen(a)) /* a word of a longer argument */
                rc = keep_file(&l, p, len);
            p += len;
            p += strspn(p, word_ends);
        }
    }
    if (rc) {
        sb_outset_free_paths(l.paths);
        *paths = NULL;
        return sb_fail(SB_EXIT_FAIL, "out of memory");
    }
    *paths = l.paths;
    return 0;
}

void sb_outset_free_paths(char **paths)
{
    for (size_t i = 0; paths && paths[i]; i++)
        free(paths[i]);
    free(paths);
}
