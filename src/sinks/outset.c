/* The output files of one command, checked once. */
#include "sinks/outset.h"

#include <string.h>

#include "base/error.h"

static int clash(const sb_outset_rules *r, const sb_out_file *old, const sb_out_file *o)
{
    if (r->wording == SB_CLASH_WRITE_SAME)
        return sb_fail(SB_EXIT_USAGE, "%s--%s %s and --%s %s write the same file", r->prefix,
                       old->opt, old->pattern, o->opt, o->pattern);
    return sb_fail(SB_EXIT_USAGE, "%s--%s %s: same file as --%s %s", r->prefix, o->opt, o->pattern,
                   old->opt, old->pattern);
}

int sb_outset_add(sb_out_file *o, const char *opt, const char *path, const sb_outset_rules *r,
                  sb_out_file *const *earlier, size_t n)
{
    memset(o, 0, sizeof *o);
    int rc = sb_out_prepare(o, opt, path);
    if (!rc)
        rc = sb_out_check_inputs(o, r->inputs);
    for (size_t i = 0; !rc && i < n; i++)
        if (sb_out_same(earlier[i], o))
            rc = clash(r, earlier[i], o);
    if (rc)
        memset(o, 0, sizeof *o);
    return rc;
}
