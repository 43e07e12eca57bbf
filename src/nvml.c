#include "nvml.h"

#include <dlfcn.h>
#include <string.h>

typedef int nvmlReturn_t; /* NVML_SUCCESS == 0 */
typedef nvmlReturn_t (*nvml_init_fn)(void);
typedef nvmlReturn_t (*nvml_shutdown_fn)(void);
typedef nvmlReturn_t (*nvml_driver_version_fn)(char *version, unsigned int length);

static struct {
    void *lib;
    nvml_shutdown_fn shutdown;
    nvml_driver_version_fn driver_version;
} g;

int sb_nvml_open(void)
{
    if (g.lib)
        return 0;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return -1;
    nvml_init_fn init = (nvml_init_fn)dlsym(lib, "nvmlInit_v2");
    g.shutdown = (nvml_shutdown_fn)dlsym(lib, "nvmlShutdown");
    g.driver_version = (nvml_driver_version_fn)dlsym(lib, "nvmlSystemGetDriverVersion");
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
