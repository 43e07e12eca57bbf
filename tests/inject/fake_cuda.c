/* A CPU stand-in for a CUDA program, for the launcher's tests on machines without a GPU: it
 * loads the injection library named by CUDA_INJECTION64_PATH and calls InitializeInjection, as
 * the CUDA driver does when a program initializes CUDA, so the library writes its "proc" and
 * "end" records and tells the launcher it started and ended. No CUDA call is made.
 *   fake_cuda [SECONDS]   stays SECONDS (default 0) before it exits
 *   fake_cuda handoff     prints "LD_PRELOAD=..." (or "LD_PRELOAD unset") and "tids MAIN WAITER",
 *                         and hands work from its main thread to another through a condition
 *                         variable: the waiter sleeps in pthread_cond_wait until the main thread
 *                         signals after about 20 ms of work (a "wake" record with --gpu-activity)
 *   fake_cuda ranges NAME[@DOMAIN] COUNT[+] ...   NVTX ranges played through the fake CUPTI
 *                         (tests/inject/fake_cupti.c, fake_cupti_nvtx): COUNT instances of each
 *                         range in turn, each pushed, held 2 ms with a kernel launch in its middle
 *                         (fake_cupti_launch) and popped; with "+" the last one is left open at
 *                         the exit. CUDA's first context (fake_cupti_context) is made first, or
 *                         where the pair "context 1" stands ("context 0": none)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "tests/waits/asleep.h"

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready;
static _Atomic int waiter_tid;

static void *waiter(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&mutex);
    atomic_store(&waiter_tid, (int)syscall(SYS_gettid));
    while (!ready)
        pthread_cond_wait(&cond, &mutex);
    pthread_mutex_unlock(&mutex);
    return NULL;
}

/* Once the waiter sleeps (state S in /proc: in its wait), 20 ms of work, then the signal. */
static void handoff(void)
{
    const char *preload = getenv("LD_PRELOAD");
    if (preload)
        printf("LD_PRELOAD=%s\n", preload);
    else
        printf("LD_PRELOAD unset\n");
    pthread_t t;
    pthread_create(&t, NULL, waiter, NULL);
    until_asleep(&waiter_tid);
    sleep_ms(20);
    pthread_mutex_lock(&mutex);
    ready = 1;
    pthread_cond_signal(&cond);
    pthread_mutex_unlock(&mutex);
    pthread_join(t, NULL);
    printf("tids %d %d\n", (int)syscall(SYS_gettid), atomic_load(&waiter_tid));
}

/* NVTX ranges through the fake CUPTI loaded with the injection library (see above). */
static int ranges(int argc, char **argv)
{
    void *cupti = dlopen("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
    void (*nvtx)(const char *, const char *, const char *) =
        cupti ? (void (*)(const char *, const char *, const char *))dlsym(cupti, "fake_cupti_nvtx")
              : NULL;
    void (*launch)(void) = cupti ? (void (*)(void))dlsym(cupti, "fake_cupti_launch") : NULL;
    void (*context)(void) = cupti ? (void (*)(void))dlsym(cupti, "fake_cupti_context") : NULL;
    if (!nvtx || !launch || !context) {
        fprintf(stderr, "fake_cuda: ranges need the fake CUPTI (fake_cupti_nvtx, "
                        "fake_cupti_launch, fake_cupti_context)\n");
        return 2;
    }
    int later = 0; /* "context" among the ranges: the context is made there, not first */
    for (int i = 0; i + 1 < argc; i += 2)
        later |= !strcmp(argv[i], "context");
    if (!later)
        context(); /* a CUDA program's first context comes before its first launch */
    for (int i = 0; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "context")) {
            if (atoi(argv[i + 1]) > 0) /* "context 0": none at all */
                context();
            continue;
        }
        char name[256];
        snprintf(name, sizeof name, "%s", argv[i]);
        char *at = strchr(name, '@');
        if (at)
            *at++ = 0;
        int n = atoi(argv[i + 1]), open_last = strchr(argv[i + 1], '+') != NULL;
        for (int k = 0; k < n; k++) {
            nvtx("push", name, at);
            sleep_ms(1);
            launch();
            sleep_ms(1);
            if (!(open_last && k == n - 1))
                nvtx("pop", name, at);
        }
    }
    return 0;
}

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
    if (argc > 1 && !strcmp(argv[1], "handoff"))
        handoff();
    else if (argc > 1 && !strcmp(argv[1], "ranges"))
        return ranges(argc - 2, argv + 2);
    else if (argc > 1)
        sleep((unsigned)atoi(argv[1]));
    return 0;
}
