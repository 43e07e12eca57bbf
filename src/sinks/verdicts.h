/* The verdicts a command gives CI, as one list that the CI formats read: GitHub's annotations
 * (sinks/github.h: sb_gh_write) and JUnit XML (sinks/junit.h: sb_junit_write). The audit's gate
 * fills it (report/gate_verdicts.c: the gate as one testcase, each offending Python line as an
 * annotation) and so does compare (compare/row_verdicts.c: a testcase per compared row, an
 * annotation per REGRESSION or inconclusive row). An entry is a testcase, an annotation or
 * both; the list owns its copies of the texts. */
#ifndef SB_VERDICTS_H
#define SB_VERDICTS_H

#include <stddef.h>

#include "base/strpool.h"

/* failed: `::error` and <failure>; skipped (no verdict could be given): `::warning` and
 * <skipped>; passed: no annotation, a passed testcase. */
typedef enum { SB_CI_PASSED, SB_CI_FAILED, SB_CI_SKIPPED } sb_ci_outcome;

/* Where an entry goes: a bit each. */
enum { SB_CI_TESTCASE = 1, SB_CI_ANNOTATION = 2 };

typedef struct sb_ci_verdict {
    sb_ci_outcome outcome;
    int where;        /* SB_CI_TESTCASE | SB_CI_ANNOTATION */
    const char *kind; /* "REGRESSION", "max-syncs", "inconclusive", "new": a failure's type, the
                         head of a skip's message; NULL: none */
    /* the annotation's: the file relative to the repository (NULL: none, shown on the run's
     * page), its line (0: none) and the title (NULL: none) */
    const char *file;
    int line;
    const char *title;
    const char *group, *name; /* the testcase's classname and name */
    /* the verdict in words (an annotation's message, a failure's); reason: why there is no
     * verdict (NULL: there is one), after the message in an annotation, "KIND: REASON" as a
     * skip's message */
    const char *message, *reason;
    /* the testcase's body (GitLab shows it, not the message): a failure's or a skip's, or a
     * passed case's <system-out>. NULL: a failure's or skip's message; a passed case none */
    const char *detail;
    double time_s;
} sb_ci_verdict;

typedef struct sb_ci_verdicts {
    const char *suite; /* the JUnit suite: "syncbench audit" */
    double time_s;     /* the suite's */
    sb_ci_verdict *v;
    size_t n, cap;
    sb_strpool text; /* the entries' texts */
} sb_ci_verdicts;

void sb_ci_verdicts_init(sb_ci_verdicts *l, const char *suite, double time_s);
/* A copy of *v, its texts copied into the list: 0, or -1 out of memory. */
int sb_ci_verdicts_add(sb_ci_verdicts *l, const sb_ci_verdict *v);
void sb_ci_verdicts_free(sb_ci_verdicts *l);

#endif
