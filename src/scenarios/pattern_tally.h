/* The GPU-side check of alloc and small-h2d: every step's data is checked on the GPU against
 * sb_pattern_word (kernels/pattern_check.h), which counts the mismatches and the checks that ran
 * in device memory, so that nothing is copied back during the measurement; validate compares
 * the counts with the checks the host enqueued. */
#ifndef SB_PATTERN_TALLY_H
#define SB_PATTERN_TALLY_H

#include <stddef.h>
#include <stdint.h>

#include "scenarios/scenario.h"

typedef struct sb_pattern_tally {
    unsigned long long *counts;  /* device: mismatches, checks that ran */
    unsigned long long launched; /* checks enqueued since the last validate */
    cudaStream_t stream;         /* where the checks run */
    const char *fault;           /* the test hook that damages a word */
    const char *what;            /* what a failure says of the wrong words */
} sb_pattern_tally;

/* The counts in device memory (kept in res), zeroed on `stream` before it returns. A failure
 * will say "N WHAT; ..." (`what`: "words differed from ..."); the test hook `fault` adds a
 * wrong word. */
int sb_tally_init(sb_pattern_tally *t, sb_resources *res, cudaStream_t stream, const char *fault,
                  const char *what);
/* Enqueues the check that the `words` words at `buf` hold step `seq`'s pattern. */
int sb_tally_check(sb_pattern_tally *t, const void *buf, size_t words, uint32_t seq);
/* The validate of a scenario whose state begins with its tally: every check enqueued ran and
 * found its words right, or the failure "N WHAT; R of E checks ran". Then the counts start
 * again. */
int sb_tally_validate(sb_run *r);

#endif
