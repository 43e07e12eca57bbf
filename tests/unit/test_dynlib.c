/* base/dynlib.c on libm (always there): the first name that loads, the first name's reason when
 * none does, optional symbols, another name for a symbol, and the first required one missing
 * reported on one line. */
#include "cmocka_all.h"

#include <dlfcn.h>
#include <string.h>

#include "base/dynlib.h"

typedef double (*math_fn)(double);

static void the_first_name_that_loads(void **state)
{
    (void)state;
    const char *names[] = {"/nonexistent/libfirst.so", "libm.so.6"};
    const char *opened = NULL;
    char why[512] = "";
    void *lib = sb_dynlib_open(names, 2, RTLD_NOW | RTLD_LOCAL, &opened, why, sizeof why);
    assert_non_null(lib);
    assert_string_equal(opened, "libm.so.6");
    dlclose(lib);
}

static void none_loads_gives_the_first_reason(void **state)
{
    (void)state;
    const char *names[] = {"/nonexistent/libfirst.so", "/nonexistent/libsecond.so"};
    char why[512] = "";
    assert_null(sb_dynlib_open(names, 2, RTLD_NOW | RTLD_LOCAL, NULL, why, sizeof why));
    assert_null(strpbrk(why, "\r\n")); /* one line */
    assert_non_null(strstr(why, "/nonexistent/libfirst.so"));
    assert_null(strstr(why, "libsecond"));
}

static void optional_and_other_names(void **state)
{
    (void)state;
    const char *names[] = {"libm.so.6"};
    math_fn cosine = NULL, sine = NULL, none = NULL;
    const sb_dynsym syms[] = {
        {"cos", (void **)&cosine, 0, NULL},
        {"sb_no_such_function", (void **)&none, 1, NULL},
        {"sb_no_such_sine", (void **)&sine, 0, "sin"}, /* found by its other name */
    };
    char why[512] = "";
    void *lib = sb_dynlib_load(names, 1, syms, 3, NULL, why, sizeof why);
    assert_non_null(lib);
    assert_non_null(cosine);
    assert_non_null(sine);
    assert_null(none);
    assert_true(cosine(0) == 1 && sine(0) == 0);
    dlclose(lib);
}

static void the_first_missing_symbol_is_named(void **state)
{
    (void)state;
    const char *names[] = {"libm.so.6"};
    math_fn cosine = NULL, a = NULL, b = NULL;
    const sb_dynsym syms[] = {
        {"cos", (void **)&cosine, 0, NULL},
        {"sb_missing_a", (void **)&a, 0, NULL},
        {"sb_missing_b", (void **)&b, 0, NULL},
    };
    void *lib = dlopen(names[0], RTLD_NOW | RTLD_LOCAL);
    assert_non_null(lib);
    char why[512] = "";
    assert_ptr_equal(sb_dynlib_resolve(lib, syms, 3, why, sizeof why), &syms[1]);
    assert_null(strpbrk(why, "\r\n")); /* one line */
    assert_non_null(strstr(why, "sb_missing_a"));
    assert_null(strstr(why, "sb_missing_b"));
    assert_ptr_equal(sb_dynlib_resolve(lib, syms, 3, NULL, 0), &syms[1]); /* no reason asked */
    dlclose(lib);
    /* loading does the same, and closes the library again */
    why[0] = 0;
    assert_null(sb_dynlib_load(names, 1, syms, 3, NULL, why, sizeof why));
    assert_non_null(strstr(why, "sb_missing_a"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_first_name_that_loads),
        cmocka_unit_test(none_loads_gives_the_first_reason),
        cmocka_unit_test(optional_and_other_names),
        cmocka_unit_test(the_first_missing_symbol_is_named),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
