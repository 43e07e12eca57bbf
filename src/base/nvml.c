#include "base/nvml.h"

#include <dlfcn.h>
#include <string.h>

#include "base/dynlib.h"

typedef int nvmlReturn_t; /* NVML_SUCCESS == 0 */
typedef struct nvmlDevice_st *nvmlDevice_t;
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

static struct {
    void *lib;
    nvmlDevice_t dev;
    nvmlReturn_t (*shutdown)(void);
    nvmlReturn_t (*driver_version)(char *, unsigned int);
    nvmlReturn_t (*by_pci)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*clock)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*max_clock)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*pcie_max_gen)(nvmlDevice_t, unsigned int *);
    nvmlReturn_t (*pcie_max_width)(nvmlDevice_t, unsigned int *);
} g;

static const char *const libname[] = {"libnvidia-ml.so.1"};

int sb_nvml_open(void)
{
    if (g.lib)
        return 0;
    nvmlReturn_t (*init)(void) = NULL;
    const sb_dynsym syms[] = {
        {"nvmlInit_v2", (void **)&init, 0, NULL},
        {"nvmlShutdown", (void **)&g.shutdown, 0, NULL},
        {"nvmlSystemGetDriverVersion", (void **)&g.driver_version, 0, NULL},
        {"nvmlDeviceGetHandleByPciBusId_v2", (void **)&g.by_pci, 1, NULL},
        {"nvmlDeviceGetClockInfo", (void **)&g.clock, 1, NULL},
        {"nvmlDeviceGetMaxClockInfo", (void **)&g.max_clock, 1, NULL},
        /* renamed in recent drivers; the old name is kept for older ones */
        {"nvmlDeviceGetCurrentClocksEventReasons", (void **)&g.reasons, 1,
         "nvmlDeviceGetCurrentClocksThrottleReasons"},
        {"nvmlDeviceGetCurrPcieLinkGeneration", (void **)&g.pcie_gen, 1, NULL},
        {"nvmlDeviceGetCurrPcieLinkWidth", (void **)&g.pcie_width, 1, NULL},
        {"nvmlDeviceGetMaxPcieLinkGeneration", (void **)&g.pcie_max_gen, 1, NULL},
        {"nvmlDeviceGetMaxPcieLinkWidth", (void **)&g.pcie_max_width, 1, NULL},
    };
    void *lib = sb_dynlib_load(libname, 1, syms, sizeof syms / sizeof *syms, NULL, NULL, 0);
    if (lib && init() == 0) {
        g.lib = lib;
        return 0;
    }
    if (lib)
        dlclose(lib);
    memset(&g, 0, sizeof g); /* what was found before a missing symbol */
    return -1;
}

void sb_nvml_close(void)
{
    if (!g.lib)
        return;
    g.shutdown();
    dlclose(g.lib);
    memset(&g, 0, sizeof g);
}

int sb_nvml_driver_version(char *buf, size_t n)
{
    if (!g.lib || n == 0)
        return -1;
    return g.driver_version(buf, (unsigned int)n) == 0 ? 0 : -1;
}

int sb_nvml_select(const char *pci_bus_id)
{
    if (!g.lib || !g.by_pci)
        return -1;
    return g.by_pci(pci_bus_id, &g.dev) == 0 ? 0 : -1;
}

static unsigned get(nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int *))
{
    unsigned v = 0;
    if (!g.dev || !fn || fn(g.dev, &v) != 0)
        return 0;
    return v;
}

static unsigned get_clock(nvmlReturn_t (*fn)(nvmlDevice_t, int, unsigned int *), int which)
{
    unsigned v = 0;
    if (!g.dev || !fn || fn(g.dev, which, &v) != 0)
        return 0;
    return v;
}

int sb_nvml_info_get(sb_nvml_info *out)
{
    memset(out, 0, sizeof *out);
    if (!g.dev)
        return -1;
    out->sm_mhz = get_clock(g.clock, NVML_CLOCK_SM);
    out->sm_max_mhz = get_clock(g.max_clock, NVML_CLOCK_SM);
    out->mem_mhz = get_clock(g.clock, NVML_CLOCK_MEM);
    out->mem_max_mhz = get_clock(g.max_clock, NVML_CLOCK_MEM);
    out->pcie_gen = get(g.pcie_gen);
    out->pcie_width = get(g.pcie_width);
    out->pcie_max_gen = get(g.pcie_max_gen);
    out->pcie_max_width = get(g.pcie_max_width);
    return 0;
}

int sb_nvml_sample(int device, sb_clock_sample *out)
{
    (void)device; /* the device selected with sb_nvml_select */
    memset(out, 0, sizeof *out);
    if (!g.dev || !g.clock || !g.reasons)
        return -1;
    if (g.clock(g.dev, NVML_CLOCK_SM, &out->sm_mhz) != 0 || g.reasons(g.dev, &out->reasons) != 0)
        return -1;
    out->valid = 1;
    return 0;
}
