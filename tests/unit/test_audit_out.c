/* The audit's reports (CSV, JSON, trace) and reading a folder of streams. */
#include "audit_stream.h"

#include <jansson.h>
#include <math.h>

#include "tmpdir.h"

/* Process `pid`: two stream syncs (1 and 2 us) in range "a,b" at site train!step, a kernel
 * launched by a trace-mode API record, a pageable async copy, an NVTX range. */
static void proc_stream(stream *s, int pid, int rank)
{
    stream_open(s);
    proc_line(s, pid, rank);
    line(s, "{\"t\":\"stack\",\"id\":1,\"frames\":[[\"/app/train\",\"step\",16,0]]}");
    line(s, "{\"t\":\"range\",\"tid\":1,\"id\":1,\"name\":\"a,b\",\"start\":1000,\"end\":9000,"
            "\"depth\":0}");
    line(s, "{\"t\":\"api\",\"api\":\"cudaLaunchKernel_v7000\",\"dom\":\"rt\",\"tid\":1,"
            "\"corr\":5,\"start\":1500,\"end\":1600}");
    line(s, "{\"t\":\"kernel\",\"dev\":0,\"ctx\":1,\"stream\":7,\"corr\":5,\"start\":2000,"
            "\"end\":2500,\"name\":\"gemm<float>\"}");
    const char *fmt = "{\"t\":\"call\",\"api\":\"cudaStreamSynchronize_v3020\",\"dom\":\"rt\","
                      "\"tid\":1,\"ctx\":1,\"corr\":%d,\"start\":%d,\"end\":%d,"
                      "\"ranges\":[[1,\"a,b\"]],\"stack\":1}";
    line(s, fmt, 6, 3000, 4000);
    line(s, fmt, 7, 5000, 7000);
    line(s, "{\"t\":\"call\",\"api\":\"cudaMemcpyAsync_v3020\",\"dom\":\"rt\",\"tid\":1,"
            "\"ctx\":1,\"corr\":8,\"start\":7100,\"end\":7200,\"stack\":-1}");
    line(s, "{\"t\":\"copy\",\"dev\":0,\"ctx\":1,\"stream\":7,\"corr\":108,\"rcorr\":8,"
            "\"start\":7300,\"end\":7400,\"bytes\":64,\"kind\":\"DtoH\",\"src\":\"device\","
            "\"dst\":\"pageable\"}");
    end_line(s);
}

static sb_audit_run *two_procs(void)
{
    stream s;
    proc_stream(&s, 100, 0);
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    proc_stream(&s, 200, 1);
    load_into(run, &s, "proc-200.jsonl");
    sb_audit_set_wall(run, "torchrun train.py", 2.5, 1000000);
    analyze_default(run);
    return run;
}

static void csv(void **state)
{
    (void)state;
    sb_audit_run *run = two_procs();
    char *buf = csv_text(run);
    /* bubbles: the syncs end with the GPU idle until the copy at 7300: 4.3 + 2.3 us; the
     * copy call 0.2 us */
/* the rules' operation, fix and scenario for the two sites (no Python: columns empty) */
#define STREAM_SYNC                                                                                \
    "explicit sync: stream (cudaStreamSynchronize),let the GPU wait (cudaStreamWaitEvent); block " \
    "the host only where it needs the value,small-gemm"
#define PAGEABLE                                                                                   \
    "async copy with pageable host memory (it blocks),\"pin the host buffer (cudaHostAlloc, "      \
    ".pin_memory()) so the copy runs asynchronously\",copy"
    const char *want =
        "pid,rank,local_rank,group,class,range,site,count,blocked_total_us,blocked_median_us,"
        "blocked_p95_us,bubble_total_us,py_file,py_line,py_function,source,operation,fix,"
        "scenario,native_site,site_save_us,via_file,via_line,via_function,via_source,library,"
        "phase,site_from,waiter_tid,via_save_us,framework,fix_at,gpu_window\n"
        /* site_save_us empty: these streams record no launches (no replay); no Python: no via,
         * the site a native frame */
        "100,0,0,explicit,sync-stream,\"a,b\",train!step,2,3,1.5,1.95,6.6,,,,," STREAM_SYNC
        ",train!step,,,,,,,run,native,,,,,\n"
        "100,0,0,implicit,copy-pageable,,?,1,0.1,0.1,0.1,0.2,,,,," PAGEABLE
        ",?,,,,,,,run,native,,,,,\n"
        "200,1,1,explicit,sync-stream,\"a,b\",train!step,2,3,1.5,1.95,6.6,,,,," STREAM_SYNC
        ",train!step,,,,,,,run,native,,,,,\n"
        "200,1,1,implicit,copy-pageable,,?,1,0.1,0.1,0.1,0.2,,,,," PAGEABLE
        ",?,,,,,,,run,native,,,,,\n";
    assert_string_equal(buf, want);
    free(buf);
    audit_free(run);
}

static void json(void **state)
{
    (void)state;
    sb_audit_run *run = two_procs();
    sb_env env;
    memset(&env, 0, sizeof env);
    strcpy(env.host, "box");
    strcpy(env.gpu, "NVIDIA H100");
    sb_audit_opts o = opts_of(run);
    o.max_syncs = 1;
    o.range = "a,b";
    json_t *root = report_json(run, AS_JSON, &o, &env);
    assert_string_equal(json_string_value(json_object_get(root, "tool")), "syncbench audit");
    assert_int_equal(json_integer_value(json_object_get(root, "format")), 1);
    json_t *e = json_object_get(root, "environment");
    assert_string_equal(json_string_value(json_object_get(e, "host")), "box");
    assert_string_equal(json_string_value(json_object_get(e, "gpu")), "NVIDIA H100");
    assert_null(json_object_get(e, "driver")); /* not set: left out */
    assert_string_equal(json_string_value(json_object_get(root, "command")), "torchrun train.py");
    assert_true(fabs(json_real_value(json_object_get(root, "wall_s")) - 2.5) < 1e-12);
    json_t *procs = json_object_get(root, "processes");
    assert_int_equal(json_array_size(procs), 2);
    json_t *p1 = json_array_get(procs, 1);
    assert_int_equal(json_integer_value(json_object_get(p1, "pid")), 200);
    assert_int_equal(json_integer_value(json_object_get(p1, "rank")), 1);
    assert_true(json_is_true(json_object_get(p1, "complete")));
    assert_int_equal(json_integer_value(json_object_get(p1, "blocking_calls")), 3);
    assert_int_equal(
        json_integer_value(json_object_get(json_object_get(p1, "counts"), "sync-stream")), 2);
    json_t *t = json_object_get(root, "total");
    assert_int_equal(json_integer_value(json_object_get(t, "processes")), 2);
    assert_int_equal(json_integer_value(json_object_get(t, "blocking_calls")), 6);
    assert_true(fabs(json_real_value(json_object_get(t, "blocked_us")) - 6.2) < 1e-9);
    assert_int_equal(json_array_size(json_object_get(root, "rows")), 4);
    json_t *row = json_array_get(json_object_get(root, "rows"), 0);
    assert_string_equal(json_string_value(json_object_get(row, "site")), "train!step");
    assert_true(fabs(json_real_value(json_object_get(row, "blocked_p95_us")) - 1.95) < 1e-9);
    json_t *ranges = json_object_get(root, "ranges");
    assert_int_equal(json_array_size(ranges), 1);
    json_t *r = json_array_get(ranges, 0);
    assert_string_equal(json_string_value(json_object_get(r, "name")), "a,b");
    assert_int_equal(json_integer_value(json_object_get(r, "instances")), 2);
    assert_int_equal(json_integer_value(json_object_get(r, "max_blocking")), 2);
    assert_int_equal(json_integer_value(json_object_get(r, "total_blocking")), 4);
    json_t *g = json_object_get(root, "gate");
    assert_int_equal(json_integer_value(json_object_get(g, "max_syncs")), 1);
    assert_string_equal(json_string_value(json_object_get(g, "range")), "a,b");
    assert_true(json_is_false(json_object_get(g, "passed")));
    json_decref(root);

    /* no gate: null */
    root = report_json(run, AS_JSON, NULL, NULL);
    assert_true(json_is_null(json_object_get(root, "gate")));
    json_decref(root);
    audit_free(run);
}

static json_t *find_event(json_t *events, const char *ph, const char *cat, const char *name,
                          json_int_t pid)
{
    size_t i;
    json_t *e;
    json_array_foreach(events, i, e)
    {
        const char *p = json_string_value(json_object_get(e, "ph"));
        const char *c = json_string_value(json_object_get(e, "cat"));
        const char *n = json_string_value(json_object_get(e, "name"));
        if (strcmp(p, ph) == 0 && (!cat || (c && strcmp(c, cat) == 0)) &&
            (!name || (n && strcmp(n, name) == 0)) &&
            json_integer_value(json_object_get(e, "pid")) == pid)
            return e;
    }
    return NULL;
}

static double num(json_t *o, const char *key)
{
    return json_number_value(json_object_get(o, key));
}

static void trace(void **state)
{
    (void)state;
    sb_audit_run *run = two_procs();
    json_t *root = report_json(run, AS_TRACE, NULL, NULL);
    assert_string_equal(json_string_value(json_object_get(root, "displayTimeUnit")), "ns");
    json_t *ev = json_object_get(root, "traceEvents");
    assert_true(json_is_array(ev));
    /* CUPTI clock + 1000000 = CLOCK_MONOTONIC; t0 = 1000000: ts = clock / 1000 */
    json_t *sync = find_event(ev, "X", "sync", "cudaStreamSynchronize_v3020", 200);
    assert_non_null(sync);
    assert_true(fabs(num(sync, "ts") - 3.0) < 1e-9);
    assert_true(fabs(num(sync, "dur") - 1.0) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(sync, "tid")), 1);
    json_t *args = json_object_get(sync, "args");
    assert_string_equal(json_string_value(json_object_get(args, "class")), "sync-stream");
    assert_string_equal(json_string_value(json_object_get(args, "group")), "explicit");
    assert_string_equal(json_string_value(json_object_get(args, "site")), "train!step");
    assert_string_equal(json_string_value(json_object_get(args, "range")), "a,b");
    assert_non_null(json_object_get(args, "bubble_us"));
    json_t *k = find_event(ev, "X", "kernel", "gemm<float>", 100);
    assert_non_null(k);
    assert_int_equal(json_integer_value(json_object_get(k, "tid")), 1000007);
    assert_true(fabs(num(k, "ts") - 2.0) < 1e-9);
    json_t *cp = find_event(ev, "X", "gpu_memcpy", "Memcpy DtoH (device -> pageable)", 100);
    assert_non_null(cp);
    assert_non_null(find_event(ev, "X", "cuda_runtime", "cudaLaunchKernel_v7000", 100));
    assert_non_null(find_event(ev, "X", "nvtx", "a,b", 100));
    assert_non_null(find_event(ev, "M", NULL, "process_name", 100));
    /* thread names: the host thread and stream 7 */
    int host = 0, stream7 = 0, flows_s = 0, flows_f = 0;
    size_t i;
    json_t *e;
    json_array_foreach(ev, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        if (strcmp(ph, "M") == 0 && json_integer_value(json_object_get(e, "pid")) == 100) {
            const char *n = json_string_value(json_object_get(json_object_get(e, "args"), "name"));
            host += strcmp(n, "host thread 1") == 0;
            stream7 += strcmp(n, "stream 7") == 0 &&
                       json_integer_value(json_object_get(e, "tid")) == 1000007;
        }
        flows_s += strcmp(ph, "s") == 0;
        flows_f += strcmp(ph, "f") == 0;
    }
    assert_int_equal(host, 1);
    assert_int_equal(stream7, 1);
    assert_int_equal(flows_s, 4); /* per process: the launch -> kernel, the async call -> copy */
    assert_int_equal(flows_f, 4);
    /* the kernel's flow: from the launch's start on its thread to the kernel's start */
    json_t *s = NULL, *fl = NULL;
    json_array_foreach(ev, i, e)
    {
        const char *ph = json_string_value(json_object_get(e, "ph"));
        if (json_integer_value(json_object_get(e, "pid")) != 100)
            continue;
        if (!s && strcmp(ph, "s") == 0)
            s = e;
        if (!fl && strcmp(ph, "f") == 0)
            fl = e;
    }
    assert_non_null(s);
    assert_non_null(fl);
    assert_int_equal(json_integer_value(json_object_get(s, "id")),
                     json_integer_value(json_object_get(fl, "id")));
    assert_string_equal(json_string_value(json_object_get(s, "cat")), "ac2g");
    assert_string_equal(json_string_value(json_object_get(fl, "bp")), "e");
    assert_true(fabs(num(s, "ts") - 1.5) < 1e-9);
    assert_true(fabs(num(fl, "ts") - 2.0) < 1e-9);
    assert_int_equal(json_integer_value(json_object_get(fl, "tid")), 1000007);
    json_decref(root);
    audit_free(run);
}

/* Text that is not valid UTF-8, or cut in a buffer: a command line with byte 0xff, 600 bytes of
 * 'é' (2 bytes each) in the process's command (the trace's 512-byte process name) and in a
 * symbol (the site's 1024-byte text). The JSON keeps "command" and every row; both parse. */
static void utf8_text(void **state)
{
    (void)state;
    char e600[1201] = "", sym[1201] = "";
    for (int i = 0; i < 600; i++)
        strcat(e600, "\xc3\xa9");
    memcpy(sym, e600, sizeof sym);
    stream s;
    stream_open(&s);
    line(&s,
         "{\"t\":\"proc\",\"v\":1,\"pid\":100,\"ppid\":1,\"rank\":-1,\"local_rank\":-1,"
         "\"cmd\":\"%s\",\"clock_ns\":500,\"mono_ns\":1000500,\"mode\":\"count\"}",
         e600);
    line(&s, "{\"t\":\"stack\",\"id\":1,\"frames\":[[\"/app/train\",\"%s\",16,0]]}", sym);
    line(&s,
         "{\"t\":\"call\",\"api\":\"cudaDeviceSynchronize\",\"dom\":\"rt\",\"tid\":1,"
         "\"ctx\":1,\"corr\":1,\"start\":10,\"end\":20,\"ranges\":[[1,\"%s\"]],\"stack\":1}",
         e600);
    end_line(&s);
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    analyze_default(run);
    const char *cmds[] = {"python3 \xff\xfe train.py", e600};
    const char *want[] = {"python3 ?? train.py", e600};
    for (int c = 0; c < 2; c++) {
        sb_audit_set_wall(run, cmds[c], 1.0, 0);
        json_t *root = report_json(run, AS_JSON, NULL, NULL);
        assert_string_equal(json_string_value(json_object_get(root, "command")), want[c]);
        json_t *rows = json_object_get(root, "rows");
        assert_int_equal(json_array_size(rows), 1);
        const char *site = json_string_value(json_object_get(json_array_get(rows, 0), "site"));
        assert_non_null(site);
        assert_int_equal(strncmp(site, "train!\xc3\xa9", 8), 0);
        assert_true(strlen(site) <= 1023 && strlen(site) % 2 == 0); /* "train!" and whole 'é' */
        assert_int_equal(json_array_size(json_object_get(root, "ranges")), 1);
        json_decref(root);

        root = report_json(run, AS_TRACE, NULL, NULL);
        json_t *pn =
            find_event(json_object_get(root, "traceEvents"), "M", NULL, "process_name", 100);
        assert_non_null(pn);
        const char *name = json_string_value(json_object_get(json_object_get(pn, "args"), "name"));
        assert_int_equal(strncmp(name, "pid 100: \xc3\xa9", 11), 0);
        assert_true(strlen(name) <= 511);
        json_decref(root);
    }
    audit_free(run);
}

static void write_file(const char *name, stream *s)
{
    fclose(s->f);
    char path[256];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fwrite(s->text, 1, s->len, f);
    fclose(f);
    free(s->text);
}

static void load_dir(void **state)
{
    (void)state;
    stream s;
    proc_stream(&s, 300, -1);
    write_file("proc-300.jsonl", &s);
    proc_stream(&s, 301, -1);
    write_file("proc-301.jsonl", &s);
    proc_stream(&s, 302, -1);
    write_file("other.txt", &s);
    sb_audit_run *run;
    assert_int_equal(sb_audit_load_dir(tmpdir, &run), 0);
    assert_int_equal(sb_audit_nprocs(run), 2);
    analyze_default(run);
    assert_int_equal(run->procs[0]->pid, 300);
    assert_int_equal(run->procs[1]->pid, 301);
    assert_int_equal(res_of(run->procs[1])->blocking, 3);
    audit_free(run);
    char missing[128];
    snprintf(missing, sizeof missing, "%s/none", tmpdir);
    /* a folder the program removed: no stream (the launcher's status names what is missing) */
    assert_int_equal(sb_audit_load_dir(missing, &run), 0);
    assert_int_equal(sb_audit_nprocs(run), 0);
    audit_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv),
        cmocka_unit_test(json),
        cmocka_unit_test(trace),
        cmocka_unit_test(utf8_text),
        cmocka_unit_test_setup_teardown(load_dir, make_tmpdir, remove_tmpdir),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
