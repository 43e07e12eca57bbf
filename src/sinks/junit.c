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

static int is_case(const sb_ci_verdict *v)
{
    return (v->where & SB_CI_TESTCASE) != 0;
}

static void counts(FILE *f, const char *element, const sb_ci_verdicts *l)
{
    size_t n = 0, failed = 0, skipped = 0;
    for (size_t i = 0; i < l->n; i++) {
        n += is_case(&l->v[i]);
        failed += is_case(&l->v[i]) && l->v[i].outcome == SB_CI_FAILED;
        skipped += is_case(&l->v[i]) && l->v[i].outcome == SB_CI_SKIPPED;
    }
    fprintf(f, "<%s name=\"", element);
    sb_xml_escape(f, l->suite, 1);
    fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.3f\">\n", n,
            failed, skipped, l->time_s);
}

/* A failure's or a skip's one line, as an attribute (attribute = 1) or as the body. */
static void one_line(FILE *f, const sb_ci_verdict *v, int attribute)
{
    if (v->outcome == SB_CI_SKIPPED && v->reason) {
        sb_xml_escape(f, v->kind ? v->kind : "skipped", attribute);
        sb_xml_escape(f, ": ", attribute);
        sb_xml_escape(f, v->reason, attribute);
    } else if (v->message) {
        sb_xml_escape(f, v->message, attribute);
    }
}

static void one_case(FILE *f, const sb_ci_verdict *v)
{
    fputs("    <testcase classname=\"", f);
    sb_xml_escape(f, v->group, 1);
    fputs("\" name=\"", f);
    sb_xml_escape(f, v->name, 1);
    fprintf(f, "\" time=\"%.3f\"", v->time_s);
    if (v->outcome == SB_CI_PASSED && !v->detail) {
        fputs("/>\n", f);
        return;
    }
    fputs(">\n      ", f);
    const char *element = v->outcome == SB_CI_FAILED    ? "failure"
                          : v->outcome == SB_CI_SKIPPED ? "skipped"
                                                        : "system-out";
    fprintf(f, "<%s", element);
    if (v->outcome == SB_CI_FAILED && v->kind) {
        fputs(" type=\"", f);
        sb_xml_escape(f, v->kind, 1);
        fputc('"', f);
    }
    if (v->outcome != SB_CI_PASSED && (v->message || v->reason)) {
        fputs(" message=\"", f);
        one_line(f, v, 1);
        fputc('"', f);
    }
    fputc('>', f);
    if (v->detail)
        sb_xml_escape(f, v->detail, 0);
    else
        one_line(f, v, 0);
    fprintf(f, "</%s>\n    </testcase>\n", element);
}

int sb_junit_write(FILE *f, const sb_ci_verdicts *l)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", f);
    counts(f, "testsuites", l);
    fputs("  ", f);
    counts(f, "testsuite", l);
    for (size_t i = 0; i < l->n; i++)
        if (is_case(&l->v[i]))
            one_case(f, &l->v[i]);
    fputs("  </testsuite>\n</testsuites>\n", f);
    return ferror(f) ? sb_fail(SB_EXIT_FAIL, "JUnit report: write error") : 0;
}
