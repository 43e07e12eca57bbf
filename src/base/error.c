#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

static int g_code;
static char g_msg[1024];
static char g_ctx[256];

/* Messages quote what users typed and what files hold: a newline, an escape sequence or
 * another control character there is shown as \n, \x1b, ... so that every message is one line
 * and nothing reaches the terminal raw. */
void sb_escape(const char *in, char *out, size_t n)
{
    size_t j = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && j + 5 < n; p++) {
        if (*p == '\n')
            j += (size_t)snprintf(out + j, n - j, "\\n");
        else if (*p == '\t')
            j += (size_t)snprintf(out + j, n - j, "\\t");
        else if (*p == '\r')
            j += (size_t)snprintf(out + j, n - j, "\\r");
        else if (*p < 0x20 || *p == 0x7f)
            j += (size_t)snprintf(out + j, n - j, "\\x%02x", *p);
        else
            out[j++] = (char)*p;
    }
    out[j] = '\0';
}

int sb_fail(int code, const char *fmt, ...)
{
    if (g_code == 0) {
        char raw[sizeof g_msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(raw, sizeof raw, fmt, ap);
        va_end(ap);
        sb_escape(raw, g_msg, sizeof g_msg);
        g_code = code;
    }
    return code;
}

int sb_error_code(void)
{
    return g_code;
}

const char *sb_error_message(void)
{
    return g_msg;
}

void sb_error_clear(void)
{
    g_code = 0;
    g_msg[0] = '\0';
}

void sb_error_set_context(const char *ctx)
{
    snprintf(g_ctx, sizeof g_ctx, "%s", ctx ? ctx : "");
}

const char *sb_error_context(void)
{
    return g_ctx;
}
