/* The CUPTI the injection library needs (cupti_find.h): read from the library, found, loaded,
 * handed on through LD_LIBRARY_PATH.
 *
 * Why LD_LIBRARY_PATH and not LD_PRELOAD: the folder changes only how the libcupti.so.N name is
 * found (and whatever else that folder holds), for the processes that look it up, CUDA ones;
 * a preload would load CUPTI into every process CMD starts, a shell or a compiler too, and
 * would sit in the preload list the waits library heads. A program that loads its own
 * libcupti.so.N first (PyTorch, from its wheels) keeps it: one CUPTI per process, of the one
 * major the library needs. */
#include "cmd/cupti_find.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/cudalib.h"
#include "base/envvars.h"
#include "base/error.h"

/* Where CUPTI is under a toolkit's root (the toolkit's extras first: it holds CUPTI alone) and
 * in NVIDIA's wheels (CUDA 13's nvidia/cu13/lib, CUDA 12's nvidia/cuda_cupti/lib). */
static const char *const toolkit_dirs[] = {"extras/CUPTI/lib64", "lib64", NULL};
static const char *const wheel_dirs[] = {"nvidia/cu13/lib", "nvidia/cuda_cupti/lib", NULL};

/* The dynamic section's strings of an ELF64 file: the first DT_NEEDED that starts with
 * `prefix` into needed, DT_SONAME into soname (either may be NULL). 0, or -1 when it is not an
 * ELF64 file with a dynamic section. */
static int elf_names(const char *path, const char *prefix, char *needed, size_t nn, char *soname,
                     size_t sn)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
    Elf64_Ehdr eh;
    if (needed)
        needed[0] = '\0';
    if (soname)
        soname[0] = '\0';
    if (fd < 0)
        return -1;
    if (pread(fd, &eh, sizeof eh, 0) != (ssize_t)sizeof eh || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(Elf64_Shdr))
        goto out;
    for (int i = 0; i < eh.e_shnum && rc; i++) {
        Elf64_Shdr sh, str;
        if (pread(fd, &sh, sizeof sh, (off_t)(eh.e_shoff + (Elf64_Off)i * sizeof sh)) !=
                sizeof sh ||
            sh.sh_type != SHT_DYNAMIC ||
            pread(fd, &str, sizeof str, (off_t)(eh.e_shoff + sh.sh_link * sizeof str)) !=
                sizeof str ||
            sh.sh_size > (1 << 20) || str.sh_size > (16 << 20))
            continue;
        Elf64_Dyn *dyn = malloc(sh.sh_size);
        char *strs = malloc(str.sh_size + 1);
        if (dyn && strs && pread(fd, dyn, sh.sh_size, (off_t)sh.sh_offset) == (ssize_t)sh.sh_size &&
            pread(fd, strs, str.sh_size, (off_t)str.sh_offset) == (ssize_t)str.sh_size) {
            strs[str.sh_size] = '\0';
            for (size_t k = 0; k < sh.sh_size / sizeof *dyn && dyn[k].d_tag != DT_NULL; k++) {
                if (dyn[k].d_un.d_val >= str.sh_size)
                    continue;
                const char *s = strs + dyn[k].d_un.d_val;
                if (dyn[k].d_tag == DT_NEEDED && needed && !needed[0] &&
                    !strncmp(s, prefix, strlen(prefix)))
                    snprintf(needed, nn, "%s", s);
                else if (dyn[k].d_tag == DT_SONAME && soname)
                    snprintf(soname, sn, "%s", s);
            }
            rc = 0;
        }
        free(dyn);
        free(strs);
    }
out:
    close(fd);
    return rc;
}

/* The file SYNCBENCH_CUPTI names: there, the soname the library needs, and found by that name in
 * its folder (as CMD's loader finds it). Its path by that name, absolute, into path. */
static int named(const char *env, const char *soname, const char *lib, char *path, size_t n)
{
    char shown[PATH_MAX], has[256], has_shown[256], dir[PATH_MAX], real[PATH_MAX];
    struct stat a, b;
    sb_escape(env, shown, sizeof shown);
    if (stat(env, &b) != 0 || access(env, R_OK) != 0)
        return sb_fail(SB_EXIT_NODEV, "audit: SYNCBENCH_CUPTI=%s: %s", shown, strerror(errno));
    elf_names(env, "", NULL, 0, has, sizeof has);
    sb_escape(has, has_shown, sizeof has_shown);
    if (strcmp(has, soname))
        return sb_fail(SB_EXIT_NODEV, "audit: SYNCBENCH_CUPTI=%s is %s%s, not the %s that %s needs",
                       shown, has[0] ? "" : "no shared library with a soname", has_shown, soname,
                       lib);
    snprintf(dir, sizeof dir, "%s", env);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    if (!realpath(slash ? (dir[0] ? dir : "/") : ".", real) ||
        snprintf(path, n, "%s/%s", real, soname) >= (int)n || stat(path, &a) != 0 ||
        a.st_ino != b.st_ino || a.st_dev != b.st_dev)
        return sb_fail(SB_EXIT_NODEV,
                       "audit: SYNCBENCH_CUPTI=%s: its folder has no %s that is this file (the "
                       "audited programs find CUPTI by that name): name that one",
                       shown, soname);
    return 0;
}

/* path's folder first in LD_LIBRARY_PATH (this process's, which CMD inherits), unless it is
 * there already. */
static int hand_on(const char *path)
{
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash)
        return 0;
    *slash = '\0';
    const char *old = getenv("LD_LIBRARY_PATH");
    size_t len = strlen(dir);
    if (old && !strncmp(old, dir, len) && (old[len] == ':' || old[len] == '\0'))
        return 0;
    char *val = NULL;
    if (asprintf(&val, "%s%s%s", dir, old && *old ? ":" : "", old && *old ? old : "") < 0 ||
        setenv("LD_LIBRARY_PATH", val, 1) != 0) {
        free(val);
        return sb_fail(SB_EXIT_FAIL, "audit: setenv: %s", strerror(errno));
    }
    free(val);
    return 0;
}

int sb_cupti_prepare(const char *lib)
{
    char soname[256], path[PATH_MAX], looked[700], why[PATH_MAX + 256], name[256];
    if (elf_names(lib, "libcupti.so", soname, sizeof soname, NULL, 0) != 0 || !soname[0])
        return 0; /* not an ELF file, or no CUPTI needed: loading it says what is wrong */
    const char *base = strrchr(lib, '/');
    sb_escape(base ? base + 1 : lib, name, sizeof name);
    const char *env = sb_env_str(SB_ENV_CUPTI);
    sb_cudalib_from from = SB_CUDALIB_NONE;
    if (env) {
        int rc = named(env, soname, name, path, sizeof path);
        if (rc)
            return rc;
    } else {
        const sb_cudalib what = {soname, toolkit_dirs, wheel_dirs};
        from = sb_cudalib_find(&what, path, sizeof path, looked, sizeof looked);
        if (from == SB_CUDALIB_NONE) {
            /* the loader's own search: the library's runpath, ld.so.cache; a failure that is not
             * CUPTI's is find_injection's to report */
            if (!sb_cudalib_no_toolkit()) {
                const char *e = dlopen(lib, RTLD_NOW | RTLD_LOCAL) ? NULL : dlerror();
                if (!e || !strstr(e, soname))
                    return 0;
            }
            return sb_fail(SB_EXIT_NODEV,
                           "audit: CUPTI not found: %s needs %s; looked in %s; %s; set "
                           "SYNCBENCH_CUPTI to a %s, or pip install nvidia-cuda-cupti (or install "
                           "the CUDA toolkit)",
                           name, soname, looked,
                           sb_cudalib_no_toolkit()
                               ? "the loader's own search (skipped: SYNCBENCH_NO_TOOLKIT=1)"
                               : "the loader's own search (runpath, ld.so.cache)",
                           soname);
        }
    }
    if (!dlopen(path, RTLD_NOW | RTLD_GLOBAL)) {
        const char *e = dlerror();
        snprintf(why, sizeof why, "%s", e ? e : path);
        for (char *p = why; *p; p++)
            if (*p == '\n')
                *p = ' ';
        return sb_fail(SB_EXIT_NODEV, "audit: cannot load CUPTI (from %s): %s",
                       env && *env ? "SYNCBENCH_CUPTI" : sb_cudalib_from_name(from), why);
    }
    return from == SB_CUDALIB_LD_PATH ? 0 : hand_on(path);
}
