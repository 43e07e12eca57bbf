#include "audit/json_text.h"

#include <stdio.h>
#include <string.h>

static int cont(unsigned char c)
{
    return (c & 0xc0) == 0x80;
}

int sb_audit_utf8_len(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return cont(s[1]) ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) { /* no overlong forms (E0 80..9F), no surrogates (ED A0..BF) */
        unsigned lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return s[1] >= lo && s[1] <= hi && cont(s[2]) ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) { /* no overlong forms (F0 80..8F), nothing past U+10FFFF */
        unsigned lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return s[1] >= lo && s[1] <= hi && cont(s[2]) && cont(s[3]) ? 4 : 0;
    }
    return 0;
}

char *sb_audit_json_escape(char *dst, size_t n, const char *s)
{
    size_t j = 0;
    while (s && *s) {
        unsigned char c = (unsigned char)*s;
        char esc[8];
        const char *out = s;
        size_t len;
        if (c == '"' || c == '\\') {
            esc[0] = '\\', esc[1] = (char)c;
            out = esc, len = 2;
        } else if (c < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", c);
            out = esc, len = 6;
        } else {
            int k = sb_audit_utf8_len(s);
            if (k == 0) {
                esc[0] = '?';
                out = esc, len = 1, k = 1;
            } else {
                len = (size_t)k;
            }
            if (j + len + 1 > n)
                break;
            memcpy(dst + j, out, len);
            j += len;
            s += k;
            continue;
        }
        if (j + len + 1 > n)
            break;
        memcpy(dst + j, out, len);
        j += len;
        s++;
    }
    if (n)
        dst[j] = 0;
    return dst;
}
