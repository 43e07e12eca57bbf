/* JUnit XML, the report GitLab, Jenkins, Buildkite and GitHub (through actions) read: one
 * <testsuites> holding one <testsuite>, whose counts are taken from its cases: the one JUnit
 * writer, which reads the verdict list the audit's gate and compare fill (sinks/verdicts.h). */
#ifndef SB_JUNIT_H
#define SB_JUNIT_H

#include <stddef.h>
#include <stdio.h>

#include "sinks/verdicts.h"

/* The whole document: the list's testcases (sinks/verdicts.h: the entries with
 * SB_CI_TESTCASE), its suite naming the suite and the suites. A failure's type is its kind, its
 * message the entry's message; a skip's message is "KIND: REASON" (the message when there is
 * no reason); the body is the detail, else the message. 0, or exit 1 on a write error. */
int sb_junit_write(FILE *f, const sb_ci_verdicts *l);

/* Text as XML character data (attribute = 0) or as an attribute's value: & < > " ' as entities;
 * in an attribute \t \n \r as character references, which attribute normalization keeps; \r in
 * character data too. What XML 1.0 forbids (C0 controls but \t \n \r, U+FFFE, U+FFFF), C1
 * controls and bytes that are not UTF-8 come out in the one escaper's form (base/utf8.h). */
void sb_xml_escape(FILE *f, const char *s, int attribute);

#endif
