#include "compare/gate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void sb_gate_defaults(sb_gate_opts *o)
{
    *o = (sb_gate_opts){.threshold_pct = 5,
                        .confidence_pct = 99,
                        .resamples = 2000,
                        .min_samples = 5,
                        .seed = 0x5eedb007ull};
}

const char *sb_gate_verdict_name(sb_gate_verdict v)
{
    static const char *const names[] = {"same", "faster", "slower", "REGRESSION", "inconclusive"};
    return names[v];
}

static uint64_t next(uint64_t *s) /* xorshift64* */
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ull;
}

static void swap(double *a, double *b)
{
    double t = *a;
    *a = *b;
    *b = t;
}

/* The k-th smallest of x[0..n-1] (reorders x). */
static double select_kth(double *x, int n, int k)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        double pivot = x[(lo + hi) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (x[i] < pivot)
                i++;
            while (x[j] > pivot)
                j--;
            if (i <= j)
                swap(&x[i++], &x[j--]);
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return x[k];
    }
    return x[k];
}

/* The median of x (reorders x), as numpy's: the mean of the middle two for even n. */
static double median(double *x, int n)
{
    double m = select_kth(x, n, n / 2);
    if (n % 2 == 0) {
        double below = x[0];
        for (int i = 1; i < n / 2; i++) /* after select, x[0..n/2-1] are the smaller half */
            if (x[i] > below)
                below = x[i];
        m = (m + below) / 2;
    }
    return m;
}

static double resampled_median(const double *x, int n, double *tmp, uint64_t *rng)
{
    for (int i = 0; i < n; i++)
        tmp[i] = x[next(rng) % (uint64_t)n];
    return median(tmp, n);
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Do a and b (n values each) hold the same values, in any order? tmp holds 2n. */
static int same_samples(const double *a, const double *b, int n, double *tmp)
{
    memcpy(tmp, a, sizeof *tmp * (size_t)n);
    memcpy(tmp + n, b, sizeof *tmp * (size_t)n);
    qsort(tmp, (size_t)n, sizeof *tmp, by_value);
    qsort(tmp + n, (size_t)n, sizeof *tmp, by_value);
    return memcmp(tmp, tmp + n, sizeof *tmp * (size_t)n) == 0;
}

int sb_gate_decide(const double *base, int nb, const double *cur, int nc, int higher_is_better,
                   const sb_gate_opts *o, sb_gate_result *out)
{
    memset(out, 0, sizeof *out);
    int n = nb > nc ? nb : nc;
    double *tmp = malloc(sizeof *tmp * (size_t)(n ? 2 * n : 1));
    double *changes = malloc(sizeof *changes * (size_t)(o->resamples ? o->resamples : 1));
    if (!tmp || !changes || nb < 1 || nc < 1) {
        free(tmp);
        free(changes);
        return -1;
    }
    /* the same samples (a run compared with itself): the change is exactly 0, no interval to
     * estimate; a bootstrap of two independent draws would widen it past the threshold for a
     * noisy row and call a self-comparison inconclusive */
    if (nb == nc && same_samples(base, cur, nb, tmp)) {
        out->verdict = nb < o->min_samples ? SB_GATE_INCONCLUSIVE : SB_GATE_SAME;
        free(tmp);
        free(changes); /* change_pct, lo_pct and hi_pct stay 0 */
        return 0;
    }
    memcpy(tmp, base, sizeof *tmp * (size_t)nb);
    double mb = median(tmp, nb);
    memcpy(tmp, cur, sizeof *tmp * (size_t)nc);
    double mc = median(tmp, nc);
    if (mb == 0) {
        free(tmp);
        free(changes);
        return -1;
    }
    out->change_pct = 100.0 * (mc - mb) / fabs(mb);

    uint64_t rng = o->seed ? o->seed : 1;
    int k = 0;
    for (int r = 0; r < o->resamples; r++) {
        double b = resampled_median(base, nb, tmp, &rng);
        double c = resampled_median(cur, nc, tmp, &rng);
        if (b != 0)
            changes[k++] = 100.0 * (c - b) / fabs(b);
    }
    free(tmp);
    if (k == 0) {
        free(changes);
        return -1;
    }
    qsort(changes, (size_t)k, sizeof *changes, by_value);
    double tail = (100.0 - o->confidence_pct) / 200.0;
    out->lo_pct = changes[(int)floor(tail * (k - 1))];
    out->hi_pct = changes[(int)ceil((1 - tail) * (k - 1))];
    free(changes);

    /* in the worse direction: positive is worse */
    double w = higher_is_better ? -out->change_pct : out->change_pct;
    double wlo = higher_is_better ? -out->hi_pct : out->lo_pct;
    double whi = higher_is_better ? -out->lo_pct : out->hi_pct;
    double t = o->threshold_pct;
    if (nb < o->min_samples || nc < o->min_samples)
        out->verdict = SB_GATE_INCONCLUSIVE;
    else if (wlo > 0)
        out->verdict = w > t ? SB_GATE_REGRESSION : SB_GATE_SLOWER;
    else if (whi < 0)
        out->verdict = w < -t ? SB_GATE_FASTER : SB_GATE_SAME;
    else
        out->verdict = wlo >= -t && whi <= t ? SB_GATE_SAME : SB_GATE_INCONCLUSIVE;
    return 0;
}
