/* The window of GPU activity's text (record/gpu_window.h): NAME[@DOMAIN][:FIRST[-LAST]] read
 * strictly, its canonical text read back as the same window (what the launcher hands the library
 * and the "proc" record keeps), and which ranges it matches. */
#include "cmocka_all.h"

#include <string.h>

#include "record/gpu_window.h"

static sb_gpu_window parsed(const char *spec)
{
    sb_gpu_window w;
    char why[200];
    if (sb_gpu_window_parse(spec, &w, why, sizeof why) != 0)
        fail_msg("'%s' refused: %s", spec, why);
    return w;
}

static void expect(const char *spec, const char *name, const char *domain, int any, long first,
                   long last, const char *canonical)
{
    sb_gpu_window w = parsed(spec);
    assert_string_equal(w.name, name);
    assert_string_equal(w.domain, domain);
    assert_int_equal(w.any_domain, any);
    assert_int_equal(w.first, first);
    assert_int_equal(w.last, last);
    char text[2000];
    sb_gpu_window_format(&w, text, sizeof text);
    assert_string_equal(text, canonical);
    sb_gpu_window again = parsed(text); /* the canonical text is the same window */
    assert_string_equal(again.name, w.name);
    assert_string_equal(again.domain, w.domain);
    assert_true(again.any_domain == w.any_domain && again.first == w.first &&
                again.last == w.last);
}

static void forms(void **state)
{
    (void)state;
    expect("step", "step", "", 1, 1, 1, "step:1-1"); /* the first instance, any domain */
    expect("step:3", "step", "", 1, 3, 3, "step:3-3");
    expect("step:3-7", "step", "", 1, 3, 7, "step:3-7");
    expect("step@NCCL:2-4", "step", "NCCL", 0, 2, 4, "step@NCCL:2-4");
    expect("step@:5", "step", "", 0, 5, 5, "step@:5-5"); /* the default domain only */
    expect("step@*:5", "step", "", 1, 5, 5, "step:5-5");
    /* a name holding ':' or '@' */
    expect("a:b", "a:b", "", 1, 1, 1, "a:b:1-1");
    expect("epoch:1:2-3", "epoch:1", "", 1, 2, 3, "epoch:1:2-3");
    expect("a@b@c:1", "a@b", "c", 0, 1, 1, "a@b@c:1-1");
    expect("a@b@*", "a@b", "", 1, 1, 1, "a@b@*:1-1");
    expect("a@b@", "a@b", "", 0, 1, 1, "a@b@:1-1");
    expect("step:", "step:", "", 1, 1, 1, "step::1-1");
    expect("λ-step:1000000000", "λ-step", "", 1, 1000000000, 1000000000,
           "λ-step:1000000000-1000000000");
}

static void refused(const char *spec, const char *why_part)
{
    sb_gpu_window w;
    char why[200] = "";
    if (sb_gpu_window_parse(spec, &w, why, sizeof why) == 0)
        fail_msg("'%s' accepted", spec);
    if (!strstr(why, why_part))
        fail_msg("'%s': '%s' does not say '%s'", spec, why, why_part);
}

static void faults(void **state)
{
    (void)state;
    refused("step:7-3", "the first instance (7) is after the last (3)");
    refused("step:0", "from 1 to");
    refused("step:0-3", "from 1 to");
    refused("step:3-", "no last instance");
    refused("step:-3", "no first instance");
    refused("step:3-7-9", "not a whole number");
    refused("step:1000000001", "from 1 to");
    refused("step:99999999999999999999999", "from 1 to");
    refused(":3", "no range name");
    refused("@dom:3", "no range name");
    refused("", "no range name");
    char long_name[600];
    memset(long_name, 'x', 512);
    long_name[512] = 0;
    refused(long_name, "longer than 511 bytes");
    memset(long_name, 'x', 520);
    long_name[520] = 0;
    memcpy(long_name, "a@", 2); /* a domain of 518 bytes */
    refused(long_name, "the domain is longer than 511 bytes");
    long first, last;
    char why[200];
    assert_int_equal(sb_gpu_window_bounds("4", &first, &last, why, sizeof why), 0);
    assert_true(first == 4 && last == 4);
    assert_int_equal(sb_gpu_window_bounds("x", &first, &last, why, sizeof why), -1);
}

static void matching(void **state)
{
    (void)state;
    sb_gpu_window any = parsed("step"), dflt = parsed("step@"), nccl = parsed("step@NCCL");
    assert_true(sb_gpu_window_matches(&any, "step", NULL));
    assert_true(sb_gpu_window_matches(&any, "step", "NCCL"));
    assert_false(sb_gpu_window_matches(&any, "steps", NULL));
    assert_false(sb_gpu_window_matches(&any, NULL, NULL));
    assert_true(sb_gpu_window_matches(&dflt, "step", NULL));
    assert_true(sb_gpu_window_matches(&dflt, "step", ""));
    assert_false(sb_gpu_window_matches(&dflt, "step", "NCCL"));
    assert_true(sb_gpu_window_matches(&nccl, "step", "NCCL"));
    assert_false(sb_gpu_window_matches(&nccl, "step", NULL));
    assert_false(sb_gpu_window_matches(&nccl, "step", "nccl"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(forms),
        cmocka_unit_test(faults),
        cmocka_unit_test(matching),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
