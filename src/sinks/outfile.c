#include "sinks/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "base/error.h"

static void date_now(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm); /* as sb_env_host: UTC */
    strftime(buf, n, "%Y%m%d-%H%M%S", &tm);
}

void sb_expand_path(const char *pattern, const sb_env *env, char *out, size_t n)
{
    char date[32], gpu[SB_GPU_SLUG_MAX + 1];
    if (env && env->date[0])
        snprintf(date, sizeof date, "%s", env->date);
    else
        date_now(date, sizeof date);
    snprintf(gpu, sizeof gpu, "%.*s", SB_GPU_SLUG_MAX,
             env && env->gpu_slug[0] ? env->gpu_slug : "gpu");
    size_t j = 0;
    for (const char *p = pattern; *p && j + 1 < n;) {
        const char *rep = NULL;
        if (!strncmp(p, "{gpu}", 5))
            rep = gpu, p += 5;
        else if (!strncmp(p, "{date}", 6))
            rep = date, p += 6;
        if (rep) {
            j += (size_t)snprintf(out + j, n - j, "%s", rep);
            if (j >= n)
                j = n - 1;
        } else {
            out[j++] = *p++;
        }
    }
    out[j] = '\0';
}

/* The length of `name` once expanded, {gpu} counted at its longest. */
static size_t expanded_len(const char *name)
{
    size_t len = 0;
    for (const char *p = name; *p;) {
        if (!strncmp(p, "{gpu}", 5))
            len += SB_GPU_SLUG_MAX, p += 5;
        else if (!strncmp(p, "{date}", 6))
            len += SB_DATE_LEN, p += 6;
        else
            len++, p++;
    }
    return len;
}

/* Paths the kernel resolves per process (/dev/stdout -> /proc/self/fd/1 -> "pipe:[123]"):
 * never followed by hand, always written through. */
static int magic(const char *p)
{
    return !strncmp(p, "/proc/", 6);
}

/* `path` split at its last slash: dir ("." when none, "/" for the root) and name. */
static void split(const char *path, char *dir, size_t n, const char **name)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        snprintf(dir, n, ".");
        *name = path;
    } else {
        snprintf(dir, n, "%.*s", slash == path ? 1 : (int)(slash - path), path);
        *name = slash + 1;
    }
}

/* Follows the symlinks of the last component of `path`, then makes its folder canonical:
 * `out` is where a file written at `path` lands. Sets *is_magic for /dev/stdout and the
 * like (then `out` is the spelling that reached /proc). -1 with errno on failure. */
static int resolve(const char *path, char *out, size_t n, int *is_magic)
{
    char cur[PATH_MAX], link[PATH_MAX], dir[PATH_MAX], real[PATH_MAX];
    const char *name;
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur) {
        errno = ENAMETOOLONG;
        return -1;
    }
    *is_magic = 0;
    for (int hops = 0;; hops++) {
        if (magic(cur)) {
            *is_magic = 1;
            snprintf(out, n, "%s", path);
            return 0;
        }
        struct stat st;
        if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
            break;
        if (hops == 40) {
            errno = ELOOP;
            return -1;
        }
        ssize_t k = readlink(cur, link, sizeof link - 1);
        if (k < 0)
            return -1;
        link[k] = '\0';
        split(cur, dir, sizeof dir, &name);
        int len = link[0] == '/' ? snprintf(cur, sizeof cur, "%s", link)
                                 : snprintf(cur, sizeof cur, "%s/%s", dir, link);
        if (len >= (int)sizeof cur) {
            errno = ENAMETOOLONG;
            return -1;
        }
    }
    split(cur, dir, sizeof dir, &name);
    if (!realpath(dir, real))
        return -1;
    if (snprintf(out, n, "%s/%s", strcmp(real, "/") ? real : "", name) >= (int)n) {
        errno = ENAMETOOLONG;
        return -1;
    }
    return 0;
}

/* Resolves `path` into o->target and looks at what is there. Exit 2 on a folder, a missing
 * folder, or a target that cannot be resolved. */
static int locate(sb_out_file *o, const char *path)
{
    int is_magic;
    if (resolve(path, o->target, sizeof o->target, &is_magic) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            /* the folder of a dangling symlink's target */
            char dir[PATH_MAX], link[PATH_MAX];
            const char *name;
            ssize_t k = readlink(path, link, sizeof link - 1);
            split(k > 0 ? (link[k] = '\0', link) : path, dir, sizeof dir, &name);
            return sb_fail(SB_EXIT_USAGE, "--%s %s: folder '%s' does not exist", o->opt, o->pattern,
                           dir);
        }
        return sb_fail(SB_EXIT_USAGE, "--%s %s: %s", o->opt, o->pattern, strerror(errno));
    }
    struct stat st;
    o->exists = stat(o->target, &st) == 0;
    o->direct = is_magic;
    if (o->exists) {
        if (S_ISDIR(st.st_mode))
            return sb_fail(SB_EXIT_USAGE, "--%s %s: is a folder, expected a file path", o->opt,
                           o->pattern);
        o->dev = st.st_dev;
        o->ino = st.st_ino;
        o->direct |= !S_ISREG(st.st_mode);
        /* /dev/stdout, /proc/self/fd/1 or the file stdout is redirected to: one open file with
         * one offset, so it is written as stdout, never reopened (which would truncate it) */
        struct stat out;
        if (fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == st.st_dev && out.st_ino == st.st_ino)
            o->to_stdout = 1;
    } else if (is_magic) {
        return sb_fail(SB_EXIT_USAGE, "--%s %s: %s", o->opt, o->pattern, strerror(errno));
    }
    return 0;
}

/* A PATH.partial that is there before the run made one is not the run's own: the rows of a run
 * killed before its end, or someone's file. Never replaced nor deleted: exit 2. */
static int partial_taken(const sb_out_file *o, const char *partial)
{
    return sb_fail(SB_EXIT_USAGE,
                   "--%s %s: %s exists (a run that did not finish leaves one); refusing to "
                   "replace it: move it away or remove it",
                   o->opt, o->pattern, partial);
}

int sb_out_prepare(sb_out_file *o, const char *opt, const char *pattern)
{
    memset(o, 0, sizeof *o);
    snprintf(o->opt, sizeof o->opt, "%s", opt);
    if (!strcmp(pattern, "-")) {
        o->to_stdout = 1;
        strcpy(o->pattern, "-");
        strcpy(o->path, "-");
        strcpy(o->target, "-");
        o->state = SB_OUT_PREPARED;
        return 0;
    }
    if (!*pattern)
        return sb_fail(SB_EXIT_USAGE, "--%s: empty path", opt);
    if (strlen(pattern) >= sizeof o->pattern)
        return sb_fail(SB_EXIT_USAGE, "--%.15s %.64s...: path too long", opt, pattern);
    snprintf(o->pattern, sizeof o->pattern, "%s", pattern);

    char dir[PATH_MAX];
    const char *name;
    split(pattern, dir, sizeof dir, &name);
    if (strstr(dir, "{gpu}") || strstr(dir, "{date}"))
        return sb_fail(SB_EXIT_USAGE, "--%s %s: {gpu} and {date} go in the file name only", opt,
                       pattern);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return sb_fail(SB_EXIT_USAGE, "--%s %s: folder '%s' does not exist", opt, pattern, dir);
    if (!*name || !strcmp(name, ".") || !strcmp(name, ".."))
        return sb_fail(SB_EXIT_USAGE, "--%s %s: is a folder, expected a file path", opt, pattern);
    int rc = locate(o, pattern);
    if (rc)
        return rc;

    if (o->direct) {
        if (access(pattern, W_OK) != 0)
            return sb_fail(SB_EXIT_USAGE, "--%s %s: cannot write: %s", opt, pattern,
                           strerror(errno));
    } else {
        /* the partial file and the final name land in the target's folder */
        split(o->target, dir, sizeof dir, &name);
        size_t len = expanded_len(name) + strlen(SB_PARTIAL_SUFFIX);
        long name_max = pathconf(dir, _PC_NAME_MAX);
        if (name_max <= 0)
            name_max = NAME_MAX;
        if (len > (size_t)name_max)
            return sb_fail(SB_EXIT_USAGE,
                           "--%s %s: file name too long (%zu bytes with " SB_PARTIAL_SUFFIX
                           "%s; the file system allows %ld)",
                           opt, pattern, len,
                           strstr(name, "{gpu}") ? " and {gpu} at its longest" : "", name_max);
        long path_max = pathconf(dir, _PC_PATH_MAX);
        if (path_max <= 0 || path_max > PATH_MAX)
            path_max = PATH_MAX;
        if (strlen(dir) + 1 + len >= (size_t)path_max)
            return sb_fail(SB_EXIT_USAGE, "--%s %s: path too long (the limit is %ld bytes)", opt,
                           pattern, path_max - 1);
        if (access(dir, W_OK | X_OK) != 0)
            return sb_fail(SB_EXIT_USAGE, "--%s %s: folder '%s' is not writable: %s", opt, pattern,
                           dir, strerror(errno));
        /* the name is final unless {gpu} or {date} is in it: then sb_out_open looks */
        char partial[sizeof o->partial];
        snprintf(partial, sizeof partial, "%s" SB_PARTIAL_SUFFIX, o->target);
        if (!strstr(name, "{gpu}") && !strstr(name, "{date}") && lstat(partial, &st) == 0)
            return partial_taken(o, partial);
    }
    o->state = SB_OUT_PREPARED;
    return 0;
}

int sb_out_open(sb_out_file *o, const sb_env *env)
{
    if (o->state != SB_OUT_PREPARED)
        return 0;
    if (o->to_stdout) {
        o->f = stdout;
        o->state = SB_OUT_OPEN;
        return 0;
    }
    sb_expand_path(o->pattern, env, o->path, sizeof o->path);
    /* again: the name is final now, and the file system may have changed since prepare */
    int rc = locate(o, o->path);
    if (rc)
        return rc;
    if (o->to_stdout) {
        o->f = stdout;
        o->state = SB_OUT_OPEN;
        return 0;
    }
    int fd;
    if (o->direct) {
        o->partial[0] = '\0';
        /* no O_CREAT: a device or FIFO that vanished is an error, not a new regular file */
        fd = open(o->path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    } else {
        snprintf(o->partial, sizeof o->partial, "%s" SB_PARTIAL_SUFFIX, o->target);
        /* O_EXCL: a partial file that is there (a killed run's rows, someone's file) is not
         * this run's, and is left alone; never written through a symlink either */
        fd = open(o->partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST) {
            int rc = partial_taken(o, o->partial);
            o->partial[0] = '\0';
            return rc;
        }
        struct stat st;
        if (fd >= 0 && o->exists && stat(o->target, &st) == 0)
            (void)fchmod(fd, st.st_mode & 07777); /* the file it replaces keeps its mode */
    }
    if (fd < 0)
        return sb_fail(SB_EXIT_USAGE, "--%s %s: cannot create %s: %s", o->opt, o->path,
                       o->direct ? o->path : o->partial, strerror(errno));
    o->f = fdopen(fd, "w");
    if (!o->f) {
        int err = errno;
        close(fd);
        if (!o->direct)
            unlink(o->partial);
        return sb_fail(SB_EXIT_FAIL, "--%s %s: %s", o->opt, o->path, strerror(err));
    }
    o->state = SB_OUT_OPEN;
    return 0;
}

static int write_failed(const sb_out_file *o, int err)
{
    if (o->to_stdout)
        return sb_fail(SB_EXIT_FAIL, "writing to stdout failed: %s", strerror(err));
    return sb_fail(SB_EXIT_FAIL, "--%s %s: write failed: %s", o->opt, o->path, strerror(err));
}

/* fflush, and whether any write so far failed: 0 or an errno. */
static int flush_error(FILE *f)
{
    errno = 0;
    if (fflush(f) != 0)
        return errno ? errno : EIO;
    return ferror(f) ? EIO : 0;
}

int sb_out_flush(sb_out_file *o)
{
    if (o->state != SB_OUT_OPEN)
        return 0;
    int err = flush_error(o->f);
    return err ? write_failed(o, err) : 0;
}

int sb_out_commit(sb_out_file *o)
{
    if (o->state != SB_OUT_OPEN)
        return 0;
    int err = flush_error(o->f);
    if (o->to_stdout) {
        o->f = NULL;
        o->state = err ? SB_OUT_ABORTED : SB_OUT_COMMITTED;
        return err ? write_failed(o, err) : 0;
    }
    /* devices and FIFOs have nothing to sync (fsync fails with EINVAL there) */
    if (!err && !o->direct && fsync(fileno(o->f)) != 0)
        err = errno;
    if (fclose(o->f) != 0 && !err)
        err = errno;
    o->f = NULL;
    if (!err && !o->direct && rename(o->partial, o->target) != 0)
        err = errno;
    if (err) {
        if (!o->direct)
            unlink(o->partial);
        o->state = SB_OUT_ABORTED;
        return write_failed(o, err);
    }
    if (!o->direct) {
        /* make the rename itself durable; a folder that cannot be synced is no error */
        char dir[PATH_MAX];
        const char *name;
        split(o->target, dir, sizeof dir, &name);
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            (void)fsync(dfd);
            close(dfd);
        }
    }
    o->state = SB_OUT_COMMITTED;
    return 0;
}

void sb_out_abort(sb_out_file *o)
{
    if (o->state != SB_OUT_OPEN)
        return;
    if (o->to_stdout) {
        fflush(stdout);
    } else {
        fclose(o->f);
        if (!o->direct)
            unlink(o->partial);
    }
    o->f = NULL;
    o->state = SB_OUT_ABORTED;
}

int sb_out_same(const sb_out_file *a, const sb_out_file *b)
{
    if (a->to_stdout || b->to_stdout)
        return a->to_stdout && b->to_stdout;
    if (!strcmp(a->target, b->target))
        return 1;
    return a->exists && b->exists && a->dev == b->dev && a->ino == b->ino;
}

int sb_out_describe(sb_out_file *o, const char *var, const char *path)
{
    memset(o, 0, sizeof *o);
    snprintf(o->opt, sizeof o->opt, "%s", var);
    o->env_var = 1;
    if (strlen(path) >= sizeof o->pattern)
        return -1;
    snprintf(o->pattern, sizeof o->pattern, "%s", path);
    snprintf(o->path, sizeof o->path, "%s", path);
    int is_magic;
    if (resolve(path, o->target, sizeof o->target, &is_magic) != 0)
        return -1;
    struct stat st;
    o->direct = is_magic;
    if (stat(o->target, &st) == 0) {
        o->exists = 1;
        o->dev = st.st_dev;
        o->ino = st.st_ino;
        o->direct |= !S_ISREG(st.st_mode);
    }
    o->state = SB_OUT_PREPARED;
    return 0;
}

/* "--csv PATH", or "GITHUB_STEP_SUMMARY=PATH" for a file an environment variable names. */
static const char *shown(const sb_out_file *o, char *buf, size_t n)
{
    snprintf(buf, n, o->env_var ? "%s=%s" : "--%s %s", o->opt, o->pattern);
    return buf;
}

int sb_out_check_inputs(const sb_out_file *o, const char *const *inputs)
{
    return sb_out_check_files(o, inputs, "is also an input");
}

int sb_out_check_files(const sb_out_file *o, const char *const *inputs, const char *what)
{
    char name[PATH_MAX + 48];
    for (int i = 0; inputs && inputs[i]; i++) {
        if (o->to_stdout || !strcmp(inputs[i], "-"))
            continue;
        char real[PATH_MAX];
        int is_magic;
        struct stat st;
        int same =
            resolve(inputs[i], real, sizeof real, &is_magic) == 0 && !strcmp(real, o->target);
        if (!same && o->exists && stat(inputs[i], &st) == 0)
            same = st.st_dev == o->dev && st.st_ino == o->ino;
        if (same)
            return sb_fail(SB_EXIT_USAGE, "%s: %s (%s); refusing to %s it",
                           shown(o, name, sizeof name), what, inputs[i],
                           o->env_var ? "append to" : "overwrite");
    }
    return 0;
}

int sb_out_check_folder(const sb_out_file *o, const char *what, const char *dir)
{
    char real[PATH_MAX], name[PATH_MAX + 48];
    int is_magic;
    if (o->to_stdout || o->direct)
        return 0;
    if (!realpath(dir, real) && resolve(dir, real, sizeof real, &is_magic) != 0)
        return 0; /* a folder that cannot be resolved is refused by its own option */
    size_t len = strlen(real);
    if (!strncmp(o->target, real, len) && (o->target[len] == '/' || !o->target[len]))
        return sb_fail(SB_EXIT_USAGE,
                       "%s: is in the %s folder %s, whose files are read; refusing to write "
                       "there",
                       shown(o, name, sizeof name), what, dir);
    return 0;
}

int sb_out_create(sb_out_file *o, const char *opt, const char *pattern, const char *const *inputs)
{
    int rc = sb_out_prepare(o, opt, pattern);
    if (!rc)
        rc = sb_out_check_inputs(o, inputs);
    if (!rc)
        rc = sb_out_open(o, NULL);
    return rc;
}
