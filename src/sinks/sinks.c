/* The sink set: every output of a run behind one interface. */
#include <string.h>

#include "base/error.h"
#include "sinks/outset.h"
#include "sinks/sink.h"

int sb_sinks_add(sb_sinks *all, const sb_sink_ops *ops, const char *opt, const char *path,
                 const char *const *inputs)
{
    if (all->n == SB_MAX_SINKS)
        return sb_fail(SB_EXIT_FAIL, "internal: more than %d outputs", SB_MAX_SINKS);
    sb_out_file *earlier[SB_MAX_SINKS];
    for (int i = 0; i < all->n; i++)
        earlier[i] = &all->s[i].out;
    sb_sink *s = &all->s[all->n];
    memset(s, 0, sizeof *s);
    sb_outset_rules r = {"", SB_CLASH_SAME_AS, inputs};
    int rc = sb_outset_add(&s->out, opt, path, &r, earlier, (size_t)all->n);
    if (rc)
        return rc;
    s->ops = ops;
    all->n++;
    return 0;
}

/* The first error of `s` is kept; the sink takes no more rows. */
static int failed(sb_sink *s, int rc)
{
    if (rc && !s->rc)
        s->rc = rc;
    return rc;
}

int sb_sinks_open(sb_sinks *all, const sb_env *env)
{
    int rc = 0;
    for (int i = 0; i < all->n && !rc; i++) {
        sb_sink *s = &all->s[i];
        rc = sb_out_open(&s->out, env);
        if (!rc && s->ops->begin)
            rc = s->ops->begin(s, env);
    }
    /* {gpu} and {date} are expanded now: two patterns may have met on one name */
    for (int i = 0; i < all->n && !rc; i++)
        for (int j = 0; j < i && !rc; j++) {
            const sb_out_file *a = &all->s[j].out, *b = &all->s[i].out;
            if (sb_out_same(a, b))
                rc = sb_fail(SB_EXIT_USAGE, "--%s %s: same file as --%s %s (%s)", b->opt,
                             b->pattern, a->opt, a->pattern, b->path);
            else
                rc = sb_outset_partial_clash("", a, b);
        }
    if (rc)
        sb_sinks_abort(all);
    return rc;
}

/* What sb_sinks_row, _flush and _commit do to one sink; `row` is for sb_sinks_row. */
typedef int (*sink_step)(sb_sink *s, const sb_env *env, const sb_row *row);

/* `step` on every sink whose output is open and, unless `failed_too`, that has not failed: the
 * first error. */
static int each_open(sb_sinks *all, int failed_too, sink_step step, const sb_env *env,
                     const sb_row *row)
{
    int first = 0;
    for (int i = 0; i < all->n; i++) {
        sb_sink *s = &all->s[i];
        if (s->out.state != SB_OUT_OPEN || (s->rc && !failed_too))
            continue;
        int rc = step(s, env, row);
        if (!first)
            first = rc;
    }
    return first;
}

static int row_step(sb_sink *s, const sb_env *env, const sb_row *row)
{
    return failed(s, s->ops->row(s, env, row));
}

static int flush_step(sb_sink *s, const sb_env *env, const sb_row *row)
{
    (void)row;
    int rc = s->ops->flush ? s->ops->flush(s, env) : 0;
    if (!rc)
        rc = sb_out_flush(&s->out);
    return failed(s, rc);
}

/* A sink that failed is aborted (its partial file removed), the others ended and committed;
 * the sink's first error, also an earlier one. */
static int commit_step(sb_sink *s, const sb_env *env, const sb_row *row)
{
    (void)row;
    if (!s->rc && s->ops->end)
        failed(s, s->ops->end(s, env));
    if (s->rc)
        sb_out_abort(&s->out);
    else
        failed(s, sb_out_commit(&s->out));
    return s->rc;
}

int sb_sinks_row(sb_sinks *all, const sb_env *env, const sb_row *row)
{
    return each_open(all, 0, row_step, env, row);
}

int sb_sinks_flush(sb_sinks *all, const sb_env *env)
{
    return each_open(all, 0, flush_step, env, NULL);
}

int sb_sinks_commit(sb_sinks *all, const sb_env *env)
{
    return each_open(all, 1, commit_step, env, NULL);
}

void sb_sinks_abort(sb_sinks *all)
{
    for (int i = 0; i < all->n; i++)
        sb_out_abort(&all->s[i].out);
}

void sb_sinks_free(sb_sinks *all)
{
    sb_sinks_abort(all);
    for (int i = 0; i < all->n; i++)
        if (all->s[i].ops->destroy)
            all->s[i].ops->destroy(&all->s[i]);
    memset(all, 0, sizeof *all);
}
