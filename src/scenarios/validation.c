#include "scenarios/validation.h"

#include <stdarg.h>
#include <stdio.h>

#include "base/error.h"

int sb_invalid(const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return sb_fail(SB_EXIT_FAIL, "validation failed in %s: %s", sb_error_context(), text);
}

void sb_mismatch_note(sb_mismatch *m, const char *fmt, ...)
{
    if (m->count++)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->first, sizeof m->first, fmt, ap);
    va_end(ap);
}

int sb_mismatch_report(sb_mismatch *m)
{
    unsigned long long count = m->count;
    m->count = 0;
    return count ? sb_invalid("%llu %s", count, m->first) : 0;
}
