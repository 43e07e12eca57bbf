/* The frames blocking calls used, named honestly: a frame the injection library recorded
 * without a symbol (dladdr knew none whose size covers the address) is named from its object's
 * symbol table where a function covers it (elfsyms.c), and with its file and line through
 * addr2line (binutils, when on PATH) where the object's debug information knows them; one
 * addr2line process per object, addresses on its standard input. addr2line's function without
 * a file and line is its guess from the symbol table, the nearest symbol below the address (in a
 * stripped library some exported neighbour): never taken. A frame nobody can name stays
 * library+offset. Frames of a statically linked cudart then read cudart::..., and the site
 * choice skips them. */
#include "analyze/analyze.h"
#include "base/regfile.h"
#include "base/arrays.h"
#include "base/utf8.h"

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
    int check; /* a name an older writer recorded (no "symsize"): kept only if it covers */
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
    FILE *f; /* a regular file only: addr2line would wait on a FIFO as the read would */
    if (sb_open_regular(obj, &f) != SB_REG_OK)
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

/* addr2line -f -C -e obj, reading the addresses from `in`: its standard output, or NULL. */
static FILE *spawn_addr2line(const char *tool, const char *obj, FILE *in, pid_t *pid)
{
    int fd[2];
    if (pipe(fd) < 0)
        return NULL;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fileno(in), 0);
    posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addclose(&fa, fd[0]);
    char *argv[] = {"addr2line", "-f", "-C", "-e", (char *)obj, NULL};
    int err = posix_spawn(pid, tool, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(fd[1]);
    FILE *out = err ? NULL : fdopen(fd[0], "r");
    if (!out) {
        close(fd[0]);
        if (!err)
            waitpid(*pid, NULL, 0);
    }
    return out;
}

/* addr2line's answer for one frame: the function with its file when the debug information
 * gave a line ("fn (file.c:42)"); NULL for a guess from the symbol table (no file, or a file
 * without a line: a generated .cudafe1.cpp) or none. */
static const char *with_line(sb_strpool *strs, char *fn, char *loc)
{
    fn[strcspn(fn, "\n")] = '\0';
    loc[strcspn(loc, "\n")] = '\0';
    size_t ll = strlen(loc);
    if (!fn[0] || strcmp(fn, "??") == 0 || strncmp(loc, "??", 2) == 0 ||
        (ll >= 2 && strcmp(loc + ll - 2, ":?") == 0))
        return NULL;
    char buf[1024];
    const char *file = strrchr(loc, '/');
    sb_audit_fmt(buf, sizeof buf, "%s (%s)", fn, file ? file + 1 : loc);
    return sb_audit_intern(strs, buf);
}

/* The functions and lines the object's debug information gives p[0..n) (addr2line). */
static void resolve_lines(sb_strpool *strs, const char *tool, const sb_elf_syms *e, pending *p,
                          size_t n)
{
    int type = e ? 0 : elf_type(p[0].f->obj);
    FILE *in = type >= 0 ? tmpfile() : NULL;
    if (!in)
        return;
    for (size_t i = 0; i < n; i++)
        fprintf(in, "0x%" PRIx64 "\n",
                e           ? sb_elf_addr(e, p[i].f)
                : type == 2 ? (uint64_t)p[i].f->abs
                            : (uint64_t)p[i].f->off);
    fflush(in);
    rewind(in);
    pid_t pid;
    FILE *out = spawn_addr2line(tool, p[0].f->obj, in, &pid);
    fclose(in);
    if (!out)
        return;
    char *fn = NULL, *loc = NULL;
    size_t fcap = 0, lcap = 0;
    for (size_t i = 0; i < n; i++) {
        if (getline(&fn, &fcap, out) < 0 || getline(&loc, &lcap, out) < 0)
            break;
        const char *s = with_line(strs, fn, loc);
        if (s)
            p[i].f->sym = s;
    }
    free(fn);
    free(loc);
    fclose(out);
    waitpid(pid, NULL, 0);
}

/* The frames p[0..n) of one object: an older writer's names checked, then every frame without
 * one named by the function that covers it, and by its line where addr2line knows it. */
static void name_object(sb_strpool *strs, const char *tool, pending *p, size_t n)
{
    sb_elf_syms *e = sb_elf_syms_open(p[0].f->obj);
    const char *none = sb_audit_intern(strs, "");
    char buf[1024];
    size_t m = 0;
    for (size_t i = 0; none && i < n; i++) {
        const char *s = sb_elf_sym_at(e, p[i].f, buf, sizeof buf);
        if (p[i].check && s && !strcmp(s, p[i].f->sym))
            continue; /* an older writer's name, and the object's symbol covers the address */
        p[i].f->sym = s && (s = sb_audit_intern(strs, s)) ? s : none;
        p[m++] = p[i]; /* addr2line may add its file and line */
    }
    if (tool && m)
        resolve_lines(strs, tool, e, p, m);
    sb_elf_syms_free(e);
}

void sb_audit_symbolize(sb_audit_analysis *an)
{
    sb_audit_run *run = an->run;
    char tool[PATH_MAX];
    int have_tool = find_on_path("addr2line", tool, sizeof tool);
    pending *p = NULL;
    size_t n = 0, cap = 0;
    for (size_t i = 0; i < run->nprocs; i++) {
        sb_audit_proc *pr = run->procs[i];
        const unsigned char *used = an->procs[i].stack_used;
        for (size_t s = 0; used && s < pr->nstacks; s++) {
            if (!used[s])
                continue;
            for (int k = 0; k < pr->stacks[s].nframes; k++) {
                sb_audit_frame *f = &pr->stacks[s].frames[k];
                if ((f->sym[0] && pr->symsize) || !f->obj[0])
                    continue;
                if (sb_grow(&p, &cap, n, sizeof *p) < 0)
                    goto done;
                p[n++] = (pending){f, f->sym[0] != 0};
            }
        }
    }
    if (n)
        sb_sort(p, n, sizeof *p, cmp_pending);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j < n && p[j].f->obj == p[i].f->obj)
            j++;
        name_object(&run->strs, have_tool ? tool : NULL, p + i, j - i);
        i = j;
    }
done:
    free(p);
}
