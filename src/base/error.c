#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

static int g_code;
/* The message: in g_short, or on the heap (g_long) when it is longer; never cut, so that a list
 * of names in it ("one of: ...") is whole. */
static char g_short[1024];
static char *g_long;
static const char *g_msg = g_short;
static char g_ctx[256];

/* Messages quote what users typed and what files hold: every piece that a terminal would obey
 * (a newline, an escape sequence, a C1 control, bytes that are not UTF-8) is shown escaped
 * (base/utf8.h's sb_escape_piece), so that every message is one line and nothing reaches the
 * terminal raw. A piece is never cut: what does not fit is left out whole. */
size_t sb_escape(const char *in, char *out, size_t n)
{
    size_t j = 0;
    const char *p = in;
    char piece[SB_ESC_PIECE];
    int esc;
    while (n && *p) {
        int used = sb_escape_piece(p, piece, &esc);
        size_t len = strlen(piece);
        if (j + len + 1 > n)
            break;
        memcpy(out + j, piece, len);
        j += len;
        p += used;
    }
    if (n)
        out[j] = '\0';
    return (size_t)(p - in);
}

void sb_fputs_escaped(FILE *f, const char *s)
{
    sb_fputs_escaped_sub(f, s, NULL, 0);
}

void sb_fputs_escaped_sub(FILE *f, const char *s, sb_escape_sub sub, int mode)
{
    char piece[SB_ESC_PIECE];
    int esc, used;
    while (s && *s) {
        const char *own = sub ? sub(s, mode, &used) : NULL;
        if (own) {
            fputs(own, f);
            s += used;
            continue;
        }
        s += sb_escape_piece(s, piece, &esc);
        fputs(piece, f);
    }
}

/* The escaped form of raw in g_short, or where it does not fit, on the heap (a piece is at
 * most SB_ESC_PIECE - 1 bytes a byte); out of memory, the part that fits. */
static void keep_message(const char *raw)
{
    size_t need = strlen(raw) * (SB_ESC_PIECE - 1) + 1;
    free(g_long);
    g_long = NULL;
    g_msg = g_short;
    if (need > sizeof g_short && (g_long = malloc(need)) != NULL) {
        sb_escape(raw, g_long, need);
        g_msg = g_long;
    } else {
        sb_escape(raw, g_short, sizeof g_short);
    }
}

int sb_fail(int code, const char *fmt, ...)
{
    if (g_code != 0)
        return code;
    char raw[sizeof g_short];
    va_list ap;
    va_start(ap, fmt);
    int len = vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    char *heap = len >= (int)sizeof raw ? malloc((size_t)len + 1) : NULL;
    if (heap) {
        va_start(ap, fmt);
        vsnprintf(heap, (size_t)len + 1, fmt, ap);
        va_end(ap);
    }
    keep_message(heap ? heap : raw);
    free(heap);
    g_code = code;
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
    free(g_long);
    g_long = NULL;
    g_short[0] = '\0';
    g_msg = g_short;
}

void sb_error_set_context(const char *ctx)
{
    snprintf(g_ctx, sizeof g_ctx, "%s", ctx ? ctx : "");
}

const char *sb_error_context(void)
{
    return g_ctx;
}

const char *sb_audit_esc(char *buf, size_t n, const char *s)
{
    sb_escape(s ? s : "", buf, n);
    return buf;
}
