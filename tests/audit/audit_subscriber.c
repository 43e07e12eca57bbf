/* audit_subscriber MODE: a program that holds CUPTI's one subscription itself, as the PyTorch
 * profiler, Nsight or a monitoring agent may, for `syncbench audit`'s gate tests.
 *   first   subscribes to CUPTI's callbacks before its first CUDA call, then makes 3 syncs
 *   alone   the same 3 syncs without subscribing
 * Each sync is a cudaStreamSynchronize of the legacy stream after a 20 us spin. It prints one
 * JSON line on stdout, the truth for the test:
 *   {"pid":P,"mode":"first","subscribed":true,"counts":{"sync-stream":{"":3}}}
 * subscribed: whether its own cuptiSubscribe succeeded (the audit's library, loaded by the
 * driver at the first CUDA call, then finds the subscription taken). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cupti.h>

#include "check.h"

const char *prog_name = "audit_subscriber";

static void CUPTIAPI on_callback(void *user, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
                                 const void *data)
{
    (void)user, (void)domain, (void)cbid, (void)data;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "first") && strcmp(mode, "alone")) {
        fprintf(stderr, "usage: audit_subscriber first|alone\n");
        return 2;
    }
    int subscribed = 0;
    if (!strcmp(mode, "first")) {
        CUpti_SubscriberHandle sub;
        CUptiResult r = cuptiSubscribe(&sub, on_callback, NULL);
        subscribed = r == CUPTI_SUCCESS;
        if (subscribed)
            cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_RUNTIME_API);
    }
    float *marker;
    CK(cudaSetDevice(0));
    CK(cudaMalloc((void **)&marker, sizeof(float)));
    for (int i = 0; i < 3; i++) {
        spin_us(20, marker, (float)i, 0);
        CK(cudaStreamSynchronize(0));
    }
    CK(cudaFree(marker));
    printf("{\"pid\":%ld,\"mode\":\"%s\",\"subscribed\":%s,\"counts\":{\"sync-stream\":{\"\":3},"
           "\"free\":{\"\":1}}}\n",
           (long)getpid(), mode, subscribed ? "true" : "false");
    return 0;
}
