/* The output registry (src/outputs/formats.h) and the commands' option tables held to each
 * other: every format a command writes has its --OPTION PATH in that command's table, and every
 * PATH option of an output group is a format of the registry, so that a format is one row and
 * its writer, never a path kept apart. */
#include "cmocka_all.h"

#include <string.h>

#include "cli/audit_args.h"
#include "cli/cli.h"
#include "cli/compare_args.h"
#include "outputs/formats.h"

enum { RUN, AUDIT, COMPARE };

static int writes(const sb_output_format *f, int kind)
{
    return kind == RUN ? f->run != NULL : kind == AUDIT ? f->audit != NULL : f->compare != NULL;
}

static const sb_optdef *table_of(int kind)
{
    return kind == RUN     ? sb_cli_optdefs()
           : kind == AUDIT ? sb_audit_optdefs()
                           : sb_compare_optdefs();
}

/* The PATH options that are not outputs: the files compare reads. */
static int is_input(const char *name)
{
    return !strcmp(name, "base-samples") || !strcmp(name, "current-samples");
}

static void every_format_has_its_option(void **state)
{
    (void)state;
    for (int kind = RUN; kind <= COMPARE; kind++)
        for (const sb_output_format *f = sb_output_formats; f->name; f++) {
            if (!writes(f, kind))
                continue;
            const sb_optdef *d = sb_optdef_by_name(table_of(kind), f->option);
            assert_non_null(d);
            assert_int_equal(d->type, SB_OPT_TEXT);
            assert_string_equal(d->arg, "PATH");
        }
}

static void every_path_option_is_a_format(void **state)
{
    (void)state;
    for (int kind = RUN; kind <= COMPARE; kind++)
        for (const sb_optdef *d = table_of(kind); d->name; d++) {
            if (d->type != SB_OPT_TEXT || !d->arg || strcmp(d->arg, "PATH") || is_input(d->name))
                continue;
            const sb_output_format *f = sb_output_formats;
            while (f->name && strcmp(f->option, d->name))
                f++;
            if (!f->name)
                fail_msg("--%s PATH is no format of the registry", d->name);
            if (!writes(f, kind))
                fail_msg("--%s: the registry's row has no writer for this command", d->name);
        }
}

static void one_row_per_option(void **state)
{
    (void)state;
    int n = sb_output_formats_count();
    assert_true(n <= SB_OUTPUT_FORMATS_MAX);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++)
            assert_string_not_equal(sb_output_formats[i].option, sb_output_formats[j].option);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_format_has_its_option),
        cmocka_unit_test(every_path_option_is_a_format),
        cmocka_unit_test(one_row_per_option),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
