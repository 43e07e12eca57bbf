#include "sinks/github.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/error.h"

int sb_ci_github(const char *mode)
{
    if (mode)
        return !strcmp(mode, "github");
    const char *actions = getenv("GITHUB_ACTIONS");
    return actions && !strcmp(actions, "true");
}

int sb_ci_check(const char *prefix, const char *mode)
{
    if (mode && strcmp(mode, "github") && strcmp(mode, "none"))
        return sb_fail(SB_EXIT_USAGE, "%s--ci %s: expected github or none", prefix, mode);
    return 0;
}

static const char *workflow_code(const char *s, int property, int *used)
{
    *used = 1;
    switch (*s) {
    case '%':
        return "%25";
    case '\r':
        return "%0D";
    case '\n':
        return "%0A";
    case ':':
        return property ? "%3A" : NULL;
    case ',':
        return property ? "%2C" : NULL;
    default:
        return NULL;
    }
}

void sb_gh_escape(FILE *f, const char *s, int property)
{
    sb_fputs_escaped_sub(f, s, workflow_code, property);
}

void sb_gh_annotate(FILE *f, const char *level, const char *file, int line, const char *title,
                    const char *message)
{
    fprintf(f, "::%s", level);
    const char *sep = " ";
    if (file) {
        fputs(" file=", f);
        sb_gh_escape(f, file, 1);
        if (line > 0)
            fprintf(f, ",line=%d", line);
        sep = ",";
    }
    if (title) {
        fprintf(f, "%stitle=", sep);
        sb_gh_escape(f, title, 1);
    }
    fputs("::", f);
    sb_gh_escape(f, message, 0);
    fputc('\n', f);
}

/* The guard's state: the stream it writes to, whether the next byte begins a line, and whether
 * a ':' that began one is held back until the next byte says whether it is a command's. */
typedef struct {
    FILE *to;
    int at_start, held;
} guard;

static ssize_t guard_write(void *cookie, const char *buf, size_t n)
{
    guard *g = cookie;
    for (size_t i = 0; i < n; i++) {
        char c = buf[i];
        if (g->held) {
            g->held = 0;
            fputs(c == ':' ? "  :" : ":", g->to);
        } else if (g->at_start && c == ':') {
            g->held = 1;
            continue;
        }
        fputc(c, g->to);
        g->at_start = c == '\n';
    }
    return ferror(g->to) ? -1 : (ssize_t)n;
}

static int guard_close(void *cookie)
{
    guard *g = cookie;
    if (g->held)
        fputc(':', g->to);
    int rc = fflush(g->to) == 0 && !ferror(g->to) ? 0 : EOF;
    free(g);
    return rc;
}

FILE *sb_gh_guard(FILE *to)
{
    guard *g = malloc(sizeof *g);
    if (!g)
        return NULL;
    *g = (guard){to, 1, 0};
    cookie_io_functions_t io = {.write = guard_write, .close = guard_close};
    FILE *f = fopencookie(g, "w", io);
    if (!f)
        free(g);
    return f;
}

/* Whether `path` lies under the folder `root`: *rest is then the part below it. */
static int under(const char *root, const char *path, const char **rest)
{
    size_t len = strlen(root);
    while (len > 1 && root[len - 1] == '/')
        len--;
    if (len == 1 && root[0] == '/') {
        *rest = path + 1;
        return path[0] == '/';
    }
    if (strncmp(path, root, len) != 0 || path[len] != '/')
        return 0;
    *rest = path + len + 1;
    return 1;
}

const char *sb_gh_repo_path(const char *file, char *buf, size_t n)
{
    char cwd[PATH_MAX], abs[2 * PATH_MAX + 2], real_root[PATH_MAX], real_file[PATH_MAX];
    if (!file || !*file || !getcwd(cwd, sizeof cwd))
        return NULL;
    const char *ws = getenv("GITHUB_WORKSPACE");
    const char *root = ws && *ws ? ws : cwd;
    if (file[0] == '/')
        snprintf(abs, sizeof abs, "%s", file);
    else
        snprintf(abs, sizeof abs, "%s/%s", cwd, file);
    const char *rest = NULL;
    /* as written first; then both resolved (a workspace reached through a symlink) */
    if (!under(root, abs, &rest) && !(realpath(root, real_root) && realpath(abs, real_file) &&
                                      under(real_root, real_file, &rest)))
        return NULL;
    while (rest[0] == '.' && rest[1] == '/')
        rest += 2;
    if (!*rest || strlen(rest) >= n)
        return NULL;
    memcpy(buf, rest, strlen(rest) + 1);
    return buf;
}

static const char cut_note[] = "\n\n> syncbench: the rest of this summary was cut here: GitHub "
                               "keeps at most 1 MiB of summary per step.\n";

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static void summary_warning(const char *path, const char *why)
{
    fputs("syncbench: warning: GITHUB_STEP_SUMMARY ", stderr);
    sb_fputs_escaped(stderr, path);
    fprintf(stderr, ": %s; no step summary written\n", why);
}

void sb_gh_summary(const char *md, size_t n)
{
    const char *path = getenv("GITHUB_STEP_SUMMARY");
    if (!path || !*path)
        return;
    /* O_NONBLOCK: a FIFO nobody reads is an error, not a hang */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        summary_warning(path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return;
    }
    size_t have = S_ISREG(st.st_mode) ? (size_t)st.st_size : 0;
    size_t room = have < SB_GH_SUMMARY_MAX ? SB_GH_SUMMARY_MAX - have : 0;
    size_t keep = n, note = 0;
    if (n > room) { /* what fits, to the end of a line, and the note */
        note = sizeof cut_note - 1;
        if (room < note) {
            summary_warning(path, "no room left under GitHub's 1 MiB a step");
            close(fd);
            return;
        }
        keep = room - note;
        while (keep && md[keep - 1] != '\n')
            keep--;
    }
    if (write_all(fd, md, keep) != 0 || (note && write_all(fd, cut_note, note) != 0))
        summary_warning(path, strerror(errno ? errno : EIO));
    close(fd);
}

/* One entry's annotation: 0, or -1 out of memory. */
static int annotate(FILE *to, const sb_ci_verdict *v)
{
    const char *message = v->message ? v->message : "";
    char *joined = NULL;
    if (v->reason && asprintf(&joined, "%s\n%s", message, v->reason) < 0)
        return -1;
    sb_gh_annotate(to, v->outcome == SB_CI_FAILED ? "error" : "warning", v->file, v->line, v->title,
                   joined ? joined : message);
    free(joined);
    return 0;
}

int sb_gh_write(FILE *to, const sb_ci_verdicts *l, const char *md, size_t n)
{
    for (size_t i = 0; i < l->n; i++)
        if ((l->v[i].where & SB_CI_ANNOTATION) && annotate(to, &l->v[i]) < 0)
            return sb_fail(SB_EXIT_FAIL, "out of memory writing the annotations");
    if (ferror(to) || fflush(to) != 0)
        return sb_fail(SB_EXIT_FAIL, "writing the annotations failed: %s", strerror(errno));
    if (md)
        sb_gh_summary(md, n);
    return 0;
}
