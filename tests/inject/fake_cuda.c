/* A CPU stand-in for a CUDA program, for the launcher's tests on machines without a GPU: it
 * loads the injection library named by CUDA_INJECTION64_PATH and calls InitializeInjection, as
 * the CUDA driver does when a program initializes CUDA, so the library writes its "proc" and
 * "end" records and tells the launcher it started and ended. No CUDA call is made.
 *   fake_cuda [SECONDS]   stays SECONDS (default 0) before it exits */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    const char *lib = getenv("CUDA_INJECTION64_PATH");
    if (!lib) {
        fprintf(stderr, "fake_cuda: CUDA_INJECTION64_PATH is not set\n");
        return 2;
    }
    void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
    int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
    if (!init) {
        fprintf(stderr, "fake_cuda: %s\n", dlerror());
        return 2;
    }
    init();
    if (argc > 1)
        sleep((unsigned)atoi(argv[1]));
    return 0;
}
