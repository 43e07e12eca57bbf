/* Summary statistics of one metric's samples (one sample per repetition). Pure C. */
#ifndef SB_STATS_H
#define SB_STATS_H

#include <stddef.h>

typedef struct sb_stats {
    int n;
    double median, mean, stddev, min, max, p05, p95;
    double cv; /* stddev / |mean| in percent; 0 when n < 2 or mean == 0 */
} sb_stats;

/* Fills *out from x[0..n-1] (n >= 1; x is not modified). stddev is the sample (n-1) standard
 * deviation. Percentiles interpolate linearly between order statistics (numpy's default). */
int sb_stats_compute(const double *x, int n, sb_stats *out);

/* x[0..n-1] in ascending order, in place (n may be 0). */
void sb_sort_doubles(double *x, size_t n);

/* q in [0, 1] over an ascending array. */
double sb_percentile_sorted(const double *sorted, int n, double q);

/* Coefficient of variation in percent of x[0..n-1], without sorting (for the stopping rule). */
double sb_cv_percent(const double *x, int n);

/* The distribution-free 95 % interval of the median of n values: sorted ascending, x[r] and
 * x[n - 1 - r] with r (0-based) the largest for which 2 P(Binomial(n, 1/2) <= r) <= 0.05, so
 * that they bound the median with at least 95 % confidence; 0 (the lowest and the highest) when
 * n is under 6. n = 20: r = 5 (the 6th and the 15th values). */
size_t sb_median_ci_rank(size_t n);

#endif
