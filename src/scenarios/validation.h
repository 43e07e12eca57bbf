/* How a scenario's validate fails: one line, "validation failed in CONTEXT: ...", exit 1. A value
 * checked inside the timed loop (a readback, a mark the GPU stored) cannot fail the measurement
 * there: the loop notes it in an sb_mismatch (the first one described, the rest counted) and
 * validate reports them all at once. */
#ifndef SB_VALIDATION_H
#define SB_VALIDATION_H

/* Records "validation failed in CONTEXT: " followed by the formatted text; returns exit 1. */
int sb_invalid(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

typedef struct sb_mismatch {
    unsigned long long count; /* wrong values since the last report */
    char first[256];          /* the first of them, described */
} sb_mismatch;

/* One wrong value. The first since the last report is described by the formatted text, which
 * follows the count in the report: "values read back were not their step's (value 2: ...)". */
void sb_mismatch_note(sb_mismatch *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 0 when nothing was wrong (count 0); otherwise the failure "validation failed in CONTEXT:
 * COUNT TEXT", and the count starts again. */
int sb_mismatch_report(sb_mismatch *m);

#endif
