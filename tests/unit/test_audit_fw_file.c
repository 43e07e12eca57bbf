/* --rules FILE (src/analyze/fw_file.c): a good file read back field by field, and every way a
 * file is refused, each with its line and row. */
#include "cmocka_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analyze/frameworks.h"
#include "tmpdir.h"

static char path[128];
static char err[512];
static sb_fw_row *rows;
static size_t n;

static const char *write_bytes(const char *text, size_t len)
{
    snprintf(path, sizeof path, "%s/rules.ini", tmpdir);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    fclose(f);
    return path;
}

/* Loads text; returns the error without "PATH:" in front ("" when it loaded). */
static const char *load(const char *text)
{
    err[0] = '\0';
    int rc = sb_fw_file_load(write_bytes(text, strlen(text)), &rows, &n, err, sizeof err);
    if (rc == 0) {
        assert_string_equal(err, "");
        return "";
    }
    assert_int_equal(rc, -1);
    assert_null(rows);
    assert_int_equal(n, 0);
    assert_int_equal(strncmp(err, path, strlen(path)), 0);
    assert_null(strchr(err, '\n'));
    return err + strlen(path);
}

#define ROW_A                                                                                      \
    "[mylib.step_check]\n"                                                                         \
    "package = mylib\n"                                                                            \
    "versions = 1.2\n"                                                                             \
    "module = mylib/loop.py\n"                                                                     \
    "function = step\n"                                                                            \
    "text = loss.item()\n"                                                                         \
    "what = reads the loss every step\n"                                                           \
    "fix = mylib.Loop(log_every=50)\n"

static void good_file(void **state)
{
    (void)state;
    const char *text = "; my rows\n" ROW_A "where = Loop(\n"
                       "removes = true\n"
                       "\n"
                       "# the second\n"
                       "[other-lib_2]\n"
                       "  package = other-lib\n"
                       "versions = 0.1|0.2 ; both checked\n"
                       "module = other_lib/a/b.py|other_lib/c.py\r\n"
                       "function = f|g\n"
                       "text = x.cpu()\n"
                       "what = copies x\n"
                       "fix = keep x on the GPU\n"
                       "caveat = more memory\n"
                       "scenario = log-every\n"
                       "removes = No\n";
    assert_string_equal(load(text), "");
    assert_int_equal(n, 2);
    const sb_fw_row *a = &rows[0], *b = &rows[1];
    assert_string_equal(a->id, "mylib.step_check");
    assert_string_equal(a->package, "mylib");
    assert_string_equal(a->versions, "1.2");
    assert_string_equal(a->module, "mylib/loop.py");
    assert_string_equal(a->func, "step");
    assert_string_equal(a->text, "loss.item()");
    assert_string_equal(a->what, "reads the loss every step");
    assert_string_equal(a->fix, "mylib.Loop(log_every=50)");
    assert_string_equal(a->caveat, "");
    assert_string_equal(a->where, "Loop(");
    assert_null(a->scenario);
    assert_int_equal(a->removes, 1);
    assert_string_equal(b->id, "other-lib_2");
    assert_string_equal(b->package, "other-lib");
    assert_string_equal(b->versions, "0.1|0.2");
    assert_string_equal(b->module, "other_lib/a/b.py|other_lib/c.py");
    assert_string_equal(b->func, "f|g");
    assert_string_equal(b->text, "x.cpu()");
    assert_string_equal(b->what, "copies x");
    assert_string_equal(b->fix, "keep x on the GPU");
    assert_string_equal(b->caveat, "more memory");
    assert_null(b->where);
    assert_string_equal(b->scenario, "log-every");
    assert_int_equal(b->removes, 0);
    assert_null(sb_fw_row_problem(a));
    assert_null(sb_fw_row_problem(b));

    /* kept for the analysis, and given back */
    size_t kept = 7;
    assert_null(sb_fw_user_rows(&kept));
    assert_int_equal(kept, 0);
    sb_fw_use_user_rows(rows, n);
    assert_ptr_equal(sb_fw_user_rows(&kept), rows);
    assert_int_equal(kept, 2);
    sb_fw_use_user_rows(NULL, 0);
    assert_null(sb_fw_user_rows(&kept));
    assert_int_equal(kept, 0);
    sb_fw_file_free(rows, n);
}

/* Each bad file and the error it gives, after "PATH". */
static void bad_files(void **state)
{
    (void)state;
    static const struct {
        const char *text, *error;
    } cases[] = {
        {"", ": no rows (an [ID] section per row)"},
        {"; only a comment\n\n", ": no rows (an [ID] section per row)"},
        {"package = x\n" ROW_A, ":1: key 'package' outside a row; each row starts with [ID]"},
        {ROW_A "colour = red\n",
         ":9: [mylib.step_check]: unknown key 'colour' (keys: package, versions, module, "
         "function, text, what, fix, caveat, where, scenario, removes)"},
        {ROW_A "package = other\n",
         ":9: [mylib.step_check]: key 'package' given twice (first at line 2)"},
        {ROW_A "\n" ROW_A, ":10: [mylib.step_check]: row id given twice (first at line 1)"},
        {ROW_A "removes = maybe\n",
         ":9: [mylib.step_check]: removes = maybe: expected true or false (1/0, yes/no)"},
        {ROW_A "this line has no equals sign\n",
         ":9: [mylib.step_check]: syntax error: expected [ID], key = value or a ; comment"},
        {ROW_A "[broken\n", ":9: section header without ']'"},
        {ROW_A "[next] package = x\n",
         ":9: [next]: text after the header (a key goes on a line of its own, below it)"},
        {"[a b]\npackage = x\n",
         ":1: [a b]: the id may hold only letters, digits, '.', '_' and '-'"},
        {"[]\npackage = x\n", ":1: []: no id"},
        {"[r]\npackage = mylib\n", ":1: [r]: no versions (versions = ... is required)"},
        {"[r]\npackage =\n", ":2: [r]: no package (package = ... is required)"},
        {ROW_A "\n[r2]\n", ":10: [r2]: no package (package = ... is required)"},
        {"[r]\npackage = mylib\nversions = 1\nmodule = mylib/a.py\nfunction = f\ntext = t\n"
         "what = w\n",
         ":1: [r]: no fix (fix = ... is required)"},
        {ROW_A "\n[r]\npackage = mylib\nversions = 1\nmodule = mylib/a.py|mylib/b.pyc\n"
               "function = f\ntext = t\nwhat = w\nfix = x\n",
         ":13: [r]: module 'mylib/b.pyc' is not a .py file"},
        {"[r]\npackage = mylib\nversions = 1\nmodule = otherlib/a.py\nfunction = f\n"
         "text = t\nwhat = w\nfix = x\n",
         ":4: [r]: module 'otherlib/a.py' is not in package 'mylib' (its first folder is not "
         "mylib)"},
        {"[r]\npackage = mylib\nversions = 1\nmodule = mylibx/a.py\nfunction = f\n"
         "text = t\nwhat = w\nfix = x\n",
         ":4: [r]: module 'mylibx/a.py' is not in package 'mylib' (its first folder is not "
         "mylib)"},
        {"[r]\npackage = mylib\nversions = 1\nmodule = mylib/a.py\nfunction = f||g\n"
         "text = t\nwhat = w\nfix = x\n",
         ":5: [r]: function: an empty alternative ('a||b', or '|' at an end)"},
        {"[r]\npackage = mylib\nversions = 1\nmodule = mylib/a.py\nfunction = f\n"
         "text = t|\nwhat = w\nfix = x\n",
         ":6: [r]: text: an empty alternative ('a||b', or '|' at an end)"},
        {ROW_A "where = |Loop(\n",
         ":9: [mylib.step_check]: where: an empty alternative ('a||b', or '|' at an end)"},
        {ROW_A "scenario = log-evry\n",
         ":9: [mylib.step_check]: unknown scenario 'log-evry'; did you mean 'log-every'?"},
        {ROW_A "text\r= x\n", ":9: carriage return inside a line"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = load(cases[i].text);
        if (strcmp(got, cases[i].error))
            fail_msg("case %zu: got '%s', want '%s'", i, got, cases[i].error);
    }
}

static void long_lines_and_nul_bytes(void **state)
{
    (void)state;
    char text[1024];
    snprintf(text, sizeof text, "%swhat = %0300d\n", ROW_A, 0);
    assert_string_equal(load(text), ":9: line longer than 199 bytes");
    static const char nul[] = "[r]\npackage = a\0b\n";
    err[0] = '\0';
    assert_int_equal(sb_fw_file_load(write_bytes(nul, sizeof nul - 1), &rows, &n, err, sizeof err),
                     -1);
    assert_string_equal(err + strlen(path), ":2: NUL byte");
}

static void not_a_file(void **state)
{
    (void)state;
    char fifo[160], want[400];
    snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    /* opened without blocking: no writer, and it returns at once */
    assert_int_equal(sb_fw_file_load(fifo, &rows, &n, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: not a regular file", fifo);
    assert_string_equal(err, want);
    assert_int_equal(sb_fw_file_load(tmpdir, &rows, &n, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: is a directory", tmpdir);
    assert_string_equal(err, want);
    snprintf(fifo, sizeof fifo, "%s/missing.ini", tmpdir);
    assert_int_equal(sb_fw_file_load(fifo, &rows, &n, err, sizeof err), -1);
    snprintf(want, sizeof want, "%s: cannot open: No such file or directory", fifo);
    assert_string_equal(err, want);
}

/* The checks alone, as the built-in table is held to them. */
static void row_problems(void **state)
{
    (void)state;
    sb_fw_row r = {.id = "pl.x",
                   .package = "pytorch-lightning",
                   .versions = "2.5",
                   .module = "pytorch_lightning/loops/fit.py|pytorch-lightning/x.py",
                   .func = "run",
                   .text = "x.item()",
                   .what = "w",
                   .fix = "f",
                   .caveat = "",
                   .removes = 1};
    assert_null(sb_fw_row_problem(&r));
    r.module = "pytorch-lightning.py";
    assert_null(sb_fw_row_problem(&r)); /* a single-file package */
    r.module = "lightning/pytorch/loops/fit.py";
    assert_non_null(sb_fw_row_problem(&r));
    r.module = "/pytorch_lightning/loops/fit.py";
    assert_non_null(sb_fw_row_problem(&r));
    r.module = "pytorch_lightning/loops/fit.py";
    r.scenario = "readback";
    assert_null(sb_fw_row_problem(&r));
    r.removes = 2;
    assert_string_equal(sb_fw_row_problem(&r), "removes is neither 0 nor 1");
    r.removes = 0;
    r.id = "pl/x";
    assert_string_equal(sb_fw_row_problem(&r),
                        "the id may hold only letters, digits, '.', '_' and '-'");
    r.id = "pl.x";
    r.what = NULL;
    assert_string_equal(sb_fw_row_problem(&r), "no what (what = ... is required)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(good_file, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(bad_files, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(long_lines_and_nul_bytes, make_tmpdir, remove_tmpdir),
        cmocka_unit_test_setup_teardown(not_a_file, make_tmpdir, remove_tmpdir),
        cmocka_unit_test(row_problems),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
