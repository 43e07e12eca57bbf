/* base/coproc: the helper process the sched scenario talks to, tested with this binary itself
 * as the helper (started as /proc/self/exe with "helper" as its first argument): requests and
 * replies line by line, a helper that exits or dies, one that hangs and is killed after the
 * grace period, a send to a dead helper that is an error and not a SIGPIPE, a read interrupted
 * by a signal, and the helper's own process group (Ctrl-C is for the parent alone). CPU only. */
#include "cmocka_all.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/coproc.h"

/* The helper: "echo X" -> "got X", "exit N" -> exits N, "crash" -> SIGABRT, "slow" -> answers
 * after 200 ms, "hang" -> never answers and ignores end of file. */
static int helper(void)
{
    char line[256];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "echo ", 5))
            printf("got %s\n", line + 5);
        else if (!strncmp(line, "exit ", 5))
            exit(atoi(line + 5));
        else if (!strcmp(line, "crash"))
            abort();
        else if (!strcmp(line, "slow")) {
            const struct timespec t = {0, 200000000};
            nanosleep(&t, NULL);
            printf("slow done\n");
        } else if (!strcmp(line, "pgid"))
            printf("%d %d\n", (int)getpid(), (int)getpgid(0));
        else if (!strcmp(line, "hang"))
            for (;;)
                pause();
        fflush(stdout);
    }
    return 0;
}

/* Starts the helper and sends it `request` (NULL: nothing yet). */
static void start(sb_coproc *c, const char *request)
{
    char name[] = "test_coproc", arg[] = "helper";
    char *argv[] = {name, arg, NULL};
    assert_int_equal(sb_coproc_start(c, argv), 0);
    assert_true(c->pid > 0);
    if (request)
        assert_int_equal(sb_coproc_send(c, request), 0);
}

static void request_and_reply(void **state)
{
    (void)state;
    sb_coproc c;
    char line[64];
    start(&c, "echo one\necho two\n");
    assert_int_equal(sb_coproc_recv(&c, line, sizeof line), 0);
    assert_string_equal(line, "got one");
    assert_int_equal(sb_coproc_recv(&c, line, sizeof line), 0);
    assert_string_equal(line, "got two");
    /* a long line is cut to the buffer, the rest is dropped with its newline */
    assert_int_equal(sb_coproc_send(&c, "echo 0123456789\n"), 0);
    assert_int_equal(sb_coproc_recv(&c, line, 8), 0);
    assert_string_equal(line, "got 012");
    assert_int_equal(sb_coproc_send(&c, "echo x\n"), 0);
    assert_int_equal(sb_coproc_recv(&c, line, sizeof line), 0);
    assert_string_equal(line, "got x");
    int status = sb_coproc_stop(&c, 2000); /* end of file: the helper exits 0 */
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    assert_int_equal(sb_coproc_stop(&c, 2000), -1); /* twice is harmless */
}

static void helper_that_exits_or_dies(void **state)
{
    (void)state;
    sb_coproc c;
    char line[64], how[128];
    start(&c, "exit 3\n");
    assert_int_equal(sb_coproc_recv(&c, line, sizeof line), -1);
    sb_coproc_describe(sb_coproc_stop(&c, 2000), how, sizeof how);
    assert_string_equal(how, "exit status 3");

    start(&c, "crash\n");
    assert_int_equal(sb_coproc_recv(&c, line, sizeof line), -1);
    sb_coproc_describe(sb_coproc_stop(&c, 2000), how, sizeof how);
    assert_true(!strncmp(how, "signal 6 ", 9));
}

static void send_to_a_dead_helper_is_an_error(void **state)
{
    (void)state;
    sb_coproc c;
    char line[64];
    start(&c, "exit 0\n");
    assert_int_equal(sb_coproc_recv(&c, line, sizeof line), -1);
    /* the peer is gone: EPIPE (or ECONNRESET), and this process is still alive to see it */
    int err = 0;
    for (int i = 0; i < 100 && !err; i++)
        err = sb_coproc_send(&c, "echo late\n");
    assert_true(err == EPIPE || err == ECONNRESET);
    sb_coproc_stop(&c, 2000);
}

static void hanging_helper_is_killed(void **state)
{
    (void)state;
    sb_coproc c;
    char how[128];
    start(&c, "hang\n");
    int status = sb_coproc_stop(&c, 50);
    sb_coproc_describe(status, how, sizeof how);
    assert_true(WIFSIGNALED(status));
    assert_int_equal(WTERMSIG(status), SIGKILL);
}

static void on_alarm(int sig)
{
    (void)sig;
}

static void read_survives_a_signal(void **state)
{
    (void)state;
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm; /* no SA_RESTART: read() returns EINTR, as under Ctrl-C */
    sigaction(SIGALRM, &sa, &old);
    sb_coproc c;
    char line[64];
    start(&c, NULL);
    struct itimerval t = {{0, 0}, {0, 50000}};
    setitimer(ITIMER_REAL, &t, NULL);
    assert_int_equal(sb_coproc_send(&c, "slow\n"), 0);
    assert_int_equal(sb_coproc_recv(&c, line, sizeof line), 0);
    assert_string_equal(line, "slow done");
    sb_coproc_stop(&c, 2000);
    sigaction(SIGALRM, &old, NULL);
}

static void helper_has_its_own_process_group(void **state)
{
    (void)state;
    sb_coproc c;
    char line[64];
    int pid = 0, pgid = 0;
    start(&c, "pgid\n");
    assert_int_equal(sb_coproc_recv(&c, line, sizeof line), 0);
    assert_int_equal(sscanf(line, "%d %d", &pid, &pgid), 2);
    assert_int_equal(pid, (int)c.pid);
    assert_int_equal(pgid, pid);
    assert_int_not_equal(pgid, (int)getpgid(0));
    sb_coproc_stop(&c, 2000);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "helper"))
        return helper();
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_and_reply),
        cmocka_unit_test(helper_that_exits_or_dies),
        cmocka_unit_test(send_to_a_dead_helper_is_an_error),
        cmocka_unit_test(hanging_helper_is_killed),
        cmocka_unit_test(read_survives_a_signal),
        cmocka_unit_test(helper_has_its_own_process_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
