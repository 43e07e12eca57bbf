/* gpu/nccl_api.c, NCCL loaded with dlopen: a library that is not there, or is not NCCL, is one
 * line naming it and the loader's reason (exit 3); SYNCBENCH_NCCL_LIB picks the file; NCCL that
 * cannot drive the GPUs asked for is one line too. The parts that need NCCL itself skip where it
 * cannot be loaded. */
#include "cmocka_all.h"

#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "gpu/nccl_api.h"

static void one_line(const char *s)
{
    assert_null(strchr(s, '\n'));
    assert_null(strchr(s, '\r'));
    assert_true(strlen(s) > 0);
}

/* sb_nccl_load is once per process: this is the test that calls it. */
static void missing_library_is_exit_3_with_one_line(void **state)
{
    (void)state;
    setenv("SYNCBENCH_NCCL_LIB", "/nonexistent/libnccl.so.2", 1);
    unsetenv("NCCL_LAUNCH_MODE");
    sb_error_clear();
    assert_int_equal(sb_nccl_load(), SB_EXIT_NODEV);
    assert_string_equal(getenv("NCCL_LAUNCH_MODE"), "GROUP"); /* set before the library loads */
    const char *msg = sb_error_message();
    one_line(msg);
    assert_non_null(strstr(msg, "cannot load NCCL (/nonexistent/libnccl.so.2: "));
    assert_non_null(strstr(msg, "No such file or directory"));
    assert_non_null(strstr(msg, "SYNCBENCH_NCCL_LIB"));
    /* asked again: the same answer, no second attempt (the message is valid until the next
     * sb_fail or sb_error_clear: kept) */
    char first[2048];
    snprintf(first, sizeof first, "%s", msg);
    sb_error_clear();
    assert_int_equal(sb_nccl_load(), SB_EXIT_NODEV);
    assert_string_equal(sb_error_message(), first);
    unsetenv("SYNCBENCH_NCCL_LIB");
}

/* GROUP where the user set no launch mode (the ranks' threads of one process: PARALLEL made a
 * step that reads its result back 27 times slower on two H100s), the user's own where set. */
static void nccl_starts_in_group_launch_mode_unless_told(void **state)
{
    (void)state;
    unsetenv("NCCL_LAUNCH_MODE");
    sb_nccl_defaults();
    assert_string_equal(getenv("NCCL_LAUNCH_MODE"), "GROUP");
    setenv("NCCL_LAUNCH_MODE", "PARALLEL", 1);
    sb_nccl_defaults();
    assert_string_equal(getenv("NCCL_LAUNCH_MODE"), "PARALLEL");
    unsetenv("NCCL_LAUNCH_MODE");
}

static void the_first_name_gives_the_reason(void **state)
{
    (void)state;
    const char *names[] = {"/nonexistent/first.so", "/nonexistent/second.so"};
    char why[512] = "";
    assert_int_equal(sb_nccl_open(names, 2, why, sizeof why), -1);
    one_line(why);
    assert_non_null(strstr(why, "/nonexistent/first.so"));
    assert_null(strstr(why, "second"));
}

static void a_library_that_is_not_nccl(void **state)
{
    (void)state;
    const char *names[] = {"libm.so.6"};
    char why[512] = "";
    assert_int_equal(sb_nccl_open(names, 1, why, sizeof why), -1);
    one_line(why);
    assert_non_null(strstr(why, "ncclGetVersion"));
}

static int load_real(void)
{
    const char *names[] = {"libnccl.so.2", "libnccl.so"};
    char why[512];
    return sb_nccl_open(names, 2, why, sizeof why);
}

static void the_real_library_and_its_version(void **state)
{
    (void)state;
    char v[32];
    if (load_real() != 0)
        skip(); /* no NCCL on this machine */
    sb_nccl_version(v, sizeof v);
    int major = 0, minor = 0, patch = 0;
    assert_int_equal(sscanf(v, "%d.%d.%d", &major, &minor, &patch), 3);
    assert_int_equal(major, 2);
    assert_non_null(sb_nccl.all_reduce);
    assert_non_null(sb_nccl.comm_abort);
}

/* More GPUs than any machine has: NCCL cannot set them up, on a machine with GPUs or without. */
static void nccl_that_cannot_drive_the_gpus_is_exit_3_with_one_line(void **state)
{
    (void)state;
    if (load_real() != 0)
        skip();
    sb_nccl_comm comms[64];
    sb_error_clear();
    assert_int_equal(sb_nccl_init_all(comms, 64), SB_EXIT_NODEV);
    one_line(sb_error_message());
    assert_non_null(strstr(sb_error_message(), "NCCL cannot drive GPUs 0..63 (ncclCommInitAll: "));
}

static void a_failed_call_names_itself(void **state)
{
    (void)state;
    if (load_real() != 0)
        skip();
    sb_error_clear();
    sb_error_set_context("collective/every-step gpus=all");
    assert_int_equal(sb_nccl_fail("ncclAllReduce(...)", 4, "src/scenarios/collective.c", 12),
                     SB_EXIT_FAIL);
    const char *msg = sb_error_message();
    one_line(msg);
    assert_non_null(strstr(msg, "ncclAllReduce(...) failed: invalid argument"));
    assert_non_null(strstr(msg, " in collective/every-step gpus=all [collective.c:12]"));
    sb_error_set_context(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(missing_library_is_exit_3_with_one_line),
        cmocka_unit_test(nccl_starts_in_group_launch_mode_unless_told),
        cmocka_unit_test(the_first_name_gives_the_reason),
        cmocka_unit_test(a_library_that_is_not_nccl),
        cmocka_unit_test(the_real_library_and_its_version),
        cmocka_unit_test(nccl_that_cannot_drive_the_gpus_is_exit_3_with_one_line),
        cmocka_unit_test(a_failed_call_names_itself),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
