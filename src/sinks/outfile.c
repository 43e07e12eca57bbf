#include "sinks/outfile.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "base/error.h"

void sb_expand_path(const char *pattern, const sb_env *env, char *out, size_t n)
{
    size_t j = 0;
    for (const char *p = pattern; *p && j + 1 < n;) {
        const char *rep = NULL;
        if (!strncmp(p, "{gpu}", 5))
            rep = env->gpu_slug[0] ? env->gpu_slug : "gpu";
        else if (!strncmp(p, "{date}", 6))
            rep = env->date;
        if (rep) {
            j += (size_t)snprintf(out + j, n - j, "%s", rep);
            if (j >= n)
                j = n - 1;
            p += rep == env->date ? 6 : 5;
        } else {
            out[j++] = *p++;
        }
    }
    out[j] = '\0';
}

int sb_out_open(sb_out_file *o, const char *opt, const char *path)
{
    memset(o, 0, sizeof *o);
    snprintf(o->opt, sizeof o->opt, "%s", opt);
    if (strcmp(path, "-") == 0) {
        o->to_stdout = 1;
        o->f = stdout;
        return 0;
    }
    snprintf(o->pattern, sizeof o->pattern, "%s", path);
    /* the temporary file sits in the target's folder, so the rename stays on one file system */
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path + 1) : 0;
    snprintf(o->tmp, sizeof o->tmp, "%.*s.syncbench-%d.%s.tmp", dir_len, path, (int)getpid(), opt);
    o->f = fopen(o->tmp, "w");
    if (!o->f)
        return sb_fail(SB_EXIT_USAGE, "--%s %s: cannot create: %s", opt, path, strerror(errno));
    return 0;
}

int sb_out_commit(sb_out_file *o, const sb_env *env)
{
    if (!o->f)
        return 0;
    if (o->to_stdout) {
        fflush(stdout);
        o->f = NULL;
        return 0;
    }
    int bad = ferror(o->f);
    bad |= fclose(o->f) != 0;
    o->f = NULL;
    sb_expand_path(o->pattern, env, o->path, sizeof o->path);
    if (bad || rename(o->tmp, o->path) != 0) {
        int err = errno;
        unlink(o->tmp);
        return sb_fail(SB_EXIT_FAIL, "--%s %s: write failed: %s", o->opt, o->path, strerror(err));
    }
    return 0;
}

void sb_out_discard(sb_out_file *o)
{
    if (o->f && !o->to_stdout) {
        fclose(o->f);
        unlink(o->tmp);
    }
    o->f = NULL;
}
