/* A --json report's ranks read back (jansson), for `syncbench audit --merge`: every field checked,
 * each problem one line naming the file and the field. */
#include "analyze/ranks.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "analyze/analyze.h"
#include "base/error.h"
#include "base/regfile.h"

__attribute__((format(printf, 2, 3))) static int bad(const char *path, const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return sb_fail(SB_EXIT_USAGE, "audit: --merge: %s: %s", path, what);
}

/* An optional integer within [lo, hi]: 0 (absent: *v unchanged), or -1 when it is not one. */
static int opt_int(json_t *o, const char *key, long long lo, long long hi, long long *v)
{
    json_t *j = json_object_get(o, key);
    if (!j)
        return 0;
    if (!json_is_integer(j) || json_integer_value(j) < lo || json_integer_value(j) > hi)
        return -1;
    *v = json_integer_value(j);
    return 0;
}

static int opt_str(json_t *o, const char *key, const char **v)
{
    json_t *j = json_object_get(o, key);
    if (!j)
        return 0;
    if (!json_is_string(j))
        return -1;
    *v = json_string_value(j);
    return 0;
}

/* The largest time a report may give, in its own unit (us or ns): about 11.6 days of blocking
 * in ns, far more in us. Sums over every instance and rank then stay far inside int64_t and
 * double, where 2^62 ns made the others' wait negative. */
#define MAX_TIME 1e15

static int is_number(json_t *j, double *v)
{
    if (!json_is_number(j) || !isfinite(json_number_value(j)) || json_number_value(j) < 0 ||
        json_number_value(j) > MAX_TIME)
        return 0;
    *v = json_number_value(j);
    return 1;
}

/* One range of a rank: its name and every instance's blocked time. */
static int read_series(sb_ranks *rk, sb_rank *r, const char *path, size_t i, size_t k, json_t *g,
                       int64_t **buf, size_t *cap)
{
    const char *name = NULL, *domain = "";
    if (!json_is_object(g))
        return bad(path, "ranks.ranks[%zu].ranges[%zu]: not an object", i, k);
    if (opt_str(g, "name", &name) < 0 || !name)
        return bad(path, "ranks.ranks[%zu].ranges[%zu].name: not a string", i, k);
    if (opt_str(g, "domain", &domain) < 0)
        return bad(path, "ranks.ranks[%zu].ranges[%zu].domain: not a string", i, k);
    json_t *a = json_object_get(g, "instance_blocked_ns");
    if (!json_is_array(a))
        return bad(path, "ranks.ranks[%zu].ranges[%zu].instance_blocked_ns: not a list", i, k);
    size_t n = json_array_size(a);
    if (n > *cap) {
        int64_t *p = realloc(*buf, n * sizeof *p);
        if (!p)
            return sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
        *buf = p;
        *cap = n;
    }
    for (size_t x = 0; x < n; x++) {
        json_t *v = json_array_get(a, x);
        if (!json_is_integer(v) || json_integer_value(v) < 0 ||
            (double)json_integer_value(v) > MAX_TIME)
            return bad(path,
                       "ranks.ranks[%zu].ranges[%zu].instance_blocked_ns[%zu]: not a whole "
                       "number of nanoseconds from 0 to 1e15",
                       i, k, x);
        (*buf)[x] = (int64_t)json_integer_value(v);
    }
    if (sb_rank_add_series(rk, r, name, domain, *buf, n) < 0)
        return sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    return 0;
}

static int read_rank(sb_ranks *rk, const char *path, const char *env_host, size_t i, json_t *o)
{
    if (!json_is_object(o))
        return bad(path, "ranks.ranks[%zu]: not an object", i);
    long long rank = -1, local = -1, pid = -1, procs = 1, blocking = 0;
    if (!json_is_integer(json_object_get(o, "rank")) || opt_int(o, "rank", 0, INT_MAX, &rank) < 0)
        return bad(path, "ranks.ranks[%zu].rank: not an integer from 0 to %d", i, INT_MAX);
    if (!json_is_integer(json_object_get(o, "pid")) || opt_int(o, "pid", 0, LLONG_MAX, &pid) < 0)
        return bad(path, "ranks.ranks[%zu].pid: not an integer >= 0", i);
    if (opt_int(o, "local_rank", -1, INT_MAX, &local) < 0)
        return bad(path, "ranks.ranks[%zu].local_rank: not an integer from -1 to %d", i, INT_MAX);
    if (opt_int(o, "processes", 1, INT_MAX, &procs) < 0)
        return bad(path, "ranks.ranks[%zu].processes: not an integer >= 1", i);
    if (opt_int(o, "blocking_calls", 0, LONG_MAX, &blocking) < 0)
        return bad(path, "ranks.ranks[%zu].blocking_calls: not an integer >= 0", i);
    const char *host = env_host;
    if (opt_str(o, "host", &host) < 0)
        return bad(path, "ranks.ranks[%zu].host: not a string", i);
    double blocked, bubble = 0;
    if (!is_number(json_object_get(o, "blocked_us"), &blocked))
        return bad(path, "ranks.ranks[%zu].blocked_us: not a number from 0 to 1e15", i);
    json_t *b = json_object_get(o, "bubble_us"), *c = json_object_get(o, "complete");
    if (b && !json_is_null(b) && !is_number(b, &bubble))
        return bad(path, "ranks.ranks[%zu].bubble_us: neither null nor a number from 0 to 1e15", i);
    if (c && !json_is_boolean(c))
        return bad(path, "ranks.ranks[%zu].complete: not true or false", i);
    json_t *ranges = json_object_get(o, "ranges");
    if (!json_is_array(ranges))
        return bad(path, "ranks.ranks[%zu].ranges: not a list", i);
    sb_rank *r = sb_ranks_add(rk, (int)rank, host, path);
    if (!r)
        return sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    r->local_rank = (int)local;
    r->pid = pid;
    r->processes = (int)procs;
    r->blocking = (long)blocking;
    r->complete = !c || json_is_true(c);
    r->blocked_us = blocked;
    r->has_bubbles = b && !json_is_null(b);
    r->bubble_us = bubble;
    int64_t *buf = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t k = 0; !rc && k < json_array_size(ranges); k++)
        rc = read_series(rk, r, path, i, k, json_array_get(ranges, k), &buf, &cap);
    free(buf);
    const sb_rank_series *twice = rc ? NULL : sb_rank_duplicate_series(r);
    if (twice)
        return bad(path, "ranks.ranks[%zu]: range \"%s\" given twice", i, twice->name);
    return rc;
}

int sb_ranks_read_report(sb_ranks *rk, const char *path, sb_ranks_report *info)
{
    FILE *f; /* a FIFO or a device would never be read to its end */
    int why = sb_open_regular(path, &f);
    if (why == SB_REG_DIR)
        return bad(path, "a folder, not a report");
    if (why)
        return bad(path, "%s", sb_regular_why(why));
    json_error_t err;
    json_t *root = json_loadf(f, JSON_REJECT_DUPLICATES, &err);
    fclose(f);
    if (!root)
        return bad(path, "not JSON (line %d: %s)", err.line, err.text);
    json_t *tool = json_is_object(root) ? json_object_get(root, "tool") : NULL;
    json_t *format = json_object_get(root, "format");
    json_t *ranks = json_object_get(root, "ranks");
    const char *env_host =
        json_string_value(json_object_get(json_object_get(root, "environment"), "host"));
    int rc = 0;
    if (!json_is_string(tool) || strcmp(json_string_value(tool), "syncbench audit"))
        rc = bad(path, "not a syncbench audit report (no \"tool\": \"syncbench audit\")");
    else if (!json_is_integer(format))
        rc = bad(path, "not a syncbench audit report (no \"format\")");
    else if (json_integer_value(format) != 1)
        rc = bad(path, "report format %lld: this syncbench reads format 1",
                 (long long)json_integer_value(format));
    else if (!ranks)
        rc = bad(path, "no \"ranks\" (written by a syncbench without the view across ranks)");
    else if (!json_is_object(ranks) || !json_is_array(json_object_get(ranks, "ranks")))
        rc = bad(path, "\"ranks\" is not an object with a list \"ranks\"");
    const char *stored = rc ? NULL : sb_strpool_intern(&rk->strs, path, strlen(path));
    if (!rc && !stored)
        rc = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    json_t *list = rc ? NULL : json_object_get(ranks, "ranks");
    for (size_t i = 0; !rc && i < json_array_size(list); i++)
        rc = read_rank(rk, stored, env_host ? env_host : "", i, json_array_get(list, i));
    if (!rc && info) {
        const char *cmd = json_string_value(json_object_get(root, "command"));
        info->path = stored;
        info->host =
            sb_strpool_intern(&rk->strs, env_host ? env_host : "", env_host ? strlen(env_host) : 0);
        info->command = sb_strpool_intern(&rk->strs, cmd ? cmd : "", cmd ? strlen(cmd) : 0);
        info->ranks = json_array_size(list);
        if (!info->host || !info->command)
            rc = sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    }
    json_decref(root);
    return rc;
}
