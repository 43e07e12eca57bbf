/* The GPU's busy time of one device: the union of its kernel, copy and memset intervals, and
 * what a host call's timing says against it (the bubble it made, whether it waited). */
#include "analyze/analyze.h"
#include "base/arrays.h"

#include <math.h>
#include <stdlib.h>

static int cmp_iv(const void *a, const void *b)
{
    const sb_audit_iv *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return (x->end > y->end) - (x->end < y->end);
}

int sb_audit_timeline_build(sb_audit_timeline *t, sb_audit_iv *iv, size_t n)
{
    t->n = 0;
    t->iv = NULL;
    if (!n)
        return 0;
    sb_sort(iv, n, sizeof *iv, cmp_iv);
    t->iv = malloc(n * sizeof *iv);
    if (!t->iv)
        return -1;
    sb_audit_iv cur = iv[0];
    for (size_t i = 1; i < n; i++) {
        if (iv[i].start <= cur.end) {
            if (iv[i].end > cur.end)
                cur.end = iv[i].end;
        } else {
            t->iv[t->n++] = cur;
            cur = iv[i];
        }
    }
    t->iv[t->n++] = cur;
    return 0;
}

/* Index of the last stretch with start <= t, or -1. */
static long last_starting_by(const sb_audit_timeline *t, int64_t t_ns)
{
    long lo = 0, hi = (long)t->n; /* first index with start > t_ns */
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (t->iv[mid].start <= t_ns)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

const sb_audit_iv *sb_audit_timeline_at(const sb_audit_timeline *t, int64_t t_ns)
{
    long i = last_starting_by(t, t_ns);
    return i >= 0 && t->iv[i].end > t_ns ? &t->iv[i] : NULL;
}

const sb_audit_iv *sb_audit_timeline_next(const sb_audit_timeline *t, int64_t t_ns)
{
    long i = last_starting_by(t, t_ns);
    if (i >= 0 && t->iv[i].start == t_ns)
        return &t->iv[i];
    return (size_t)(i + 1) < t->n ? &t->iv[i + 1] : NULL;
}

int64_t sb_audit_timeline_total(const sb_audit_timeline *t)
{
    int64_t s = 0;
    for (size_t i = 0; i < t->n; i++)
        s += t->iv[i].end - t->iv[i].start;
    return s;
}

int64_t sb_audit_bubble(const sb_audit_timeline *t, int64_t start, int64_t end)
{
    const sb_audit_iv *busy = sb_audit_timeline_at(t, start);
    int64_t t0 = busy && busy->end > start ? busy->end : start;
    if (t0 > end)
        return 0; /* the GPU was still busy when the host stopped waiting */
    const sb_audit_iv *next = sb_audit_timeline_next(t, t0);
    return next ? next->start - t0 : 0;
}

int sb_audit_waited(const sb_audit_timeline *t, int64_t start, int64_t end, double min_us,
                    double slack_us)
{
    if ((double)(end - start) < min_us * 1e3)
        return 0;
    const sb_audit_iv *busy = sb_audit_timeline_at(t, start);
    if (!busy)
        return 0;
    int64_t g = busy->end;
    return start < g && g <= end && (double)(end - g) <= slack_us * 1e3;
}

double sb_audit_gpu_span_us(const sb_audit_proc_result *res)
{
    return res->proc->windowed ? res->window_us : res->lifetime_us;
}

const char *sb_audit_window_text(const sb_audit_proc *p, char *buf, size_t n)
{
    buf[0] = 0;
    if (p->windowed)
        sb_gpu_window_format(&p->window, buf, n);
    return buf;
}

double sb_audit_scale_bubbles(double sum_us, long count, long known)
{
    if (known == count)
        return sum_us;
    return known ? sum_us * (double)count / (double)known : NAN;
}
