/* A Python stack's native stack reused (inject/stackreuse.c) over the real stack table
 * (inject/stacks.c): a stack walked before the in-process API keeps the stacks' lines is walked
 * again once it does, so that a block that names it finds its line (blocks.c repeats the lines
 * its calls refer to). The record file is stood in for. */
#include "cmocka_all.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/out.h"
#include "inject/stackreuse.h"
#include "inject/stacks.h"

static int lines_written;

void sba_out_line(const char *line, size_t len)
{
    (void)line, (void)len;
    lines_written++;
}

char *sba_py_stack_line(long id)
{
    (void)id;
    return NULL;
}

static int walks;

/* The native stack id of a call under Python stack py, as watch.c takes it. */
static __attribute__((noinline)) long stack_of_call(long py)
{
    long id = sba_stackreuse_lookup(py, 1);
    if (id != -2)
        return id;
    void *pcs[SBA_MAX_FRAMES];
    id = sba_stack_id(pcs, sba_stack_capture(pcs));
    sba_stackreuse_seen(py, 1, id);
    walks++;
    return id;
}

static void a_stack_reused_before_lines_are_kept_is_walked_again(void **state)
{
    (void)state;
    unsetenv("SYNCBENCH_STACK_REUSE");
    sba_stacks_init(8);
    long ids[7];
    int walked[7];
    char *line_then = NULL;
    for (int i = 0; i < 7; i++) { /* one call site: one native stack */
        if (i == 5) {
            line_then = sba_stack_line(ids[0]);
            sba_stacks_keep_lines();
        }
        ids[i] = stack_of_call(5);
        walked[i] = walks;
    }
    assert_true(ids[0] >= 0);
    for (int i = 1; i < 7; i++)
        assert_int_equal(ids[i], ids[0]);
    assert_int_equal(walked[4], 3);     /* three walks, then reused */
    assert_null(line_then);             /* not kept: no in-process API yet */
    assert_int_equal(walked[6], 5);     /* walked again: reuse forgot what it saw */
    assert_int_equal(lines_written, 1); /* the stack's record, once */
    char *line = sba_stack_line(ids[0]);
    assert_non_null(line);
    char want[32];
    snprintf(want, sizeof want, "\"id\":%ld,", ids[0]);
    assert_non_null(strstr(line, want));
    free(line);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_stack_reused_before_lines_are_kept_is_walked_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
