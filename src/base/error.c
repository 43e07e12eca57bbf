#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>

static int g_code;
static char g_msg[1024];
static char g_ctx[256];

int sb_fail(int code, const char *fmt, ...)
{
    if (g_code == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(g_msg, sizeof g_msg, fmt, ap);
        va_end(ap);
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
