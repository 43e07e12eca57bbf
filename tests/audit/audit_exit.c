/* audit_exit MODE: how an audited program may end, for `syncbench audit`'s GPU tests.
 *   crash   3 cudaDeviceSynchronize, then raise(SIGSEGV) (core dumps off): exit status 128+11
 *   exit7   3 cudaDeviceSynchronize, then exit(7)
 *   kill    3 cudaDeviceSynchronize, then raise(SIGTERM): exit status 128+15
 *   nocuda  no CUDA call at all (CUDA is never initialized), exit 0
 * Before ending it prints one JSON line on stdout (flushed), the truth for the test:
 *   {"pid":P,"mode":"crash","counts":{"sync-device":{"":3}}}   ({} for nocuda)
 * Each sync follows a 20 us spin on the legacy stream, outside any NVTX range; nothing else
 * syncs. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "check.h"

const char *prog_name = "audit_exit";

static void three_syncs(void)
{
    float *marker;
    CK(cudaSetDevice(0));
    CK(cudaMalloc((void **)&marker, sizeof(float)));
    for (int i = 0; i < 3; i++) {
        spin_us(20, marker, (float)i, 0);
        CK(cudaDeviceSynchronize());
    }
}

static void say(const char *mode, int cuda)
{
    printf("{\"pid\":%ld,\"mode\":\"%s\",\"counts\":{%s}}\n", (long)getpid(), mode,
           cuda ? "\"sync-device\":{\"\":3}" : "");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *mode = argc == 2 ? argv[1] : "";
    if (!strcmp(mode, "nocuda")) {
        say(mode, 0);
        return 0;
    }
    if (strcmp(mode, "crash") && strcmp(mode, "exit7") && strcmp(mode, "kill")) {
        fprintf(stderr, "usage: audit_exit crash|exit7|kill|nocuda\n");
        return 2;
    }
    three_syncs();
    say(mode, 1);
    if (!strcmp(mode, "exit7"))
        exit(7);
    if (!strcmp(mode, "crash")) {
        struct rlimit none = {0, 0}; /* no core file: the test wants the signal, not a dump */
        setrlimit(RLIMIT_CORE, &none);
        raise(SIGSEGV); /* the default action: a crash, as a bad pointer would give */
    } else {
        raise(SIGTERM);
    }
    fprintf(stderr, "%s: still alive after raising the signal\n", prog_name);
    return 1;
}
