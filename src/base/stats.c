#include "base/stats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sb_sort_doubles(double *x, size_t n)
{
    if (n > 1)
        qsort(x, n, sizeof *x, cmp_double);
}

double sb_percentile_sorted(const double *sorted, int n, double q)
{
    if (n <= 0)
        return NAN;
    if (q <= 0)
        return sorted[0];
    if (q >= 1)
        return sorted[n - 1];
    double pos = q * (n - 1);
    int lo = (int)floor(pos);
    double frac = pos - lo;
    if (lo + 1 >= n)
        return sorted[n - 1];
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

static void mean_stddev(const double *x, int n, double *mean, double *sd)
{
    double m = 0;
    for (int i = 0; i < n; i++)
        m += x[i];
    m /= n;
    double ss = 0;
    for (int i = 0; i < n; i++)
        ss += (x[i] - m) * (x[i] - m);
    *mean = m;
    *sd = n > 1 ? sqrt(ss / (n - 1)) : 0.0;
}

double sb_cv_percent(const double *x, int n)
{
    if (n < 2)
        return 0.0;
    double m, sd;
    mean_stddev(x, n, &m, &sd);
    return m != 0 ? 100.0 * sd / fabs(m) : 0.0;
}

int sb_stats_compute(const double *x, int n, sb_stats *out)
{
    memset(out, 0, sizeof *out);
    if (n <= 0)
        return -1;
    double *s = malloc(sizeof *s * (size_t)n);
    if (!s)
        return -1;
    memcpy(s, x, sizeof *s * (size_t)n);
    sb_sort_doubles(s, (size_t)n);
    out->n = n;
    out->min = s[0];
    out->max = s[n - 1];
    out->median = sb_percentile_sorted(s, n, 0.5);
    out->p05 = sb_percentile_sorted(s, n, 0.05);
    out->p95 = sb_percentile_sorted(s, n, 0.95);
    mean_stddev(x, n, &out->mean, &out->stddev);
    out->cv = (n > 1 && out->mean != 0) ? 100.0 * out->stddev / fabs(out->mean) : 0.0;
    free(s);
    return 0;
}

size_t sb_median_ci_rank(size_t n)
{
    /* P(X <= j) of X ~ Binomial(n, 1/2), summed term by term: C(n, i) / 2^n */
    double term = 1, cdf = 0, scale = 1;
    for (size_t i = 0; i < n; i++)
        scale *= 0.5;
    size_t r = 0;
    for (size_t j = 0; j < n; j++) {
        cdf += term * scale;
        if (2 * cdf > 0.05)
            break;
        r = j; /* x[j] and x[n - 1 - j]: 1 - 2 P(X <= j) >= 95 % */
        term = term * (double)(n - j) / (double)(j + 1);
    }
    return r;
}
