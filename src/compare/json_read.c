/* A run's file for compare, told by its content: syncbench's own JSON (`syncbench --json`,
 * sinks/json.c: an object with a "syncbench" object and a "rows" array), read with jansson into
 * the rows the CSV reader fills, or else a CSV (compare/csv_read.c). */
#include "compare/json_read.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/error.h"
#include "compare/csv_read.h"
#include "compare/match.h"

#define MAX_VALUE 1e15 /* csv_read.c's SB_CMP_MAX_VALUE: no figure of a run comes near it */

/* Whether the regular file at path begins, after blanks, with '{': a JSON object, which no
 * syncbench CSV does (its header begins with a column's name). A pipe is not looked at (what
 * was read of it would be gone): it is read as a CSV. */
static int looks_like_json(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
        return 0;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    int c;
    while ((c = fgetc(f)) == ' ' || c == '\t' || c == '\r' || c == '\n')
        ;
    fclose(f);
    return c == '{';
}

/* A row's text field, interned: a string ("" where the CSV's column may be absent, optional),
 * else NULL with the error recorded. */
static const char *text(const char *path, size_t i, json_t *o, const char *key, int optional,
                        sb_strpool *pool)
{
    json_t *v = json_object_get(o, key);
    if (!v && optional)
        return sb_strpool_intern(pool, "", 0);
    if (!json_is_string(v)) {
        sb_fail(SB_EXIT_USAGE, "%s: row %zu: %s is not a string", path, i, key);
        return NULL;
    }
    const char *s = sb_strpool_intern(pool, json_string_value(v), json_string_length(v));
    if (!s)
        sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    return s;
}

/* A statistic: a finite number below 1e15 in magnitude, not negative where `positive`. */
static int figure(const char *path, size_t i, json_t *o, const char *key, int positive, double *out)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_number(v))
        return sb_fail(SB_EXIT_USAGE, "%s: row %zu: %s is not a number", path, i, key);
    *out = json_number_value(v);
    if (!isfinite(*out) || fabs(*out) >= MAX_VALUE || (positive && *out < 0))
        return sb_fail(SB_EXIT_USAGE, "%s: row %zu: %s %g is out of range", path, i, key, *out);
    return 0;
}

/* reps and iters: an integer from 1 to INT_MAX when there; 0 when absent. */
static int count(const char *path, size_t i, json_t *o, const char *key, int *out)
{
    json_t *v = json_object_get(o, key);
    *out = 0;
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < 1 || json_integer_value(v) > INT_MAX)
        return sb_fail(SB_EXIT_USAGE, "%s: row %zu: %s is not an integer from 1", path, i, key);
    *out = (int)json_integer_value(v);
    return 0;
}

/* flags: the JSON's array joined with ';' as the CSV writes it. */
static const char *flags(const char *path, size_t i, json_t *o, sb_strpool *pool)
{
    char buf[256] = "";
    json_t *a = json_object_get(o, "flags"), *v;
    size_t k;
    json_array_foreach(a, k, v)
    {
        if (!json_is_string(v)) {
            sb_fail(SB_EXIT_USAGE, "%s: row %zu: flags holds a non-string", path, i);
            return NULL;
        }
        size_t used = strlen(buf);
        snprintf(buf + used, sizeof buf - used, "%s%s", used ? ";" : "", json_string_value(v));
    }
    return sb_strpool_intern(pool, buf, strlen(buf));
}

/* rows[i] into row: the fields the CSV reader fills, under the same rules. */
static int one_row(const char *path, size_t i, json_t *o, sb_strpool *pool, const char *run_id,
                   sb_cmp_row *row)
{
    memset(row, 0, sizeof *row);
    row->line = (long)i; /* i counts from 1 */
    if (!json_is_object(o))
        return sb_fail(SB_EXIT_USAGE, "%s: row %zu is not an object", path, i);
    if (!(row->scenario = text(path, i, o, "scenario", 0, pool)) ||
        !(row->variant = text(path, i, o, "variant", 0, pool)) ||
        !(row->params = text(path, i, o, "params", 0, pool)) ||
        !(row->metric = text(path, i, o, "metric", 0, pool)) ||
        !(row->unit = text(path, i, o, "unit", 1, pool)) || !(row->flags = flags(path, i, o, pool)))
        return sb_error_code();
    row->run_id = run_id;
    if (!row->scenario[0] || !row->variant[0] || !row->metric[0])
        return sb_fail(SB_EXIT_USAGE, "%s: row %zu: empty scenario, variant or metric", path, i);
    const char *better = json_string_value(json_object_get(o, "better"));
    if (better && !strcmp(better, "lower"))
        row->better = SB_LOWER;
    else if (better && !strcmp(better, "higher"))
        row->better = SB_HIGHER;
    else
        return sb_fail(SB_EXIT_USAGE, "%s: row %zu: better must be 'lower' or 'higher'", path, i);
    if (figure(path, i, o, "median", 0, &row->median) ||
        figure(path, i, o, "mean", 0, &row->mean) ||
        figure(path, i, o, "stddev", 1, &row->stddev) || figure(path, i, o, "cv", 1, &row->cv) ||
        count(path, i, o, "reps", &row->reps) || count(path, i, o, "iters", &row->iters))
        return sb_error_code();
    return 0;
}

/* Every row of the document into out, each key once. */
static int rows(const char *path, json_t *root, sb_strpool *pool, sb_cmp_table *out)
{
    json_t *all = json_object_get(root, "rows");
    json_t *rid = json_object_get(root, "run_id");
    json_t *gpu =
        json_object_get(json_object_get(json_object_get(root, "environment"), "gpu"), "name");
    const char *g = json_string_value(gpu), *r = json_string_value(rid);
    out->gpu = sb_strpool_intern(pool, g ? g : "", g ? strlen(g) : 0);
    out->run_id = sb_strpool_intern(pool, r ? r : "", r ? strlen(r) : 0);
    size_t n = json_array_size(all);
    if (!out->gpu || !out->run_id || (n && !(out->rows = calloc(n, sizeof *out->rows))))
        return sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
    if (n > SB_CSV_MAX_ROWS)
        return sb_fail(SB_EXIT_USAGE, "%s: more than %d rows, the most compare reads", path,
                       SB_CSV_MAX_ROWS);
    out->cap = n;
    for (size_t i = 0; i < n; i++) {
        int rc = one_row(path, i + 1, json_array_get(all, i), pool, out->run_id, &out->rows[i]);
        if (rc)
            return rc;
        size_t dup;
        int added = sb_row_index_add(&out->index, out->rows, i, &dup);
        if (added < 0)
            return sb_fail(SB_EXIT_FAIL, "out of memory reading %s", path);
        if (added > 0)
            return sb_fail(SB_EXIT_USAGE,
                           "%s: row %zu: duplicate row for %s %s %s %s (first: row %ld)", path,
                           i + 1, out->rows[i].scenario, out->rows[i].variant, out->rows[i].params,
                           out->rows[i].metric, out->rows[dup].line);
        out->n++;
    }
    return n ? 0 : sb_fail(SB_EXIT_USAGE, "%s: no rows", path);
}

int sb_json_read(const char *path, sb_strpool *pool, sb_cmp_table *out)
{
    memset(out, 0, sizeof *out);
    struct stat st;
    if (stat(path, &st) == 0 && st.st_size > SB_CSV_MAX_FILE)
        return sb_fail(SB_EXIT_USAGE,
                       "%s: larger than %lld MiB, the most compare reads (it holds every row in "
                       "memory)",
                       path, SB_CSV_MAX_FILE >> 20);
    json_error_t e;
    json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &e);
    if (!root)
        return sb_fail(SB_EXIT_USAGE, "%s:%d: not valid JSON: %s", path, e.line, e.text);
    int rc;
    if (!json_is_object(json_object_get(root, "syncbench")) ||
        !json_is_array(json_object_get(root, "rows")))
        rc = sb_fail(SB_EXIT_USAGE,
                     "%s: a JSON object without syncbench's \"syncbench\" and \"rows\" (not "
                     "syncbench --json's output?)",
                     path);
    else
        rc = rows(path, root, pool, out);
    json_decref(root);
    if (rc)
        sb_cmp_table_free(out);
    return rc;
}

int sb_run_read(const char *path, sb_strpool *pool, sb_cmp_table *out)
{
    if (looks_like_json(path))
        return sb_json_read(path, pool, out);
    return sb_csv_read(path, pool, out);
}
