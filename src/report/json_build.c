#include "report/json_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/error.h"
#include "base/utf8.h"

json_t *sb_json_num(double v)
{
    return json_real(isfinite(v) ? v : 0);
}

json_t *sb_json_known(double v)
{
    return isnan(v) ? json_null() : sb_json_num(v);
}

json_t *sb_json_str(const char *s)
{
    json_t *j = json_string(s ? s : "");
    if (j || !s)
        return j;
    char *c = strdup(s);
    if (!c)
        return NULL;
    sb_utf8_sanitize(c);
    j = json_string(c);
    free(c);
    return j;
}

void sb_json_set(int *oom, json_t *o, const char *key, json_t *v)
{
    if (!o || !v || json_object_set_new(o, key, v) < 0) {
        if (!o)
            json_decref(v);
        *oom = 1;
    }
}

void sb_json_append(int *oom, json_t *a, json_t *v)
{
    if (!a || !v || json_array_append_new(a, v) < 0) {
        if (!a)
            json_decref(v);
        *oom = 1;
    }
}

int sb_json_write(FILE *f, json_t *root, int oom, const char *what)
{
    if (oom || !root) {
        json_decref(root);
        return sb_fail(SB_EXIT_FAIL, "out of memory writing the %s", what);
    }
    int rc = json_dumpf(root, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10));
    json_decref(root);
    fputc('\n', f);
    return rc < 0 || ferror(f) ? sb_fail(SB_EXIT_FAIL, "%s: write error", what) : 0;
}
