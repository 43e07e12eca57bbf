#include "record/json_text.h"

#include "base/utf8.h"

#include <stdio.h>
#include <string.h>

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
            int k = sb_utf8_len(s);
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
