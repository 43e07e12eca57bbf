#include "base/env.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "base/textutil.h"
#include "base/utf8.h"

void sb_utc_now(char *buf, int n)
{
    sb_utc_format(time(NULL), buf, n);
}

void sb_utc_format(time_t t, char *buf, int n)
{
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, (size_t)n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

void sb_gpu_slug(const char *gpu, char *buf, size_t n)
{
    if (!strncmp(gpu, "NVIDIA ", 7))
        gpu += 7;
    size_t j = 0;
    for (; *gpu && j + 1 < n; gpu++) {
        unsigned char c = (unsigned char)*gpu;
        if (isalnum(c))
            buf[j++] = (char)tolower(c);
        else if (j && buf[j - 1] != '-')
            buf[j++] = '-';
    }
    while (j && buf[j - 1] == '-')
        j--;
    buf[j] = '\0';
    if (!j)
        snprintf(buf, n, "gpu");
}

static void cpu_model(char *buf, size_t n)
{
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (!strncmp(line, "model name", 10)) {
            char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ')
                    p++;
                p[strcspn(p, "\n")] = '\0';
                snprintf(buf, n, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

void sb_env_host(sb_env *e, int argc, char **argv)
{
    memset(e, 0, sizeof *e);
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    char stamp[32];
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(e->run_id, sizeof e->run_id, "%s-%d", stamp, (int)getpid());
    strftime(e->date, sizeof e->date, "%Y%m%d-%H%M%S", &tm);
    if (gethostname(e->host, sizeof e->host - 1) != 0)
        strcpy(e->host, "unknown");
    cpu_model(e->cpu, sizeof e->cpu);
    struct utsname u;
    if (uname(&u) == 0)
        snprintf(e->kernel, sizeof e->kernel, "%s %s %s", u.sysname, u.release, u.machine);
    snprintf(e->version, sizeof e->version, "%s", SB_VERSION);
    snprintf(e->git_rev, sizeof e->git_rev, "%s", SB_GIT_REV);
    size_t used = 0;
    for (int i = 0; i < argc && used + 2 < sizeof e->command_line; i++) {
        int w = snprintf(e->command_line + used, sizeof e->command_line - used, "%s%s",
                         i ? " " : "", argv[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
    /* the JSON record takes UTF-8 only: a Latin-1 file name or a cut character becomes '?' */
    char *text[] = {e->host, e->cpu, e->kernel, e->command_line};
    for (size_t i = 0; i < sizeof text / sizeof text[0]; i++)
        sb_utf8_sanitize(text[i]);
    snprintf(e->gpu, sizeof e->gpu, "unknown");
}
