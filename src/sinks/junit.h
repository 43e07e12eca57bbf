/* JUnit XML, the report GitLab, Jenkins, Buildkite and GitHub (through actions) read: one
 * <testsuites> holding one <testsuite>, whose counts are taken from its cases. Shared by the
 * audit (report/out_junit.c) and compare (compare/cmp_junit.c): one XML escaper, one layout. */
#ifndef SB_JUNIT_H
#define SB_JUNIT_H

#include <stddef.h>
#include <stdio.h>

typedef enum { SB_JUNIT_PASSED, SB_JUNIT_FAILED, SB_JUNIT_SKIPPED } sb_junit_outcome;

typedef struct sb_junit_case {
    const char *classname, *name;
    sb_junit_outcome outcome;
    const char *type;    /* a failure's type ("REGRESSION"); NULL: none */
    const char *message; /* a failure's or a skip's one line */
    /* the element's body: GitLab drops <failure message> and shows the body, so it holds the
     * message and the detail. A passed case: its <system-out>; NULL: none */
    const char *detail;
    double time_s;
} sb_junit_case;

/* The whole document, `suite` naming the suite and the suites: 0, or exit 1 on a write error. */
int sb_junit_write(FILE *f, const char *suite, const sb_junit_case *cases, size_t n, double time_s);

/* Text as XML character data (attribute = 0) or as an attribute's value: & < > " ' as entities;
 * in an attribute \t \n \r as character references, which attribute normalization keeps; \r in
 * character data too. What XML 1.0 forbids (C0 controls but \t \n \r, U+FFFE, U+FFFF), C1
 * controls and bytes that are not UTF-8 come out in the one escaper's form (base/utf8.h). */
void sb_xml_escape(FILE *f, const char *s, int attribute);

#endif
