/* base/envvars.c: every row whole (a SYNCBENCH_ name, once; a number's default within its
 * range; where it is documented), the launcher's hand-off names (record/records.h) the table's,
 * and the getters: unset, empty, a value, a number out of range or not a number. */
#include "cmocka_all.h"

#include <stdlib.h>
#include <string.h>

#include "base/envvars.h"
#include "record/records.h"

static void every_row_is_whole(void **state)
{
    (void)state;
    for (int i = 0; i < SB_ENV_COUNT; i++) {
        const sb_env_var *v = sb_env_var_of((sb_env_id)i);
        assert_non_null(v->name);
        assert_int_equal(strncmp(v->name, "SYNCBENCH_", 10), 0);
        assert_non_null(v->values);
        assert_non_null(v->doc);
        if (v->number)
            assert_true(v->lo <= v->dflt && v->dflt <= v->hi);
        for (int j = 0; j < i; j++)
            assert_string_not_equal(v->name, sb_env_name((sb_env_id)j));
    }
    assert_null(sb_env_var_of(SB_ENV_COUNT));
    assert_null(sb_env_name((sb_env_id)-1));
}

static void the_launchers_names_are_the_tables(void **state)
{
    (void)state;
    assert_string_equal(SB_AUDIT_ENV_DIR, sb_env_name(SB_ENV_AUDIT_DIR));
    assert_string_equal(SB_AUDIT_ENV_MODE, sb_env_name(SB_ENV_AUDIT_MODE));
    assert_string_equal(SB_AUDIT_ENV_DEPTH, sb_env_name(SB_ENV_AUDIT_DEPTH));
    assert_string_equal(SB_AUDIT_ENV_GPU, sb_env_name(SB_ENV_AUDIT_GPU));
    assert_string_equal(SB_AUDIT_ENV_PYTHON, sb_env_name(SB_ENV_AUDIT_PYTHON));
    assert_string_equal(SB_AUDIT_ENV_SOCK, sb_env_name(SB_ENV_AUDIT_SOCK));
    for (int i = 0; i < SB_ENV_COUNT; i++)
        if (sb_env_var_of((sb_env_id)i)->who == SB_ENV_FOR_HANDOFF)
            assert_int_equal(strncmp(sb_env_name((sb_env_id)i), "SYNCBENCH_AUDIT_", 16), 0);
}

static void text_getters(void **state)
{
    (void)state;
    unsetenv("SYNCBENCH_NCCL_LIB");
    assert_null(sb_env_raw(SB_ENV_NCCL_LIB));
    assert_null(sb_env_str(SB_ENV_NCCL_LIB));
    assert_false(sb_env_is(SB_ENV_NCCL_LIB, ""));
    setenv("SYNCBENCH_NCCL_LIB", "", 1);
    assert_string_equal(sb_env_raw(SB_ENV_NCCL_LIB), "");
    assert_null(sb_env_str(SB_ENV_NCCL_LIB));
    assert_true(sb_env_is(SB_ENV_NCCL_LIB, ""));
    setenv("SYNCBENCH_NCCL_LIB", "/x/libnccl.so.2", 1);
    assert_string_equal(sb_env_str(SB_ENV_NCCL_LIB), "/x/libnccl.so.2");
    assert_true(sb_env_is(SB_ENV_NCCL_LIB, "/x/libnccl.so.2"));
    assert_false(sb_env_is(SB_ENV_NCCL_LIB, "/x/libnccl.so"));
    unsetenv("SYNCBENCH_NCCL_LIB");
}

static long number(const char *value, int *bad)
{
    if (value)
        setenv("SYNCBENCH_ACTIVITY_FLUSH_MS", value, 1);
    else
        unsetenv("SYNCBENCH_ACTIVITY_FLUSH_MS");
    return sb_env_long(SB_ENV_ACTIVITY_FLUSH_MS, bad);
}

static void number_getter(void **state)
{
    (void)state;
    int bad = -1;
    assert_int_equal(number(NULL, &bad), 500);
    assert_int_equal(bad, 0);
    assert_int_equal(number("", &bad), 500);
    assert_int_equal(bad, 0);
    assert_int_equal(number("0", &bad), 0);
    assert_int_equal(bad, 0);
    assert_int_equal(number("60000", &bad), 60000);
    assert_int_equal(bad, 0);
    const char *wrong[] = {"60001", "-1", "5x", "x", " 5", "+5", "99999999999999999999999"};
    for (size_t i = 0; i < sizeof wrong / sizeof *wrong; i++) {
        bad = 0;
        assert_int_equal(number(wrong[i], &bad), 500);
        assert_int_equal(bad, 1);
    }
    assert_int_equal(number("7", NULL), 7);
    unsetenv("SYNCBENCH_ACTIVITY_FLUSH_MS");
    /* a text row is no number */
    bad = -1;
    assert_int_equal(sb_env_long(SB_ENV_AUDIT_DIR, &bad), 0);
    assert_int_equal(bad, 0);
}

static void a_variable_outside_the_table(void **state)
{
    (void)state;
    unsetenv("SB_TEST_RANK");
    assert_int_equal(sb_env_long_named("SB_TEST_RANK", -1), -1);
    setenv("SB_TEST_RANK", "3", 1);
    assert_int_equal(sb_env_long_named("SB_TEST_RANK", -1), 3);
    setenv("SB_TEST_RANK", "3a", 1);
    assert_int_equal(sb_env_long_named("SB_TEST_RANK", -1), -1);
    unsetenv("SB_TEST_RANK");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_is_whole),
        cmocka_unit_test(the_launchers_names_are_the_tables),
        cmocka_unit_test(text_getters),
        cmocka_unit_test(number_getter),
        cmocka_unit_test(a_variable_outside_the_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
