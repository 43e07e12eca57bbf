/* Frames with no symbol resolved through addr2line (binutils), when it is on PATH: one
 * addr2line process per object, addresses on its standard input, only the frames of stacks that
 * blocking calls used. Frames of a statically linked cudart then read cudart::..., and the site
 * choice skips them. */
#include "analyze/analyze.h"

#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

typedef struct {
    sb_audit_frame *f;
} pending;

static int find_on_path(const char *prog, char *out, size_t n)
{
    const char *path = getenv("PATH");
    if (!path)
        return 0;
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        if (len && (size_t)snprintf(out, n, "%.*s/%s", (int)len, path, prog) < n &&
            access(out, X_OK) == 0)
            return 1;
        path += len + (colon ? 1 : 0);
    }
    return 0;
}

/* ELF e_type: 2 = ET_EXEC (absolute addresses), 3 = ET_DYN; -1 when not a readable ELF file. */
static int elf_type(const char *obj)
{
    unsigned char h[18];
    FILE *f = fopen(obj, "rb");
    if (!f)
        return -1;
    size_t got = fread(h, 1, sizeof h, f);
    fclose(f);
    if (got != sizeof h || memcmp(h,
                                  "\x7f"
                                  "ELF",
                                  4) != 0)
        return -1;
    return h[5] == 2 ? (h[16] << 8 | h[17]) : (h[17] << 8 | h[16]);
}

static int cmp_pending(const void *a, const void *b)
{
    const char *x = ((const pending *)a)->f->obj, *y = ((const pending *)b)->f->obj;
    return (x > y) - (x < y); /* interned: grouping by pointer is enough */
}

/* Runs `addr2line -f -C -e obj` on p[0..n) and sets their symbols. */
static void resolve(sb_strpool *strs, const char *tool, pending *p, size_t n)
{
    int type = elf_type(p[0].f->obj);
    if (type < 0)
        return;
    FILE *in = tmpfile();
    if (!in)
        return;
    for (size_t i = 0; i < n; i++)
        fprintf(in, "0x%" PRIx64 "\n", (uint64_t)(type == 2 ? p[i].f->abs : p[i].f->off));
    fflush(in);
    rewind(in);
    int fd[2];
    if (pipe(fd) < 0) {
        fclose(in);
        return;
    }
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fileno(in), 0);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    char *argv[] = {"addr2line", "-f", "-C", "-e", (char *)p[0].f->obj, NULL};
    pid_t pid;
    int err = posix_spawn(&pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    fclose(in);
    FILE *out = fdopen(fd[0], "r");
    if (!out) {
        close(fd[0]);
        if (!err)
            waitpid(pid, NULL, 0);
        return;
    }
    char *fn = NULL, *loc = NULL;
    size_t fcap = 0, lcap = 0;
    for (size_t i = 0; !err && i < n; i++) {
        ssize_t a = getline(&fn, &fcap, out), b = getline(&loc, &lcap, out);
        if (a < 0 || b < 0)
            break;
        fn[strcspn(fn, "\n")] = '\0';
        loc[strcspn(loc, "\n")] = '\0';
        if (!fn[0] || strcmp(fn, "??") == 0)
            continue;
        char buf[1024];
        size_t ll = strlen(loc);
        /* no file, or a file without a line (a generated .cudafe1.cpp): the function alone */
        if (strncmp(loc, "??", 2) == 0 || (ll >= 2 && strcmp(loc + ll - 2, ":?") == 0))
            sb_audit_fmt(buf, sizeof buf, "%s", fn);
        else {
            const char *file = strrchr(loc, '/');
            sb_audit_fmt(buf, sizeof buf, "%s (%s)", fn, file ? file + 1 : loc);
        }
        const char *s = sb_audit_intern(strs, buf);
        if (s)
            p[i].f->sym = s;
    }
    free(fn);
    free(loc);
    fclose(out);
    if (!err)
        waitpid(pid, NULL, 0);
}

void sb_audit_symbolize(sb_audit_run *run)
{
    char tool[PATH_MAX];
    if (!find_on_path("addr2line", tool, sizeof tool))
        return;
    pending *p = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < run->nprocs; i++) {
        sb_audit_proc *pr = run->procs[i];
        for (size_t s = 0; s < pr->nstacks; s++) {
            if (!pr->stacks[s].used)
                continue;
            for (int k = 0; k < pr->stacks[s].nframes; k++) {
                sb_audit_frame *f = &pr->stacks[s].frames[k];
                if (f->sym[0] || !f->obj[0])
                    continue;
                if (sb_grow(&p, &cap, n, sizeof *p) < 0)
                    goto done;
                p[n++].f = f;
            }
        }
    }
    if (n)
        sb_sort(p, n, sizeof *p, cmp_pending);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && p[j].f->obj == p[i].f->obj)
            j++;
        resolve(&run->strs, tool, p + i, j - i);
        i = j;
    }
done:
    free(p);
}
