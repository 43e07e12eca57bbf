/* The audit's JSON text: what the injection library writes must parse (jansson refuses a line
 * with one invalid byte, and the analyzer would drop that record: a call inside a range whose
 * name is Latin-1 would vanish from the gate's count). */
#include "cmocka_all.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "record/json_text.h"
#include "base/utf8.h"

static void utf8_lengths(void **state)
{
    (void)state;
    assert_int_equal(sb_utf8_len("a"), 1);
    assert_int_equal(sb_utf8_len("\xc3\xa9"), 2);         /* é */
    assert_int_equal(sb_utf8_len("\xe2\x82\xac"), 3);     /* € */
    assert_int_equal(sb_utf8_len("\xf0\x9f\x98\x80"), 4); /* U+1F600 */
    assert_int_equal(sb_utf8_len("\xf4\x8f\xbf\xbf"), 4); /* U+10FFFF */
    const char *bad[] = {
        "\x80",             /* a continuation byte alone */
        "\xc0\xaf",         /* overlong '/' */
        "\xc3",             /* cut by the end */
        "\xe0\x80\x80",     /* overlong */
        "\xed\xa0\x80",     /* a surrogate */
        "\xf4\x90\x80\x80", /* past U+10FFFF */
        "\xf5\x80\x80\x80", /* no such lead byte */
        "\xff\x80\x80",
        "\xe2\x82", /* cut */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (sb_utf8_len(bad[i]) != 0)
            fail_msg("sequence %zu taken as valid", i);
}

/* Every escaped string parses as JSON and keeps what is valid. */
static void escaped_text_parses(void **state)
{
    (void)state;
    const char *in[] = {
        "plain",
        "quote \" and \\ backslash",
        "tab\tnew\nline\x01",
        "caf\xc3\xa9",
        "\xff\x80\x80 latin-1 \xe9t\xe9",
        "\xed\xa0\x80\xf4\x90\x80\x80\xf7\xbf\xbf\xbf",
    };
    const char *want[] = {
        "plain",       "quote \" and \\ backslash", "tab\tnew\nline\x01",
        "caf\xc3\xa9", "??? latin-1 ?t?",           "???????????", /* each byte of a bad sequence */
    };
    for (size_t i = 0; i < sizeof in / sizeof in[0]; i++) {
        char esc[256], doc[300];
        snprintf(doc, sizeof doc, "[\"%s\"]", sb_audit_json_escape(esc, sizeof esc, in[i]));
        json_error_t err;
        json_t *j = json_loads(doc, 0, &err);
        if (!j)
            fail_msg("string %zu does not parse: %s (%s)", i, err.text, doc);
        assert_string_equal(json_string_value(json_array_get(j, 0)), want[i]);
        json_decref(j);
    }
}

/* A cut falls between characters, never inside one, nor inside an escape. */
static void cut_on_boundaries(void **state)
{
    (void)state;
    char s[64] = "";
    for (int i = 0; i < 20; i++)
        strcat(s, "\xc3\xa9"); /* 20 x é, 2 bytes each */
    for (size_t n = 1; n < 48; n++) {
        char esc[64];
        sb_audit_json_escape(esc, n, s);
        assert_true(strlen(esc) < n);
        assert_int_equal(strlen(esc) % 2, 0);
    }
    char esc[8];
    sb_audit_json_escape(esc, sizeof esc, "ab\"cdef"); /* a"b... : the escape is whole or gone */
    assert_string_equal(esc, "ab\\\"cde");
    sb_audit_json_escape(esc, 4, "a\x01");
    assert_string_equal(esc, "a");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(utf8_lengths),
        cmocka_unit_test(escaped_text_parses),
        cmocka_unit_test(cut_on_boundaries),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
