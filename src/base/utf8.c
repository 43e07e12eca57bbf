#include "base/utf8.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int sb_utf8_len(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    int n;
    unsigned lo = 0x80, hi = 0xBF;
    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xC2 && s[0] <= 0xDF)
        n = 2;
    else if (s[0] >= 0xE0 && s[0] <= 0xEF) {
        n = 3;
        lo = s[0] == 0xE0 ? 0xA0 : 0x80; /* no overlong forms */
        hi = s[0] == 0xED ? 0x9F : 0xBF; /* no surrogates */
    } else if (s[0] >= 0xF0 && s[0] <= 0xF4) {
        n = 4;
        lo = s[0] == 0xF0 ? 0x90 : 0x80; /* no overlong forms */
        hi = s[0] == 0xF4 ? 0x8F : 0xBF; /* nothing past U+10FFFF */
    } else
        return 0;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (int i = 2; i < n; i++) /* a NUL ends the check: a sequence cut by the end */
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

void sb_utf8_sanitize(char *s)
{
    while (*s) {
        int n = sb_utf8_len(s);
        if (n)
            s += n;
        else
            *s++ = '?';
    }
}

void sb_utf8_cut(char *s)
{
    size_t len = strlen(s), i = len;
    while (i > 0 && len - i < 3 && ((unsigned char)s[i - 1] & 0xC0) == 0x80)
        i--; /* continuation bytes */
    if (i == 0)
        return;
    unsigned char lead = (unsigned char)s[i - 1];
    size_t want = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (lead >= 0xC0 && len - (i - 1) < want)
        s[i - 1] = '\0';
}

int sb_escape_piece(const char *str, char *out, int *escaped)
{
    const unsigned char *s = (const unsigned char *)str;
    *escaped = 1;
    if (s[0] == '\n' || s[0] == '\t' || s[0] == '\r') {
        snprintf(out, SB_ESC_PIECE, "\\%c", s[0] == '\n' ? 'n' : s[0] == '\t' ? 't' : 'r');
        return 1;
    }
    if (s[0] < 0x20 || s[0] == 0x7f) {
        snprintf(out, SB_ESC_PIECE, "\\x%02x", s[0]);
        return 1;
    }
    int n = sb_utf8_len(str);
    if (n == 0) { /* not UTF-8: the byte alone */
        snprintf(out, SB_ESC_PIECE, "\\x%02x", s[0]);
        return 1;
    }
    if (n == 2 && s[0] == 0xC2 && s[1] <= 0x9F) { /* a C1 control */
        snprintf(out, SB_ESC_PIECE, "\\xc2\\x%02x", s[1]);
        return 2;
    }
    memcpy(out, str, (size_t)n);
    out[n] = 0;
    *escaped = 0;
    return n;
}

void sb_audit_fmt(char *buf, size_t n, const char *fmt, ...)
{
    if (!n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(buf, n, fmt, ap);
    va_end(ap);
    if (w < 0)
        buf[0] = '\0';
    else if ((size_t)w >= n)
        sb_utf8_cut(buf);
    sb_utf8_sanitize(buf);
}
