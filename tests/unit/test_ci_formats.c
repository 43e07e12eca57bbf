/* The CI formats compare and the audit share (sinks/github.h, sinks/junit.h, sinks/verdicts.h,
 * sinks/grid.h): the workflow commands' escaping and an annotation's layout, a file named
 * relative to the workspace, the step summary appended and cut at GitHub's 1 MiB, JUnit's
 * escaping (what XML 1.0 forbids included) and its counts, one verdict list read by both
 * writers, a code block no text can close, the guard that keeps outside text from beginning a
 * workflow command's line. */
#include "cmocka_all.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sinks/github.h"
#include "sinks/grid.h"
#include "sinks/junit.h"
#include "sinks/verdicts.h"
#include "tmpdir.h"

/* What write(f) writes, as text (the caller frees it). */
#define WRITTEN(stmt)                                                                              \
    ({                                                                                             \
        char *text_ = NULL;                                                                        \
        size_t len_ = 0;                                                                           \
        FILE *f = open_memstream(&text_, &len_);                                                   \
        assert_non_null(f);                                                                        \
        stmt;                                                                                      \
        fclose(f);                                                                                 \
        text_;                                                                                     \
    })

static void expect_text(char *got, const char *want)
{
    if (strcmp(got, want))
        fail_msg("got '%s', want '%s'", got, want);
    free(got);
}

static void workflow_escaping(void **state)
{
    (void)state;
    const char *s = "50% a:b,c\r\nd\x1b[1m\x7f\xc2\x9b\xff\xc3\xa9";
    expect_text(WRITTEN(sb_gh_escape(f, s, 0)),
                "50%25 a:b,c%0D%0Ad\\x1b[1m\\x7f\\xc2\\x9b\\xff\xc3\xa9");
    expect_text(WRITTEN(sb_gh_escape(f, s, 1)),
                "50%25 a%3Ab%2Cc%0D%0Ad\\x1b[1m\\x7f\\xc2\\x9b\\xff\xc3\xa9");
}

static void annotation_layout(void **state)
{
    (void)state;
    expect_text(WRITTEN(sb_gh_annotate(f, "error", "a,b.py", 42, "t:1", "m\nn")),
                "::error file=a%2Cb.py,line=42,title=t%3A1::m%0An\n");
    expect_text(WRITTEN(sb_gh_annotate(f, "warning", NULL, 42, "t", "m")),
                "::warning title=t::m\n");
    expect_text(WRITTEN(sb_gh_annotate(f, "error", "a.py", 0, NULL, "m")),
                "::error file=a.py::m\n");
    expect_text(WRITTEN(sb_gh_annotate(f, "error", NULL, 0, NULL, "m")), "::error::m\n");
}

/* Through the guard no line begins with `::`; a lone ':' and the text's other bytes pass. */
static void guard_indents_command_lines(void **state)
{
    (void)state;
    expect_text(WRITTEN({
                    FILE *g = sb_gh_guard(f);
                    assert_non_null(g);
                    fputs("::stop-commands::tok\na ::b\n:x\n", g);
                    fputs(":", g);
                    fflush(g);
                    fputs(":y\n:", g);
                    assert_int_equal(fclose(g), 0);
                }),
                "  ::stop-commands::tok\na ::b\n:x\n  ::y\n:");
}

static void repo_paths(void **state)
{
    (void)state;
    char buf[256], cwd[256];
    assert_non_null(getcwd(cwd, sizeof cwd));
    setenv("GITHUB_WORKSPACE", "/ws/repo/", 1);
    assert_string_equal(sb_gh_repo_path("/ws/repo/train.py", buf, sizeof buf), "train.py");
    assert_string_equal(sb_gh_repo_path("/ws/repo/./a/b.py", buf, sizeof buf), "a/b.py");
    assert_null(sb_gh_repo_path("/ws/repository/train.py", buf, sizeof buf));
    assert_null(sb_gh_repo_path("/ws/repo", buf, sizeof buf));
    assert_null(sb_gh_repo_path("train.py", buf, sizeof buf)); /* the cwd is elsewhere */
    unsetenv("GITHUB_WORKSPACE");                              /* the current folder, then */
    assert_string_equal(sb_gh_repo_path("pkg/m.py", buf, sizeof buf), "pkg/m.py");
    char abs[512];
    snprintf(abs, sizeof abs, "%s/pkg/m.py", cwd);
    assert_string_equal(sb_gh_repo_path(abs, buf, sizeof buf), "pkg/m.py");
    assert_null(sb_gh_repo_path("/ws/repo/train.py", buf, 4)); /* does not fit */
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static void summary_appended_and_cut(void **state)
{
    (void)state;
    char path[128];
    snprintf(path, sizeof path, "%s/summary.md", tmpdir);
    unsetenv("GITHUB_STEP_SUMMARY");
    sb_gh_summary("x\n", 2); /* unset: nothing, no error */
    setenv("GITHUB_STEP_SUMMARY", path, 1);
    sb_gh_summary("first\n", 6);
    sb_gh_summary("second\n", 7);
    FILE *f = fopen(path, "r");
    char text[64] = "";
    assert_int_equal(fread(text, 1, sizeof text - 1, f), 13);
    fclose(f);
    assert_string_equal(text, "first\nsecond\n");
    /* 2 MiB of 64-byte lines into what is left of the 1 MiB: whole lines, the note, no more */
    size_t n = 2 << 20;
    char *md = malloc(n);
    for (size_t i = 0; i < n; i++)
        md[i] = i % 64 == 63 ? '\n' : 'a';
    sb_gh_summary(md, n);
    free(md);
    long size = file_size(path);
    assert_true(size <= SB_GH_SUMMARY_MAX && size > SB_GH_SUMMARY_MAX - 64 - 200);
    f = fopen(path, "r");
    fseek(f, -200, SEEK_END);
    char tail[256] = "";
    assert_int_equal(fread(tail, 1, 200, f), 200);
    fclose(f);
    assert_non_null(strstr(tail, "aaa\n\n\n> syncbench: the rest of this summary was cut here"));
    char more[129];
    memset(more, 'm', 128);
    more[128] = '\0';
    sb_gh_summary(more, 128); /* no room left for even the note: the file stays */
    assert_int_equal(file_size(path), size);
    unsetenv("GITHUB_STEP_SUMMARY");
}

static void xml_escaping(void **state)
{
    (void)state;
    const char *s =
        "<a b=\"c\" & 'd'>\t\n\r\x01\x7f\xc2\x85\xef\xbf\xbe\xef\xbf\xbf\xef\xbf\xbd\xff";
    expect_text(WRITTEN(sb_xml_escape(f, s, 1)),
                "&lt;a b=&quot;c&quot; &amp; &apos;d&apos;&gt;&#9;&#10;&#13;\\x01\\x7f\\xc2\\x85"
                "\\xef\\xbf\\xbe\\xef\\xbf\\xbf\xef\xbf\xbd\\xff");
    expect_text(WRITTEN(sb_xml_escape(f, s, 0)),
                "&lt;a b=&quot;c&quot; &amp; &apos;d&apos;&gt;\t\n&#13;\\x01\\x7f\\xc2\\x85"
                "\\xef\\xbf\\xbe\\xef\\xbf\\xbf\xef\xbf\xbd\\xff");
}

static void verdicts_to_junit_and_github(void **state)
{
    (void)state;
    const sb_ci_verdict entries[] = {
        {.outcome = SB_CI_PASSED, .where = SB_CI_TESTCASE, .group = "c", .name = "passed"},
        {.outcome = SB_CI_FAILED,
         .where = SB_CI_TESTCASE | SB_CI_ANNOTATION,
         .kind = "T",
         .group = "c",
         .name = "failed",
         .message = "why",
         .detail = "why\nmore",
         .time_s = 1.5},
        {.outcome = SB_CI_SKIPPED,
         .where = SB_CI_TESTCASE,
         .kind = "new",
         .group = "c",
         .name = "skipped",
         .message = "row",
         .reason = "reason"},
        {.outcome = SB_CI_FAILED,
         .where = SB_CI_TESTCASE,
         .group = "c",
         .name = "failed too",
         .message = "m"},
        {.outcome = SB_CI_FAILED, .where = SB_CI_ANNOTATION, .message = "an annotation only"},
    };
    sb_ci_verdicts l;
    sb_ci_verdicts_init(&l, "s", 2.25);
    for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++)
        assert_int_equal(sb_ci_verdicts_add(&l, &entries[i]), 0);
    char *xml = WRITTEN(assert_int_equal(sb_junit_write(f, &l), 0));
    assert_non_null(strstr(xml, "<testsuites name=\"s\" tests=\"4\" failures=\"2\" errors=\"0\" "
                                "skipped=\"1\" time=\"2.250\">"));
    assert_non_null(strstr(xml, "<testsuite name=\"s\" tests=\"4\" failures=\"2\""));
    assert_non_null(strstr(xml, "<testcase classname=\"c\" name=\"passed\" time=\"0.000\"/>"));
    assert_non_null(strstr(xml, "<failure type=\"T\" message=\"why\">why\nmore</failure>"));
    assert_non_null(strstr(xml, "<skipped message=\"new: reason\">new: reason</skipped>"));
    assert_non_null(strstr(xml, "<failure message=\"m\">m</failure>")); /* the body: the message */
    assert_null(strstr(xml, "an annotation only"));
    free(xml);
    /* the same list to GitHub: the annotations only, the reason on the message's next line */
    l.v[2].where |= SB_CI_ANNOTATION;
    l.v[2].title = "t:1";
    expect_text(WRITTEN(assert_int_equal(sb_gh_write(f, &l, NULL, 0), 0)),
                "::error::why\n::warning title=t%3A1::row%0Areason\n::error::an annotation only\n");
    sb_ci_verdicts_free(&l);
}

static void code_block_cannot_be_closed(void **state)
{
    (void)state;
    expect_text(WRITTEN(sb_md_code_block(f, "text", "a\n")), "```text\na\n```\n");
    expect_text(WRITTEN(sb_md_code_block(f, "", "a ```` b")), "`````\na ```` b\n`````\n");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(workflow_escaping),
        cmocka_unit_test(annotation_layout),
        cmocka_unit_test(guard_indents_command_lines),
        cmocka_unit_test(repo_paths),
        cmocka_unit_test_setup_teardown(summary_appended_and_cut, make_tmpdir, remove_tmpdir),
        cmocka_unit_test(xml_escaping),
        cmocka_unit_test(verdicts_to_junit_and_github),
        cmocka_unit_test(code_block_cannot_be_closed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
