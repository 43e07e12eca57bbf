#include "base/nvml.h"

#include <dlfcn.h>
#include <string.h>

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

#define LOAD(field, name) (*(void **)&g.field = dlsym(lib, name))

int sb_nvml_open(void)
{
    if (g.lib)
        return 0;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return -1;
    nvmlReturn_t (*init)(void);
    *(void **)&init = dlsym(lib, "nvmlInit_v2");
    LOAD(shutdown, "nvmlShutdown");
    LOAD(driver_version, "nvmlSystemGetDriverVersion");
    LOAD(by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
    LOAD(clock, "nvmlDeviceGetClockInfo");
    LOAD(max_clock, "nvmlDeviceGetMaxClockInfo");
    /* renamed in recent drivers; the old name is kept for older ones */
    if (!LOAD(reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
        LOAD(reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
    LOAD(pcie_gen, "nvmlDeviceGetCurrPcieLinkGeneration");
    LOAD(pcie_width, "nvmlDeviceGetCurrPcieLinkWidth");
    LOAD(pcie_max_gen, "nvmlDeviceGetMaxPcieLinkGeneration");
    LOAD(pcie_max_width, "nvmlDeviceGetMaxPcieLinkWidth");
    if (!init || !g.shutdown || !g.driver_version || init() != 0) {
        dlclose(lib);
        memset(&g, 0, sizeof g);
        return -1;
    }
    g.lib = lib;
    return 0;
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
