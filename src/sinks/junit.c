#include "sinks/junit.h"

#include <string.h>

#include "base/error.h"

/* The entity or character reference for the piece at s, NULL when the escaper's form will do
 * (the piece as it is, or escaped when XML forbids it). */
static const char *xml_entity(const char *s, int attribute, int *used)
{
    const unsigned char *u = (const unsigned char *)s;
    *used = 1;
    if (u[0] == 0xEF && u[1] == 0xBF && (u[2] == 0xBE || u[2] == 0xBF)) {
        *used = 3; /* U+FFFE, U+FFFF: not XML characters */
        return u[2] == 0xBE ? "\\xef\\xbf\\xbe" : "\\xef\\xbf\\xbf";
    }
    switch (*s) {
    case '&':
        return "&amp;";
    case '<':
        return "&lt;";
    case '>':
        return "&gt;";
    case '"':
        return "&quot;";
    case '\'':
        return "&apos;";
    case '\r':
        return "&#13;";
    case '\n':
        return attribute ? "&#10;" : "\n";
    case '\t':
        return attribute ? "&#9;" : "\t";
    default:
        return NULL;
    }
}

void sb_xml_escape(FILE *f, const char *s, int attribute)
{
    sb_fputs_escaped_sub(f, s, xml_entity, attribute);
}

static void counts(FILE *f, const char *element, const char *suite, const sb_junit_case *cases,
                   size_t n, double time_s)
{
    size_t failed = 0, skipped = 0;
    for (size_t i = 0; i < n; i++) {
        failed += cases[i].outcome == SB_JUNIT_FAILED;
        skipped += cases[i].outcome == SB_JUNIT_SKIPPED;
    }
    fprintf(f, "<%s name=\"", element);
    sb_xml_escape(f, suite, 1);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n", n,
            failed, skipped, time_s);
}

static void one_case(FILE *f, const sb_junit_case *c)
{
    fputs("    <testcase classname=\"", f);
    sb_xml_escape(f, c->classname, 1);
    fputs("\" name=\"", f);
    sb_xml_escape(f, c->name, 1);
    fprintf(f, "\" time=\"%.3f\"", c->time_s);
    if (c->outcome == SB_JUNIT_PASSED && !c->detail) {
        fputs("/>\n", f);
        return;
    }
    fputs(">\n      ", f);
    const char *element = c->outcome == SB_JUNIT_FAILED    ? "failure"
                          : c->outcome == SB_JUNIT_SKIPPED ? "skipped"
                                                           : "system-out";
    fprintf(f, "<%s", element);
    if (c->outcome == SB_JUNIT_FAILED && c->type) {
        fputs(" type=\"", f);
        sb_xml_escape(f, c->type, 1);
        fputc('"', f);
    }
    if (c->outcome != SB_JUNIT_PASSED && c->message) {
        fputs(" message=\"", f);
        sb_xml_escape(f, c->message, 1);
        fputc('"', f);
    }
    fputc('>', f);
    sb_xml_escape(f, c->detail ? c->detail : c->message, 0);
    fprintf(f, "</%s>\n    </testcase>\n", element);
}

int sb_junit_write(FILE *f, const char *suite, const sb_junit_case *cases, size_t n, double time_s)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    counts(f, "testsuites", suite, cases, n, time_s);
    fputs("  ", f);
    counts(f, "testsuite", suite, cases, n, time_s);
    for (size_t i = 0; i < n; i++)
        one_case(f, &cases[i]);
    fputs("  </testsuite>\n</testsuites>\n", f);
    return ferror(f) ? sb_fail(SB_EXIT_FAIL, "JUnit report: write error") : 0;
}
