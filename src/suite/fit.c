#include "suite/fit.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"

void sb_human_bytes(double b, char *buf, size_t n)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    snprintf(buf, n, u ? "%.1f %s" : "%.0f %s", b, units[u]);
}

/* MemAvailable from /proc/meminfo, 0 if unknown. */
static size_t host_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[256];
    unsigned long long kb = 0;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
            break;
    fclose(f);
    return (size_t)kb * 1024;
}

int sb_plan_fits(const sb_plan *plan, const char *gpu_name, size_t free_b)
{
    size_t host_b = host_available();
    for (int i = 0; i < plan->n; i++) {
        const sb_plan_entry *e = &plan->entries[i];
        char params[256], need[32], have[32];
        sb_params_format_all(e->sc->params, e->values, params, sizeof params);
        sb_param_values pv = sb_plan_params(e);
        size_t dev = e->sc->device_bytes ? e->sc->device_bytes(&pv) : 0;
        if (dev > free_b) {
            sb_human_bytes((double)dev, need, sizeof need);
            sb_human_bytes((double)free_b, have, sizeof have);
            return sb_fail(SB_EXIT_USAGE, "%s %s: needs %s of GPU memory, %s free on %s",
                           e->sc->name, params, need, have, gpu_name);
        }
        size_t host = e->sc->host_bytes ? e->sc->host_bytes(&pv) : 0;
        if (host_b && host > host_b) {
            sb_human_bytes((double)host, need, sizeof need);
            sb_human_bytes((double)host_b, have, sizeof have);
            return sb_fail(SB_EXIT_USAGE, "%s %s: needs %s of host memory, %s available",
                           e->sc->name, params, need, have);
        }
    }
    return 0;
}
