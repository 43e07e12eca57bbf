/* The one escaper (base/utf8.h's sb_escape_piece, base/error.h's sb_escape): what reaches a
 * terminal from outside text, piece by piece, and never a piece cut in half. */
#include "cmocka_all.h"

#include <string.h>

#include "base/error.h"
#include "base/utf8.h"

static void expect(const char *in, const char *want)
{
    char out[256];
    sb_escape(in, out, sizeof out);
    if (strcmp(out, want))
        fail_msg("got '%s', want '%s'", out, want);
}

static void controls(void **state)
{
    (void)state;
    expect("a\nb\tc\rd", "a\\nb\\tc\\rd");
    expect("\x1b[31mred\x7f", "\\x1b[31mred\\x7f");
    expect("\x01\x1f", "\\x01\\x1f");
}

static void c1_controls(void **state)
{
    (void)state;
    expect("a\xc2\x9b"
           "31m",
           "a\\xc2\\x9b31m"); /* CSI */
    expect("\xc2\x9d"
           "0;x\xc2\x9c",
           "\\xc2\\x9d0;x\\xc2\\x9c"); /* OSC ... ST */
    expect("\xc2\x80\xc2\x9f", "\\xc2\\x80\\xc2\\x9f");
    expect("\xc2\xa0", "\xc2\xa0"); /* U+00A0, the first character after them, stays */
}

static void invalid_utf8(void **state)
{
    (void)state;
    expect("\xff\xfe", "\\xff\\xfe");
    expect("\xc0\x80", "\\xc0\\x80");          /* overlong NUL */
    expect("\xe0\x80\xaf", "\\xe0\\x80\\xaf"); /* overlong '/' */
    expect("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
    expect("x\x80y", "x\\x80y");               /* a lone continuation byte */
    expect("\xe2\x82", "\\xe2\\x82");          /* cut by the end */
}

static void valid_text_kept(void **state)
{
    (void)state;
    expect("5 \xc2\xb5s \xe2\x86\x92 \xce\xbb \xf0\x9f\x9a\x80",
           "5 \xc2\xb5s \xe2\x86\x92 \xce\xbb \xf0\x9f\x9a\x80");
    int esc;
    char piece[SB_ESC_PIECE];
    assert_int_equal(sb_escape_piece("\xce\xbbx", piece, &esc), 2);
    assert_false(esc);
    assert_int_equal(sb_escape_piece("\xc2\x9bx", piece, &esc), 2);
    assert_true(esc);
    assert_string_equal(piece, "\\xc2\\x9b");
}

static void never_cut(void **state)
{
    (void)state;
    char out[8];
    assert_int_equal(sb_escape("ab\x1b", out, 5), 2); /* "\x1b" needs 4 bytes: left out */
    assert_string_equal(out, "ab");
    assert_int_equal(sb_escape("a\xce\xbb", out, 3), 1); /* the 2-byte λ and a NUL: 3 > 2 */
    assert_string_equal(out, "a");
    assert_int_equal(sb_escape("abc", out, 4), 3);
    assert_string_equal(out, "abc");
}

static void messages_are_escaped(void **state)
{
    (void)state;
    sb_error_clear();
    sb_fail(SB_EXIT_USAGE, "unknown scenario '%s'",
            "a\xc2\x9b"
            "31m\n");
    assert_string_equal(sb_error_message(), "unknown scenario 'a\\xc2\\x9b31m\\n'");
    sb_error_clear();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(controls),     cmocka_unit_test(c1_controls),
        cmocka_unit_test(invalid_utf8), cmocka_unit_test(valid_text_kept),
        cmocka_unit_test(never_cut),    cmocka_unit_test(messages_are_escaped),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
