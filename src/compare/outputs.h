/* What compare's outputs read of a compared row (sb_cmp_line: its pair, verdict, rule and
 * change), and its verdicts for CI (compare/row_verdicts.c), which the one GitHub writer
 * (sinks/github.h) and the one JUnit writer (sinks/junit.h) read. */
#ifndef SB_COMPARE_OUTPUTS_H
#define SB_COMPARE_OUTPUTS_H

#include <stdio.h>

#include "compare/compare.h"
#include "sinks/verdicts.h"

/* Which rule gave a row its verdict. */
enum { SB_RULE_NONE, SB_RULE_SUMMARY, SB_RULE_SAMPLES, SB_RULE_ZERO };

typedef struct sb_cmp_line {
    const sb_cmp_row *base, *cur; /* NULL: the row is not in that file */
    sb_verdict v;
    int rule;             /* SB_RULE_* */
    double change, noise; /* noise: the summary rule's band, in percent */
    double lo, hi;        /* the samples' interval of the change, in percent */
} sb_cmp_line;

/* The row in words, for a person reading CI, one line, raw (the writer escapes): "REGRESSION:
 * kernel_us 99.87 -> 110 us, +10.18 % (99 % CI [+9.85, +10.81] %, threshold 5 %); params
 * m=512" (compare/row_text.c). */
void sb_compare_row_text(FILE *f, const sb_compare_request *req, const sb_cmp_line *l);
/* Why a row got no verdict (inconclusive, no-baseline, new, missing); NULL when it got one. */
const char *sb_compare_no_verdict(sb_verdict v);

/* The rows as CI verdicts (sinks/verdicts.h; compare/row_verdicts.c), the list *out
 * initialized here (the caller frees it): a testcase per compared row (classname: the scenario;
 * name: variant, params, metric), failed for a REGRESSION (and an inconclusive row with
 * --strict), skipped with the reason where no verdict could be given (inconclusive,
 * no-baseline, new, missing), passed otherwise; a REGRESSION or inconclusive row an annotation
 * too (title: scenario, variant, metric), `::error` when it fails, else `::warning`. rule: which
 * statistics decided (the line above the table), for the bodies. 0, or exit 1 out of memory. */
int sb_compare_verdicts(const sb_compare_request *req, const sb_cmp_line *l, size_t n,
                        const char *rule, sb_ci_verdicts *out);

/* compare's writers as the output registry names them (outputs/formats.h; compare.c):
 * --markdown (the table, the summary and the advice), --verdicts (every row's verdict as CSV),
 * --rerun (the confirmation suite), --junit (the verdicts above). */
int sb_compare_out_markdown(FILE *f, sb_compare_result *r);
int sb_compare_out_verdicts(FILE *f, sb_compare_result *r);
int sb_compare_out_rerun(FILE *f, sb_compare_result *r);
int sb_compare_out_junit(FILE *f, sb_compare_result *r);

#endif
