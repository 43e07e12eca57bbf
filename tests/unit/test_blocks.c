/* The injection library's blocks (inject/blocks.c), what python/syncbench's
 * no_syncs() and count_syncs() stand on: per-thread and all-thread blocks, nesting, counts by
 * class, the record lines kept (and the stack records they refer to), limits. */
#include "cmocka_all.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "inject/blocks.h"

/* The stack tables' records (stacks.c, pyframes.c), stood in for. */
char *sba_stack_line(long id)
{
    char buf[64];
    snprintf(buf, sizeof buf, "{\"t\":\"stack\",\"id\":%ld,\"frames\":[]}", id);
    return strdup(buf);
}

char *sba_py_stack_line(long id)
{
    char buf[64];
    snprintf(buf, sizeof buf, "{\"t\":\"pystack\",\"id\":%ld,\"frames\":[]}", id);
    return strdup(buf);
}

static void add(sb_audit_class cls, long stack, long py)
{
    char line[96];
    int n =
        snprintf(line, sizeof line, "{\"t\":\"call\",\"cls\":%d,\"stack\":%ld}", (int)cls, stack);
    sba_blocks_add(cls, line, (size_t)n, stack, py);
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

static void *add_one_stream_sync(void *arg)
{
    (void)arg;
    add(SB_AUDIT_SYNC_STREAM, -1, -1);
    return NULL;
}

static void on_other_thread(void *(*fn)(void *), void *arg)
{
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fn, arg), 0);
    assert_int_equal(pthread_join(t, NULL), 0);
}

static void counts_by_class_and_keeps_blocking_lines_only(void **state)
{
    (void)state;
    assert_false(sba_blocks_watching());
    int id = sba_block_open(0);
    assert_true(id >= 0);
    assert_true(sba_blocks_watching());
    add(SB_AUDIT_SYNC_DEVICE, 3, 7);
    add(SB_AUDIT_POLL, 4, -1);
    add(SB_AUDIT_NONE, 4, -1);
    add(SB_AUDIT_COPY_PAGEABLE, 3, -1);
    long long c[SB_AUDIT_NCLASS];
    assert_int_equal(sba_block_counts(id, c), 0);
    assert_int_equal(c[SB_AUDIT_SYNC_DEVICE], 1);
    assert_int_equal(c[SB_AUDIT_POLL], 1);
    assert_int_equal(c[SB_AUDIT_NONE], 1);
    assert_int_equal(c[SB_AUDIT_COPY_PAGEABLE], 1);
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(sba_block_close(id, c, &text, &len), 0);
    assert_false(sba_blocks_watching());
    assert_non_null(text);
    assert_int_equal(strlen(text), len);
    /* the two blocking calls, the stack they share once, the Python stack of the first */
    assert_int_equal(count_of(text, "\"t\":\"call\""), 2);
    assert_int_equal(count_of(text, "\"t\":\"stack\",\"id\":3,"), 1);
    assert_int_equal(count_of(text, "\"id\":4,"), 0); /* only the poll and the none used it */
    assert_int_equal(count_of(text, "\"t\":\"pystack\",\"id\":7,"), 1);
    assert_true(strstr(text, "\"t\":\"stack\"") < strstr(text, "\"t\":\"call\""));
    assert_int_equal(text[len - 1], '\n');
    free(text);
    /* closed: no longer known */
    assert_int_equal(sba_block_counts(id, c), -1);
    assert_int_equal(sba_block_close(id, c, NULL, NULL), -1);
}

static void a_block_sees_its_own_thread_unless_all_threads(void **state)
{
    (void)state;
    int mine = sba_block_open(0), all = sba_block_open(1);
    assert_true(mine >= 0 && all >= 0 && mine != all);
    on_other_thread(add_one_stream_sync, NULL);
    add(SB_AUDIT_SYNC_EVENT, -1, -1);
    long long c[SB_AUDIT_NCLASS];
    assert_int_equal(sba_block_close(mine, c, NULL, NULL), 0);
    assert_int_equal(c[SB_AUDIT_SYNC_STREAM], 0);
    assert_int_equal(c[SB_AUDIT_SYNC_EVENT], 1);
    assert_int_equal(sba_block_close(all, c, NULL, NULL), 0);
    assert_int_equal(c[SB_AUDIT_SYNC_STREAM], 1);
    assert_int_equal(c[SB_AUDIT_SYNC_EVENT], 1);
}

static void *close_from_here(void *arg)
{
    int *ids = arg;
    long long c[SB_AUDIT_NCLASS];
    ids[2] = sba_block_close(ids[0], c, NULL, NULL); /* another thread's own block */
    ids[3] = sba_block_close(ids[1], c, NULL, NULL); /* an all-thread block */
    return NULL;
}

static void another_thread_cannot_close_a_threads_block(void **state)
{
    (void)state;
    int ids[4] = {sba_block_open(0), sba_block_open(1), 99, 99};
    on_other_thread(close_from_here, ids);
    assert_int_equal(ids[2], -1);
    assert_int_equal(ids[3], 0);
    long long c[SB_AUDIT_NCLASS];
    assert_int_equal(sba_block_close(ids[0], c, NULL, NULL), 0);
    assert_false(sba_blocks_watching());
}

static void a_stale_id_never_reaches_the_next_block(void **state)
{
    (void)state;
    long long c[SB_AUDIT_NCLASS];
    int first = sba_block_open(0);
    assert_int_equal(sba_block_close(first, c, NULL, NULL), 0);
    int second = sba_block_open(0); /* the same slot, the next generation */
    assert_int_not_equal(second, first);
    assert_int_equal(sba_block_close(first, c, NULL, NULL), -1);
    assert_int_equal(sba_block_counts(first, c), -1);
    add(SB_AUDIT_SYNC_DEVICE, -1, -1);
    assert_int_equal(sba_block_close(second, c, NULL, NULL), 0);
    assert_int_equal(c[SB_AUDIT_SYNC_DEVICE], 1);
    assert_false(sba_blocks_watching());
}

static void nested_blocks_each_count(void **state)
{
    (void)state;
    int outer = sba_block_open(0);
    add(SB_AUDIT_FREE, -1, -1);
    int inner = sba_block_open(0);
    add(SB_AUDIT_FREE, -1, -1);
    long long c[SB_AUDIT_NCLASS];
    assert_int_equal(sba_block_close(inner, c, NULL, NULL), 0);
    assert_int_equal(c[SB_AUDIT_FREE], 1);
    add(SB_AUDIT_FREE, -1, -1);
    assert_int_equal(sba_block_close(outer, c, NULL, NULL), 0);
    assert_int_equal(c[SB_AUDIT_FREE], 3);
}

static void keeps_the_first_256_lines_and_counts_all(void **state)
{
    (void)state;
    int id = sba_block_open(0);
    for (int i = 0; i < 300; i++)
        add(SB_AUDIT_COPY_SYNC, i % 5, -1);
    long long c[SB_AUDIT_NCLASS];
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(sba_block_close(id, c, &text, &len), 0);
    assert_int_equal(c[SB_AUDIT_COPY_SYNC], 300);
    assert_int_equal(count_of(text, "\"t\":\"call\""), 256);
    assert_int_equal(count_of(text, "\"t\":\"stack\""), 5);
    free(text);
}

/* Lines of every size, one longer than the buffer's first 4096 bytes, as the callback's lines
 * can be (up to 64 KiB): each kept whole, in order, the buffer growing under them. */
static void kept_lines_come_back_whole_as_the_buffer_grows(void **state)
{
    (void)state;
    static const size_t sizes[] = {1, 4094, 4095, 3, 9000, 64 << 10, 17};
    enum { N = sizeof sizes / sizeof sizes[0] };
    char *want = malloc(N * ((64 << 10) + 1) + 1);
    assert_non_null(want);
    size_t wlen = 0;
    int id = sba_block_open(0);
    for (int i = 0; i < N; i++) {
        char *line = malloc(sizes[i]);
        assert_non_null(line);
        for (size_t k = 0; k < sizes[i]; k++)
            line[k] = (char)('a' + (k + (size_t)i) % 26);
        sba_blocks_add(SB_AUDIT_SYNC_DEVICE, line, sizes[i], -1, -1);
        memcpy(want + wlen, line, sizes[i]);
        want[wlen + sizes[i]] = '\n';
        wlen += sizes[i] + 1;
        free(line);
    }
    long long c[SB_AUDIT_NCLASS];
    char *text = NULL;
    size_t len = 0;
    assert_int_equal(sba_block_close(id, c, &text, &len), 0);
    assert_int_equal(c[SB_AUDIT_SYNC_DEVICE], N);
    assert_non_null(text);
    assert_int_equal(len, wlen); /* no stack records: the lines alone */
    assert_memory_equal(text, want, wlen);
    assert_int_equal(text[len], '\0');
    free(text);
    free(want);
}

static void a_block_without_blocking_calls_gives_no_text(void **state)
{
    (void)state;
    int id = sba_block_open(0);
    add(SB_AUDIT_POLL, -1, -1);
    long long c[SB_AUDIT_NCLASS];
    char *text = (char *)1;
    size_t len = 7;
    assert_int_equal(sba_block_close(id, c, &text, &len), 0);
    assert_null(text);
    assert_int_equal(len, 0);
    assert_int_equal(c[SB_AUDIT_POLL], 1);
}

static void at_most_the_limit_open_and_slots_come_back(void **state)
{
    (void)state;
    static int ids[SBA_MAX_BLOCKS];
    for (int i = 0; i < SBA_MAX_BLOCKS; i++)
        assert_true((ids[i] = sba_block_open(i % 2)) >= 0);
    assert_int_equal(sba_block_open(0), -1);
    long long c[SB_AUDIT_NCLASS];
    for (int i = 0; i < SBA_MAX_BLOCKS; i++)
        assert_int_equal(sba_block_close(ids[i], c, NULL, NULL), 0);
    assert_false(sba_blocks_watching());
    /* 10000 blocks in a loop, each with a kept line: every one closes (valgrind: no leak) */
    for (int i = 0; i < 10000; i++) {
        int id = sba_block_open(0);
        assert_true(id >= 0);
        add(SB_AUDIT_SYNC_DEVICE, 1, 2);
        char *text = NULL;
        size_t len = 0;
        assert_int_equal(sba_block_close(id, c, &text, &len), 0);
        assert_int_equal(c[SB_AUDIT_SYNC_DEVICE], 1);
        free(text);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_by_class_and_keeps_blocking_lines_only),
        cmocka_unit_test(a_block_sees_its_own_thread_unless_all_threads),
        cmocka_unit_test(another_thread_cannot_close_a_threads_block),
        cmocka_unit_test(a_stale_id_never_reaches_the_next_block),
        cmocka_unit_test(nested_blocks_each_count),
        cmocka_unit_test(keeps_the_first_256_lines_and_counts_all),
        cmocka_unit_test(kept_lines_come_back_whole_as_the_buffer_grows),
        cmocka_unit_test(a_block_without_blocking_calls_gives_no_text),
        cmocka_unit_test(at_most_the_limit_open_and_slots_come_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
