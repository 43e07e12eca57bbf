/* NVTX injection library for tests: loaded by any NVTX-instrumented program started with
 * NVTX_INJECTION64_PATH=<this .so>, it writes every domain range push and pop to the file
 * named by NVTX_RECORD_OUT, one per line:
 *     push<TAB>domain<TAB>name<TAB>AARRGGBB
 *     pop<TAB>domain
 * This is how the tests check syncbench's ranges without Nsight Systems (and without a GPU). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvtx3/nvToolsExt.h>

typedef struct {
    char name[128];
} domain;

static FILE *out;

static const char *domain_name(nvtxDomainHandle_t h)
{
    return h ? ((const domain *)h)->name : "(default)";
}

static nvtxDomainHandle_t NVTX_API create_domain(const char *name)
{
    domain *d = calloc(1, sizeof *d);
    if (d)
        snprintf(d->name, sizeof d->name, "%s", name ? name : "");
    return (nvtxDomainHandle_t)d;
}

static int NVTX_API push(nvtxDomainHandle_t h, const nvtxEventAttributes_t *a)
{
    const char *msg = a && a->messageType == NVTX_MESSAGE_TYPE_ASCII ? a->message.ascii : "?";
    unsigned color = a && a->colorType == NVTX_COLOR_ARGB ? a->color : 0;
    fprintf(out, "push\t%s\t%s\t%08X\n", domain_name(h), msg, color);
    return 0;
}

static int NVTX_API pop(nvtxDomainHandle_t h)
{
    fprintf(out, "pop\t%s\n", domain_name(h));
    return 0;
}

__attribute__((visibility("default"))) int
InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get_export_table)
{
    const char *path = getenv("NVTX_RECORD_OUT");
    out = fopen(path ? path : "/dev/stderr", "w");
    if (!out)
        return 0;
    setvbuf(out, NULL, _IOLBF, 0);
    const NvtxExportTableCallbacks *cb = get_export_table(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table;
    unsigned int size;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) ||
        size <= NVTX_CBID_CORE2_DomainCreateA)
        return 0;
    *table[NVTX_CBID_CORE2_DomainCreateA] = (NvtxFunctionPointer)create_domain;
    *table[NVTX_CBID_CORE2_DomainRangePushEx] = (NvtxFunctionPointer)push;
    *table[NVTX_CBID_CORE2_DomainRangePop] = (NvtxFunctionPointer)pop;
    return 1;
}
