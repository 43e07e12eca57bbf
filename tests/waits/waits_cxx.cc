// C++'s std::condition_variable under libsyncbench_waits.so: run with the library in LD_PRELOAD
// by tests/cli/test_waits.py. libstdc++'s wait() and notify_one() are pthread_cond_wait and
// pthread_cond_signal, its wait_for() on the steady clock pthread_cond_clockwait: the hooks see
// them. A waiter sleeps in each wait until this thread, after about 20 ms of work once the waiter
// is asleep, notifies it; one JSON line a case:
//   {"case":"wait","waiter":W,"notifier":N,"wakes":[{"tid":W,"by":N,"obj":"cond"},...]}
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "waits/waits.h"

namespace
{

int gettid_now()
{
    return static_cast<int>(syscall(SYS_gettid));
}

// The thread's state in /proc is S (asleep) once it sleeps in its wait.
void until_asleep(const std::atomic<int> &tid)
{
    while (!tid.load())
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    char path[64], stat[512];
    std::snprintf(path, sizeof path, "/proc/self/task/%d/stat", tid.load());
    for (int i = 0; i < 5000; i++) {
        FILE *f = std::fopen(path, "r");
        size_t n = f ? std::fread(stat, 1, sizeof stat - 1, f) : 0;
        if (f)
            std::fclose(f);
        stat[n] = 0;
        const char *paren = std::strrchr(stat, ')');
        if (paren && paren[1] == ' ' && paren[2] == 'S')
            return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
}

void one_case(const char *name, bool timed, size_t (*drain)(sbw_handoff *, size_t))
{
    std::mutex m;
    std::condition_variable cv;
    bool ready = false;
    std::atomic<int> waiter{0};
    std::thread t([&] {
        std::unique_lock<std::mutex> lock(m);
        waiter = gettid_now();
        if (timed)
            cv.wait_for(lock, std::chrono::seconds(5), [&] { return ready; });
        else
            cv.wait(lock, [&] { return ready; });
    });
    until_asleep(waiter);
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
    while (std::chrono::steady_clock::now() < end) {
    }
    {
        std::lock_guard<std::mutex> lock(m);
        ready = true;
    }
    cv.notify_one();
    t.join();
    sbw_handoff got[16];
    size_t n = drain(got, 16);
    std::printf("{\"case\":\"%s\",\"waiter\":%d,\"notifier\":%d,\"wakes\":[", name, waiter.load(),
                gettid_now());
    for (size_t i = 0; i < n; i++)
        std::printf("%s{\"tid\":%d,\"by\":%d,\"obj\":\"%s\"}", i ? "," : "", got[i].waiter_tid,
                    got[i].signaller_tid, got[i].kind == SBW_COND ? "cond" : "other");
    std::printf("]}\n");
}

} // namespace

int main()
{
    auto start = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "sbw_start"));
    auto drain =
        reinterpret_cast<size_t (*)(sbw_handoff *, size_t)>(dlsym(RTLD_DEFAULT, "sbw_drain"));
    if (!start || !drain || start() != 0) {
        std::fprintf(stderr, "waits_cxx: libsyncbench_waits.so is not preloaded\n");
        return 2;
    }
    one_case("wait", false, drain);
    one_case("wait_for", true, drain);
    return 0;
}
