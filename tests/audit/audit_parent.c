/* audit_parent: a process tree for `syncbench audit`'s GPU tests. The parent makes no CUDA
 * call: it starts two children, this program again as `audit_parent child K` for K = 1 and 2,
 * waits for both and exits 0 (1 if a child failed). A child makes K + 2 cudaStreamSynchronize
 * (each after a 20 us spin on a created stream, outside any NVTX range) and nothing else that
 * syncs. Each child prints one JSON line on stdout:
 *   {"child":PID,"ppid":PARENT,"k":K,"counts":{"sync-stream":{"":K+2}}}
 * and then the parent, once both ended:
 *   {"parent":PID,"children":[{"pid":PID1,"k":1,"sync-stream":3},{"pid":PID2,"k":2,"sync-stream":4}]}
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

const char *prog_name = "audit_parent";

#define CHILDREN 2

static int child(int k)
{
    cudaStream_t s;
    float *marker;
    CK(cudaSetDevice(0));
    CK(cudaStreamCreate(&s));
    CK(cudaMalloc((void **)&marker, sizeof(float)));
    for (int i = 0; i < k + 2; i++) {
        spin_us(20, marker, (float)i, s);
        CK(cudaStreamSynchronize(s));
    }
    printf("{\"child\":%ld,\"ppid\":%ld,\"k\":%d,\"counts\":{\"sync-stream\":{\"\":%d}}}\n",
           (long)getpid(), (long)getppid(), k, k + 2);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "child")) {
        int k = atoi(argv[2]);
        if (k < 1 || k > 1000) {
            fprintf(stderr, "%s: bad child argument '%s'\n", prog_name, argv[2]);
            return 2;
        }
        return child(k);
    }
    if (argc != 1) {
        fprintf(stderr, "usage: audit_parent\n");
        return 2;
    }
    pid_t pids[CHILDREN];
    fflush(stdout);
    for (int k = 1; k <= CHILDREN; k++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("audit_parent: fork");
            return 1;
        }
        if (pid == 0) {
            char arg[16];
            snprintf(arg, sizeof arg, "%d", k);
            execl("/proc/self/exe", argv[0], "child", arg, (char *)NULL);
            perror("audit_parent: exec /proc/self/exe");
            _exit(127);
        }
        pids[k - 1] = pid;
    }
    int failed = 0;
    for (int i = 0; i < CHILDREN; i++) {
        int st;
        if (waitpid(pids[i], &st, 0) < 0) {
            perror("audit_parent: waitpid");
            return 1;
        }
        if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            fprintf(stderr, "%s: child %d (pid %ld) failed (status 0x%x)\n", prog_name, i + 1,
                    (long)pids[i], st);
            failed = 1;
        }
    }
    printf("{\"parent\":%ld,\"children\":[", (long)getpid());
    for (int i = 0; i < CHILDREN; i++)
        printf("%s{\"pid\":%ld,\"k\":%d,\"sync-stream\":%d}", i ? "," : "", (long)pids[i], i + 1,
               i + 3);
    printf("]}\n");
    fflush(stdout);
    return failed;
}
