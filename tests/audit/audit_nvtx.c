/* audit_nvtx: every kind of NVTX range `syncbench audit` must name, each around known
 * cudaStreamSynchronize calls (after a 20 us spin), for tests/gpu/test_audit.py:
 *   "reg-range"  a range in the domain "sb-domain" named by a registered string, 2 syncs
 *   "startend"   nvtxRangeStartA on the main thread, ended by nvtxRangeEnd on a second thread
 *                that makes 3 syncs inside it
 *   "λ-range"    a push range with a UTF-8 name, 1 sync
 *   "wide-Ω"     nvtxRangePushW (a wide-character name), 1 sync: CUPTI 13 makes no callback for
 *                the wide functions (seen on the H100), so this sync is counted outside every
 *                range and the name is listed apart ("unseen")
 * One JSON line on stdout:
 *   {"ranges":{"reg-range":2,"startend":3,"λ-range":1},"unseen":{"wide-Ω":1},"outside":5}
 * (outside: syncs in no push/pop range: 1 before them, the 3 of the start/end range, which
 * belongs to no thread, and the wide range's). */
#include <pthread.h>
#include <stdio.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

#include "check.h"

const char *prog_name = "audit_nvtx";

static cudaStream_t stream;
static float *marker;

static void syncs(int n)
{
    for (int i = 0; i < n; i++) {
        spin_us(20, marker, (float)i, stream);
        CK(cudaStreamSynchronize(stream));
    }
}

static void *other_thread(void *arg)
{
    syncs(3);
    nvtxRangeEnd(*(nvtxRangeId_t *)arg);
    return NULL;
}

int main(void)
{
    CK(cudaSetDevice(0));
    CK(cudaStreamCreate(&stream));
    CK(cudaMalloc((void **)&marker, sizeof(float)));
    syncs(1); /* outside every range */

    nvtxDomainHandle_t dom = nvtxDomainCreateA("sb-domain");
    nvtxStringHandle_t name = nvtxDomainRegisterStringA(dom, "reg-range");
    nvtxEventAttributes_t a = {0};
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = name;
    nvtxDomainRangePushEx(dom, &a);
    syncs(2);
    nvtxDomainRangePop(dom);

    nvtxRangeId_t id = nvtxRangeStartA("startend");
    pthread_t t;
    if (pthread_create(&t, NULL, other_thread, &id) != 0 || pthread_join(t, NULL) != 0) {
        fprintf(stderr, "audit_nvtx: thread\n");
        return 1;
    }

    nvtxRangePushA("\xce\xbb-range");
    syncs(1);
    nvtxRangePop();

    nvtxRangePushW(L"wide-\u03a9");
    syncs(1);
    nvtxRangePop();

    printf("{\"ranges\":{\"reg-range\":2,\"startend\":3,\"\xce\xbb-range\":1},"
           "\"unseen\":{\"wide-\xce\xa9\":1},\"outside\":5}\n");
    return 0;
}
