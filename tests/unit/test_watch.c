/* The injection library's API callback (inject/watch.c) over the real blocks
 * (blocks.c): which calls are watched, and what the callback works out for a call in each mode.
 * With a record file (syncbench audit) every call gets its line; with only the in-process API's
 * blocks open (python/syncbench) a call that does not block is only counted: no NVTX ranges, no
 * stacks, no line. The counts and the kept lines are the same either way. CUPTI, the record
 * file, the ranges and the stack tables are stood in for here. */
#include "cmocka_all.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h> /* with the calls' parameter blocks (generated_cuda_runtime_api_meta.h) */

#include "inject/blocks.h"
#include "inject/out.h"
#include "inject/pyframes.h"
#include "inject/ranges.h"
#include "inject/stackreuse.h"
#include "inject/stacks.h"
#include "inject/watch.h"
#include "model/model.h"

/* ---- stand-ins, each counting its calls ---- */

static struct {
    int recording;                                    /* a record file is open */
    int lines, ranges, stacks, stack_ids, py, py_ids; /* calls made */
    long py_stack;      /* the Python stack id given (0: 7; -1: no Python stack) */
    long stack_walked;  /* the native stack id a walk gives (0: 3) */
    CUcontext context;  /* the calls' context */
    int context_asks;   /* cuptiGetContextId's calls */
    char file[1 << 16]; /* the lines written to the record file */
    size_t file_len;
} fake;

/* One fixed clock: every line's times are the same from run to run. */
CUptiResult CUPTIAPI cuptiGetTimestamp(uint64_t *timestamp)
{
    *timestamp = 1000;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiGetContextId(CUcontext context, uint32_t *contextId)
{
    fake.context_asks++;
    *contextId = (uint32_t)(uintptr_t)context;
    return CUPTI_SUCCESS;
}

/* A few ids of each domain, named as CUPTI names them; the others are unknown. */
static const char *const runtime_names[] = {"cudaStreamSynchronize_v3020",
                                            "cudaMemcpyAsync_ptsz_v7000",
                                            "cudaLaunchKernel_v7000",
                                            "cudaMemsetAsync_v3020",
                                            "cudaFree_v3020",
                                            "cudaGetDevice_v3020"};
static const char *const driver_names[] = {"cuMemcpyDtoH_v2", "cuMemsetD8_v2", "cuMemsetD8Async",
                                           "cuLaunchKernel"};
static int enabled;

CUptiResult CUPTIAPI cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
                                          const char **name)
{
    const char *const *names = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? runtime_names : driver_names;
    size_t n = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? sizeof runtime_names / sizeof *runtime_names
                                                     : sizeof driver_names / sizeof *driver_names;
    if (cbid < 1 || cbid > n)
        return CUPTI_ERROR_INVALID_PARAMETER;
    *name = names[cbid - 1];
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                         CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    (void)subscriber, (void)domain, (void)cbid;
    enabled += enable ? 1 : -1;
    return CUPTI_SUCCESS;
}

int sba_out_recording(void)
{
    return fake.recording;
}

void sba_out_line(const char *line, size_t len)
{
    fake.lines++;
    assert_true(fake.file_len + len + 1 <= sizeof fake.file);
    memcpy(fake.file + fake.file_len, line, len);
    fake.file[fake.file_len + len] = '\n';
    fake.file_len += len + 1;
}

size_t sba_ranges_json(char *buf, size_t n)
{
    fake.ranges++;
    return (size_t)snprintf(buf, n, "[[1,\"step\"]]");
}

int sba_stack_capture(void **pcs)
{
    fake.stacks++;
    pcs[0] = (void *)0x1000;
    return 1;
}

long sba_stack_id(void *const *pcs, int n)
{
    (void)pcs;
    fake.stack_ids++;
    return n > 0 ? (fake.stack_walked ? fake.stack_walked : 3) : -1;
}

char *sba_stack_line(long id)
{
    char buf[64];
    snprintf(buf, sizeof buf, "{\"t\":\"stack\",\"id\":%ld,\"frames\":[]}", id);
    return strdup(buf);
}

long sba_py_stack_here(void)
{
    fake.py++;
    fake.py_ids++;
    return fake.py_stack ? fake.py_stack : 7;
}

char *sba_py_stack_line(long id)
{
    char buf[64];
    snprintf(buf, sizeof buf, "{\"t\":\"pystack\",\"id\":%ld,\"frames\":[]}", id);
    return strdup(buf);
}

/* ---- the calls ---- */

static void call(CUpti_CallbackDomain dom, CUpti_CallbackId cbid, const char *name,
                 const void *params, uint32_t corr)
{
    static int ok = 0; /* cudaSuccess */
    CUpti_CallbackData d = {.functionName = name,
                            .functionParams = params,
                            .functionReturnValue = &ok,
                            .correlationId = corr,
                            .context = fake.context};
    d.callbackSite = CUPTI_API_ENTER;
    sba_watch_callback(dom, cbid, &d);
    d.callbackSite = CUPTI_API_EXIT;
    sba_watch_callback(dom, cbid, &d);
}

#define RT CUPTI_CB_DOMAIN_RUNTIME_API
#define CBID(name) CUPTI_RUNTIME_TRACE_CBID_##name

static char host_buf[64], dev_buf[64]; /* the copies' ends, never touched */

/* Three blocking calls among seven: a poll, an allocation, an async copy whose host memory is
 * not known (no driver here) and a device-to-device copy block nothing. */
enum { CALLS = 7, BLOCKING = 3 };
static void the_calls(void)
{
    void *p = NULL;
    cudaMalloc_v3020_params malloc_params = {&p, 64};
    cudaFree_v3020_params free_params = {dev_buf};
    cudaMemcpy_v3020_params dtoh = {host_buf, dev_buf, 4, cudaMemcpyDeviceToHost};
    cudaMemcpy_v3020_params dtod = {dev_buf, dev_buf + 8, 4, cudaMemcpyDeviceToDevice};
    cudaMemcpyAsync_v3020_params async = {host_buf, dev_buf, 4, cudaMemcpyDeviceToHost, NULL};
    call(RT, CBID(cudaStreamQuery_v3020), "cudaStreamQuery_v3020", NULL, 1);
    call(RT, CBID(cudaMalloc_v3020), "cudaMalloc_v3020", &malloc_params, 2);
    call(RT, CBID(cudaStreamSynchronize_v3020), "cudaStreamSynchronize_v3020", NULL, 3);
    call(RT, CBID(cudaMemcpyAsync_v3020), "cudaMemcpyAsync_v3020", &async, 4);
    call(RT, CBID(cudaMemcpy_v3020), "cudaMemcpy_v3020", &dtoh, 5);
    call(RT, CBID(cudaMemcpy_v3020), "cudaMemcpy_v3020", &dtod, 6);
    call(RT, CBID(cudaFree_v3020), "cudaFree_v3020", &free_params, 7);
}

static void check_counts(const long long *c)
{
    assert_int_equal(c[SB_AUDIT_POLL], 1);
    assert_int_equal(c[SB_AUDIT_SYNC_STREAM], 1);
    assert_int_equal(c[SB_AUDIT_COPY_SYNC], 1);
    assert_int_equal(c[SB_AUDIT_FREE], 1);
    assert_int_equal(c[SB_AUDIT_NONE], 3); /* the allocation, the async copy, the DtoD copy */
    long long all = 0;
    for (int k = 0; k < SB_AUDIT_NCLASS; k++)
        all += c[k];
    assert_int_equal(all, CALLS);
}

static int count_of(const char *text, const char *needle)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        n++;
    return n;
}

/* Block id closed: its counts and its text (malloc'd). */
static char *closed(int id, long long *c, size_t *len)
{
    char *text = NULL;
    assert_int_equal(sba_block_close(id, c, &text, len), 0);
    assert_non_null(text);
    return text;
}

/* The calls in a block of this thread: its counts and its text (malloc'd). */
static char *in_a_block(long long *c, size_t *len)
{
    int id = sba_block_open(0);
    assert_true(id >= 0);
    the_calls();
    return closed(id, c, len);
}

static void reset(int recording)
{
    memset(&fake, 0, sizeof fake);
    fake.recording = recording;
}

/* ---- the tests ---- */

static void watched_by_base_name(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int watched;
    } cases[] = {
        {"cudaMemcpyAsync_ptsz_v7000", 1},
        {"cudaMemcpy_ptds_v7000", 1},
        {"cuMemcpyDtoH_v2", 1},
        {"cudaStreamSynchronize_v3020", 1},
        {"cudaEventQuery_v3020", 1},
        {"cudaFree_v3020", 1},
        {"cuGraphInstantiateWithParams_ptsz", 1},
        {"cudaMemset_v3020", 1},
        {"cuMemsetD8_v2", 1},
        {"cudaMemsetAsync_v3020", 0},
        {"cuMemsetD8Async", 0},
        {"cudaLaunchKernel_v7000", 0},
        {"cudaGetDevice_v3020", 0},
        {"cudaStreamSynchronizeX_v3020", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        if (sba_watched(cases[i].name) != cases[i].watched)
            fail_msg("%s: watched %d, expected %d", cases[i].name, sba_watched(cases[i].name),
                     cases[i].watched);
    /* the stand-in's ids: three of six runtime names and two of four driver names */
    enabled = 0;
    assert_int_equal(sba_watch_enable(NULL, 1), 5);
    assert_int_equal(enabled, 5);
}

static void no_block_and_no_file_nothing_is_worked_out(void **state)
{
    (void)state;
    reset(0);
    the_calls();
    assert_int_equal(fake.lines + fake.ranges + fake.stacks + fake.stack_ids + fake.py, 0);
}

static void a_block_alone_works_out_the_blocking_calls_only(void **state)
{
    (void)state;
    reset(0);
    long long c[SB_AUDIT_NCLASS];
    size_t len = 0;
    char *text = in_a_block(c, &len);
    check_counts(c);
    /* ranges, stacks and Python stacks for the three blocking calls, none for the others */
    assert_int_equal(fake.ranges, BLOCKING);
    assert_int_equal(fake.stacks, BLOCKING);
    assert_int_equal(fake.stack_ids, BLOCKING);
    assert_int_equal(fake.py, BLOCKING);
    assert_int_equal(fake.py_ids, BLOCKING);
    assert_int_equal(fake.lines, 0);
    assert_int_equal(count_of(text, "\"t\":\"call\""), BLOCKING);
    assert_int_equal(count_of(text, "\"t\":\"stack\",\"id\":3,"), 1);
    assert_int_equal(count_of(text, "\"t\":\"pystack\",\"id\":7,"), 1);
    free(text);
}

/* Every line of the record file kept to the record table (record/schema.c), as a writer must:
 * its kind and fields declared, of their types, the required ones there. */
static void assert_lines_keep_to_the_table(const char *file)
{
    char why[256];
    int lines = 0;
    for (const char *s = file, *eol; (eol = strchr(s, '\n')); s = eol + 1, lines++)
        if (!sb_audit_record_conforms(s, (size_t)(eol - s), why, sizeof why))
            fail_msg("%.*s: %s", (int)(eol - s), s, why);
    assert_true(lines > 0);
}

static void a_record_file_gets_every_call_and_the_block_the_same(void **state)
{
    (void)state;
    reset(0);
    long long alone[SB_AUDIT_NCLASS];
    size_t alone_len = 0;
    char *alone_text = in_a_block(alone, &alone_len);

    reset(1);
    long long c[SB_AUDIT_NCLASS];
    size_t len = 0;
    char *text = in_a_block(c, &len);
    /* every call recorded whole, its stacks taken */
    assert_int_equal(fake.lines, CALLS);
    assert_int_equal(count_of(fake.file, "\"t\":\"call\""), CALLS);
    assert_int_equal(count_of(fake.file, "\"ranges\":[[1,\"step\"]]"), CALLS);
    assert_int_equal(fake.stacks, CALLS);
    assert_int_equal(fake.py, CALLS);
    assert_non_null(strstr(fake.file, "\"api\":\"cudaStreamQuery_v3020\""));
    assert_non_null(strstr(fake.file, "\"copy\":\"DtoD\""));
    assert_lines_keep_to_the_table(fake.file);
    /* the same counts, and the same kept lines, as with the block alone */
    assert_memory_equal(c, alone, sizeof c);
    assert_int_equal(len, alone_len);
    assert_string_equal(text, alone_text);
    free(text);
    free(alone_text);

    /* no block: the file alone */
    reset(1);
    the_calls();
    assert_int_equal(fake.lines, CALLS);
    assert_false(sba_blocks_watching());
}

static void a_call_inside_a_call_is_counted_once(void **state)
{
    (void)state;
    reset(0);
    int id = sba_block_open(0);
    static int ok = 0;
    cudaMemcpy_v3020_params dtoh = {host_buf, dev_buf, 4, cudaMemcpyDeviceToHost};
    CUpti_CallbackData rt = {
        .functionName = "cudaMemcpy_v3020", .functionParams = &dtoh, .functionReturnValue = &ok};
    rt.callbackSite = CUPTI_API_ENTER;
    sba_watch_callback(RT, CBID(cudaMemcpy_v3020), &rt);
    call(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2, "cuMemcpyDtoH_v2",
         NULL, 0); /* the driver's copy the runtime's makes: its parameters never read */
    rt.callbackSite = CUPTI_API_EXIT;
    sba_watch_callback(RT, CBID(cudaMemcpy_v3020), &rt);
    long long c[SB_AUDIT_NCLASS];
    size_t len = 0;
    char *text = closed(id, c, &len);
    assert_int_equal(c[SB_AUDIT_COPY_SYNC], 1);
    assert_int_equal(count_of(text, "\"api\":\"cudaMemcpy_v3020\""), 1);
    assert_null(strstr(text, "cuMemcpyDtoH"));
    free(text);
}

static void sync_call(uint32_t corr)
{
    call(RT, CBID(cudaStreamSynchronize_v3020), "cudaStreamSynchronize_v3020", NULL, corr);
}

/* A block of this thread, n stream syncs made in it: its id. */
static int block_with_syncs(int n)
{
    int id = sba_block_open(0);
    assert_true(id >= 0);
    for (int i = 0; i < n; i++)
        sync_call((uint32_t)i);
    return id;
}

/* A block keeps the lines of its first SBA_BLOCK_KEEP blocking calls: past them a blocking call
 * is counted with nothing worked out, until a block with room opens inside it. */
static void a_full_block_counts_without_stacks(void **state)
{
    (void)state;
    reset(0);
    const int more = 5;
    int outer = block_with_syncs(SBA_BLOCK_KEEP + more);
    assert_int_equal(fake.stacks, SBA_BLOCK_KEEP);
    assert_int_equal(fake.ranges, SBA_BLOCK_KEEP);
    assert_int_equal(fake.py, SBA_BLOCK_KEEP);
    /* a block opened inside the full one has room: the next call's line is worked out again */
    int inner = sba_block_open(0);
    assert_true(inner >= 0);
    sync_call(1000);
    assert_int_equal(fake.stacks, SBA_BLOCK_KEEP + 1);
    long long c[SB_AUDIT_NCLASS];
    size_t len = 0;
    char *text = closed(inner, c, &len);
    assert_int_equal(c[SB_AUDIT_SYNC_STREAM], 1);
    assert_int_equal(count_of(text, "\"t\":\"call\""), 1);
    free(text);
    text = closed(outer, c, &len);
    assert_int_equal(c[SB_AUDIT_SYNC_STREAM], SBA_BLOCK_KEEP + more + 1);
    assert_int_equal(count_of(text, "\"t\":\"call\""), SBA_BLOCK_KEEP);
    free(text);
}

/* Another thread's block with room keeps nothing of this thread's calls: it does not make a
 * call past this thread's full block work its line out. */
static pthread_barrier_t opened, done;

static void *open_a_block_of_its_own(void *arg)
{
    (void)arg;
    int id = sba_block_open(0);
    pthread_barrier_wait(&opened);
    pthread_barrier_wait(&done);
    long long c[SB_AUDIT_NCLASS];
    assert_int_equal(sba_block_close(id, c, NULL, NULL), 0);
    assert_int_equal(c[SB_AUDIT_SYNC_STREAM], 0);
    return NULL;
}

static void another_threads_block_keeps_nothing_of_this_one(void **state)
{
    (void)state;
    reset(0);
    int mine = block_with_syncs(SBA_BLOCK_KEEP);
    pthread_t t;
    pthread_barrier_init(&opened, NULL, 2);
    pthread_barrier_init(&done, NULL, 2);
    assert_int_equal(pthread_create(&t, NULL, open_a_block_of_its_own, NULL), 0);
    pthread_barrier_wait(&opened);
    sync_call(9999);
    assert_int_equal(fake.stacks, SBA_BLOCK_KEEP);
    pthread_barrier_wait(&done);
    pthread_join(t, NULL);
    pthread_barrier_destroy(&opened);
    pthread_barrier_destroy(&done);
    long long c[SB_AUDIT_NCLASS];
    assert_int_equal(sba_block_close(mine, c, NULL, NULL), 0);
    assert_int_equal(c[SB_AUDIT_SYNC_STREAM], SBA_BLOCK_KEEP + 1);
}

/* A context's id is asked of CUPTI once per thread, again once a context has gone (its
 * address may come back as another context's). */
static void a_context_id_is_asked_once_until_a_context_goes(void **state)
{
    (void)state;
    reset(1);
    fake.context = (CUcontext)(uintptr_t)0x10;
    for (int i = 0; i < 3; i++) /* the going not told (inject.c could not enable it) */
        sync_call((uint32_t)i);
    assert_int_equal(fake.context_asks, 3);
    reset(1);
    fake.context = (CUcontext)(uintptr_t)0x10;
    sba_watch_track_contexts();
    for (int i = 0; i < 5; i++)
        sync_call((uint32_t)i);
    assert_int_equal(fake.context_asks, 1);
    sba_watch_context_gone();
    sync_call(6);
    assert_int_equal(fake.context_asks, 2);
    fake.context = (CUcontext)(uintptr_t)0x20;
    sync_call(7);
    assert_int_equal(fake.context_asks, 3);
    fake.file[fake.file_len] = 0;
    assert_int_equal(count_of(fake.file, "\"ctx\":16,"), 6);
    assert_int_equal(count_of(fake.file, "\"ctx\":32,"), 1);
}

/* ---- a Python stack's native stack, reused (stackreuse.c); these run last: they turn reuse on */

/* n stream syncs under Python stack py: the walks they made; the last line's stack id in *id. */
static int walks_of_syncs(long py, int n, long *id)
{
    fake.py_stack = py;
    int before = fake.stacks;
    fake.file_len = 0;
    for (int i = 0; i < n; i++)
        sync_call((uint32_t)i);
    fake.file[fake.file_len] = 0;
    char *s = NULL, *p = fake.file;
    while ((p = strstr(p, "\"stack\":")))
        s = p++;
    *id = s ? strtol(s + 8, NULL, 10) : -9;
    return fake.stacks - before;
}

static void reuse_on(const char *value)
{
    if (value)
        setenv("SYNCBENCH_STACK_REUSE", value, 1);
    else
        unsetenv("SYNCBENCH_STACK_REUSE");
    sba_stackreuse_init();
}

/* Three walks that agree, then one walk in 64 calls: 67 calls walk 4 times, and every line
 * names the walked stack. */
static void a_python_stacks_native_stack_is_reused_once_walks_agree(void **state)
{
    (void)state;
    reset(1);
    reuse_on(NULL);
    long id;
    assert_int_equal(walks_of_syncs(11, 3, &id), 3);
    assert_int_equal(walks_of_syncs(11, 63, &id), 0);
    assert_int_equal(count_of(fake.file, "\"stack\":3,"), 63);
    assert_int_equal(walks_of_syncs(11, 1, &id), 1); /* the 64th since the last walk */
    assert_int_equal(count_of(fake.file, "\"stack\":3,"), 1);
}

/* One check that differs starts the count again (a path that changed once); a second one
 * means several paths: every call walks from then on. */
static void a_second_check_that_differs_walks_every_call_after(void **state)
{
    (void)state;
    reset(1);
    reuse_on(NULL);
    long id;
    assert_int_equal(walks_of_syncs(12, 66, &id), 3);
    fake.stack_walked = 5;
    assert_int_equal(walks_of_syncs(12, 1, &id), 1); /* the check: another stack */
    assert_int_equal(id, 5);
    assert_int_equal(walks_of_syncs(12, 2, &id), 2); /* counted again: 5 twice more */
    assert_int_equal(walks_of_syncs(12, 63, &id), 0);
    assert_int_equal(id, 5);
    fake.stack_walked = 3;
    assert_int_equal(walks_of_syncs(12, 1, &id), 1); /* the second check that differs */
    assert_int_equal(walks_of_syncs(12, 10, &id), 10);
    assert_int_equal(id, 3);
}

/* A stack is reused for the API whose walks agreed: another API under the same Python stack
 * (a caching allocator's free under a .item() line) is walked at every call, and the first's
 * stays reused. */
static void another_api_under_the_python_stack_walks(void **state)
{
    (void)state;
    reset(1);
    reuse_on(NULL);
    long id;
    assert_int_equal(walks_of_syncs(16, 3, &id), 3);
    cudaFree_v3020_params free_params = {NULL};
    int before = fake.stacks;
    fake.stack_walked = 6;
    for (int i = 0; i < 5; i++)
        call(RT, CBID(cudaFree_v3020), "cudaFree_v3020", &free_params, 100);
    assert_int_equal(fake.stacks - before, 5);
    fake.stack_walked = 0;
    assert_int_equal(walks_of_syncs(16, 10, &id), 0);
    assert_int_equal(id, 3);
}

/* Initialized again (the in-process API keeps the stacks' lines from now on), reuse forgets
 * what it saw: three walks again. */
static void reuse_forgets_when_initialized_again(void **state)
{
    (void)state;
    reset(1);
    reuse_on(NULL);
    long id;
    assert_int_equal(walks_of_syncs(17, 10, &id), 3);
    reuse_on(NULL);
    assert_int_equal(walks_of_syncs(17, 10, &id), 3);
}

/* Walks that disagree before the third are never reused; no Python stack, or
 * SYNCBENCH_STACK_REUSE=0: every call walks. */
static void without_agreement_python_or_reuse_every_call_walks(void **state)
{
    (void)state;
    reset(1);
    reuse_on(NULL);
    long id;
    for (int i = 0; i < 10; i++) {
        fake.stack_walked = 3 + i % 2;
        assert_int_equal(walks_of_syncs(13, 1, &id), 1);
        assert_int_equal(id, 3 + i % 2);
    }
    fake.stack_walked = 0;
    assert_int_equal(walks_of_syncs(-1, 20, &id), 20);
    reuse_on("0");
    assert_int_equal(walks_of_syncs(14, 20, &id), 20);
    reuse_on(NULL);
    assert_int_equal(walks_of_syncs(15, 20, &id), 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(watched_by_base_name),
        cmocka_unit_test(no_block_and_no_file_nothing_is_worked_out),
        cmocka_unit_test(a_block_alone_works_out_the_blocking_calls_only),
        cmocka_unit_test(a_record_file_gets_every_call_and_the_block_the_same),
        cmocka_unit_test(a_call_inside_a_call_is_counted_once),
        cmocka_unit_test(a_full_block_counts_without_stacks),
        cmocka_unit_test(another_threads_block_keeps_nothing_of_this_one),
        cmocka_unit_test(a_context_id_is_asked_once_until_a_context_goes),
        cmocka_unit_test(a_python_stacks_native_stack_is_reused_once_walks_agree),
        cmocka_unit_test(a_second_check_that_differs_walks_every_call_after),
        cmocka_unit_test(another_api_under_the_python_stack_walks),
        cmocka_unit_test(reuse_forgets_when_initialized_again),
        cmocka_unit_test(without_agreement_python_or_reuse_every_call_walks),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
