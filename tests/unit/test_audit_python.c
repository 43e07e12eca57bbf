/* The audit in the user's terms, on synthetic record streams: the Python line of each blocking
 * call (the user's frame picked over the standard library's and installed packages'), its
 * source text, the operation the rules name and their fix, in every report and the gate; and
 * the launcher's status datagrams (lost or missing records fail the gate). */
#include "audit_stream.h"

#include <unistd.h>

#include "cmd/audit_listen.h"

static char src_path[] = "/tmp/sb_test_train_XXXXXX.py";

/* The user's file: line N holds the text the rules read. */
static const char *const SOURCE[] = {"import torch",                                      /* 1 */
                                     "    loss_value = loss.item()",                      /* 2 */
                                     "    v = float(x.sum())",                            /* 3 */
                                     "    if (x > 3).any():",                             /* 4 */
                                     "    print(t)",                                      /* 5 */
                                     "    y = x.cpu()",                                   /* 6 */
                                     "    idx = torch.nonzero(x)",                        /* 7 */
                                     "    y = x[x > 0]",                                  /* 8 */
                                     "    t = torch.tensor([1.0, 2.0], device=\"cuda\")", /* 9 */
                                     "    z = torch.repeat_interleave(x, reps)",          /* 10 */
                                     "    torch.cuda.synchronize()",                      /* 11 */
                                     "    ev.synchronize()",                              /* 12 */
                                     "    libcuda.cuCtxSynchronize()",                    /* 13 */
                                     "    torch.cuda.empty_cache()",                      /* 14 */
                                     "    x.cpu().numpy()",                               /* 15 */
                                     "    u = torch.unique(x)",                           /* 16 */
                                     "    a = x[:4].tolist()",                            /* 17 */
                                     "    weird_extension_call()",                        /* 18 */
                                     NULL};

static int setup(void **state)
{
    (void)state;
    int fd = mkstemps(src_path, 3);
    assert_true(fd >= 0);
    FILE *f = fdopen(fd, "w");
    for (int i = 0; SOURCE[i]; i++)
        fprintf(f, "%s\n", SOURCE[i]);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(src_path);
    return 0;
}

#define TORCH "/venv/lib/python3.12/site-packages/torch/"

/* One blocking call: its API, copy direction (or NULL), native symbols (innermost first, ";"
 * between; of libtorch_cuda.so, or "libfoo.so!sym" of another library) and the user's line; its
 * Python stack is the user's frame under a torch frame (pyextra, or none) and over the threading
 * module's. */
typedef struct {
    const char *api, *copy, *native, *pyextra;
    int line;
    const char *want_op; /* a substring of the rule's op; NULL: unknown */
    const char *want_scenario;
} pattern;

/* The native frames torch's reads to the host go through: a scalar read, a copy, nonzero. */
#define SYM_SCALAR "_ZN2at6native24_local_scalar_dense_cudaERKNS_6TensorE"
#define SYM_COPY "_ZN2at6native5copy_ERNS_6TensorERKS1_b"
#define SYM_NONZERO "_ZN2at6native21nonzero_cuda_out_implIbEEvRKNS_6TensorERS2_"

static const pattern PATTERNS[] = {
    {"cudaStreamSynchronize", NULL, SYM_SCALAR ";_ZN2at6native4itemERKNS_6TensorE", NULL, 2,
     ".item()", "log-every"},
    {"cudaMemcpyAsync", "DtoH", SYM_SCALAR, NULL, 3, "float(t)", "log-every"},
    {"cudaStreamSynchronize", NULL, SYM_SCALAR ";_ZN2at6native10is_nonzeroERKNS_6TensorE", NULL, 4,
     "Python branch on a GPU value", "device-branch"},
    {"cudaStreamSynchronize", NULL, SYM_SCALAR, TORCH "_tensor_str.py", 5, "print(tensor)",
     "log-every"},
    {"cudaMemcpyAsync", "DtoH", SYM_COPY ";_ZN2at6native8_to_copy", NULL, 6, "copy to host: .cpu()",
     "double-buffer"},
    {"cudaStreamSynchronize", NULL, SYM_COPY, NULL, 6, "copy to host: .cpu()", "double-buffer"},
    {"cudaStreamSynchronize", NULL, SYM_NONZERO, NULL, 7, "nonzero", "dynamic-shape"},
    {"cudaStreamSynchronize", NULL, SYM_NONZERO ";_ZN2at4meta23structured_index_Tensor4meta", NULL,
     8, "boolean mask", "dynamic-shape"},
    {"cudaMemcpyAsync", "HtoD", SYM_COPY, NULL, 9, "tensor from host data", "small-h2d"},
    {"cudaStreamSynchronize", NULL,
     SYM_SCALAR ";_ZN2at6native22repeat_interleave_cudaERKNS_6TensorESt8optionalIlE", NULL, 10,
     "repeat_interleave without output_size", "dynamic-shape"},
    {"cudaDeviceSynchronize", NULL, "_ZN3c104cuda18device_synchronizeEv", NULL, 11,
     "torch.cuda.synchronize()", "busy-stream"},
    {"cudaEventSynchronize", NULL, "", TORCH "cuda/streams.py", 12, "event.synchronize()",
     "small-gemm"},
    {"cuCtxSynchronize", NULL, "libffi.so.8!ffi_call", NULL, 13, "from an extension",
     "busy-stream"},
    {"cudaFree", NULL, "", TORCH "cuda/memory.py", 14, "empty_cache()", "alloc"},
    {"cudaMemcpyAsync", "DtoH", SYM_COPY, NULL, 15, "copy to host: .numpy()", "double-buffer"},
    {"cudaStreamSynchronize", NULL, SYM_SCALAR ";_ZN2at6native8internal20unique_cuda_templateIfEE",
     TORCH "functional.py", 16, "unique", "dynamic-shape"},
    {"cudaStreamSynchronize", NULL, SYM_COPY, NULL, 17, "copy to host: .tolist()", "double-buffer"},
    {"cudaStreamQueryNotAThing", NULL, "", NULL, 18, NULL, NULL},
};
#define NPATTERNS (sizeof PATTERNS / sizeof PATTERNS[0])

/* fmt with value in buf, or "" when there is no value (an optional part of a record). */
__attribute__((format(printf, 3, 0))) static const char *
if_given(char *buf, size_t n, const char *fmt, const char *value)
{
    buf[0] = '\0';
    if (value)
        snprintf(buf, n, fmt, value);
    return buf;
}

/* A stream with one call per pattern: stack i and pystack i are pattern i's. */
static sb_audit_run *pattern_run(int innermost)
{
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    for (size_t i = 0; i < NPATTERNS; i++) {
        const pattern *p = &PATTERNS[i];
        char frames[2048] = "", syms[1024];
        snprintf(syms, sizeof syms, "%s", p->native);
        size_t len = 0;
        for (char *save, *sym = strtok_r(syms, ";", &save); sym; sym = strtok_r(NULL, ";", &save)) {
            char *bang = strchr(sym, '!'); /* "libffi.so.8!ffi_call": another library's */
            if (bang)
                *bang = '\0';
            len += (size_t)snprintf(frames + len, sizeof frames - len,
                                    "%s[\"/venv/lib/%s\",\"%s\",16,0]", len ? "," : "",
                                    bang ? sym : "libtorch_cuda.so", bang ? bang + 1 : sym);
        }
        line(&s, "{\"t\":\"stack\",\"id\":%zu,\"frames\":[%s]}", i, frames);
        char extra[512], copy[64];
        line(&s,
             "{\"t\":\"pystack\",\"id\":%zu,\"frames\":[%s[\"%s\",\"step\",%d],"
             "[\"/usr/lib/python3.12/threading.py\",\"run\",1010]]}",
             i, if_given(extra, sizeof extra, "[\"%s\",\"torch_fn\",77],", p->pyextra), src_path,
             p->line);
        line(&s,
             "{\"t\":\"call\",\"api\":\"%s\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,\"corr\":%zu,"
             "\"start\":%zu,\"end\":%zu,\"ranges\":[],\"stack\":%zu,\"py\":%zu%s}",
             p->api, i + 1, 1000 * i, 1000 * i + 500, i, i,
             if_given(copy, sizeof copy, ",\"copy\":\"%s\",\"host\":\"pageable\"", p->copy));
    }
    end_line(&s);
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    o.symbolize = 0;
    o.py_innermost = innermost;
    assert_int_equal(analyze_run(run, &o), 0);
    return run;
}

static void each_pattern_named_at_its_line(void **state)
{
    (void)state;
    sb_audit_run *run = pattern_run(0);
    const sb_audit_proc *p = run->procs[0];
    for (size_t i = 0; i < NPATTERNS; i++) {
        const sb_audit_call_info *c = info_of(p, i);
        const pattern *want = &PATTERNS[i];
        if (c->cls == SB_AUDIT_NONE) { /* not a blocking API: no site taken */
            assert_null(want->want_op);
            continue;
        }
        assert_non_null(c->pyframe);
        assert_string_equal(c->pyframe->file, src_path);
        assert_int_equal(c->pyframe->line, want->line);
        char site[512];
        snprintf(site, sizeof site, "%s:%d in step", src_path, want->line);
        assert_string_equal(c->site, site);
        const char *text = SOURCE[want->line - 1];
        while (*text == ' ')
            text++;
        assert_string_equal(c->source, text);
        if (!want->want_op) {
            assert_null(c->rule);
            continue;
        }
        assert_non_null(c->rule);
        if (!strstr(c->rule->op, want->want_op))
            fail_msg("pattern %zu (line %d): '%s' is not '%s'", i, want->line, c->rule->op,
                     want->want_op);
        assert_string_equal(c->rule->scenario, want->want_scenario);
        assert_true(strlen(c->rule->fix) > 10);
    }
    audit_free(run);
}

static void innermost_option_and_library_only_stacks(void **state)
{
    (void)state;
    sb_audit_run *run = pattern_run(1);
    const sb_audit_proc *p = run->procs[0];
    /* print(t) (pattern 3) has a torch frame inside the user's: --py-site innermost names it */
    assert_string_equal(info_of(p, 3)->pyframe->file, TORCH "_tensor_str.py");
    assert_string_equal(info_of(p, 3)->site, TORCH "_tensor_str.py:77 in torch_fn");
    assert_string_equal(info_of(p, 0)->pyframe->file, src_path);
    audit_free(run);

    sb_audit_pyframe lib[] = {{"/usr/lib/python3.12/threading.py", "run", 3},
                              {"<frozen runpy>", "_run_code", 9}};
    sb_audit_pystack only = {1, 2, lib};
    assert_ptr_equal(sb_audit_py_pick(&only, 0), &lib[0]);
    assert_true(sb_audit_py_library("/x/dist-packages/numpy/core.py"));
    assert_true(sb_audit_py_library("<string>"));
    assert_false(sb_audit_py_library("/home/me/train.py"));
}

static void reports_carry_the_python_site(void **state)
{
    (void)state;
    sb_audit_run *run = pattern_run(0);
    char *t = table_text(run);
    char want[600];
    snprintf(want, sizeof want, "%s:2 in step", src_path);
    assert_non_null(strstr(t, want));
    assert_non_null(strstr(t, "| loss_value = loss.item()"));
    assert_non_null(strstr(t, "what: scalar read: .item()"));
    assert_non_null(strstr(t, "(priced by: syncbench --scenario log-every)"));
    assert_non_null(strstr(t, "native: libtorch_cuda.so!at::native::_local_scalar_dense_cuda"));
    free(t);
    /* a call no rule knows is named unknown, not guessed */
    sb_audit_call odd = {.api = "cudaGraphInstantiate_v10000", .stack = -1, .py = -1};
    sb_audit_call_info odd_info = {.source = ""};
    assert_null(sb_audit_rule_for(run->procs[0], &odd, &odd_info));

    char *csv = csv_text(run);
    snprintf(want, sizeof want, "%s,2,step,loss_value = loss.item(),scalar read: .item(),",
             src_path);
    assert_non_null(strstr(csv, want));
    free(csv);

    char *msg = gate_failed(run);
    snprintf(want, sizeof want, "%s:11 in step  (explicit sync: torch.cuda.synchronize())",
             src_path);
    assert_non_null(strstr(msg, want));
    free(msg);
    audit_free(run);
}

/* Two calls on one Python line with different native frames (a .cpu(): the copy and its
 * stream sync) are one site; each operation is its own row. */
static void sites_group_by_python_line(void **state)
{
    (void)state;
    sb_audit_run *run = pattern_run(0);
    const sb_audit_proc *p = run->procs[0];
    int cpu_rows = 0;
    char site[512];
    snprintf(site, sizeof site, "%s:6 in step", src_path);
    for (size_t i = 0; i < res_of(p)->nrows; i++)
        if (!strcmp(res_of(p)->rows[i].site, site)) {
            cpu_rows++;
            assert_string_equal(res_of(p)->rows[i].rule->op, "copy to host: .cpu()");
        }
    assert_int_equal(cpu_rows, 2); /* copy-pageable and sync-stream: two classes, one site */
    audit_free(run);
}

static void status_lost_and_missing_records_fail_the_gate(void **state)
{
    (void)state;
    sb_audit_listener l = {.fd = -1};
    assert_int_equal(sb_audit_listen_take(&l, "start 100 1 0", 13), 0);
    assert_int_equal(sb_audit_listen_take(&l, "start 200 0 28", 14), 0);
    assert_int_equal(sb_audit_listen_take(&l, "end 100 3", 9), 0);
    assert_int_equal(sb_audit_listen_take(&l, "end x", 5), -1);
    assert_int_equal(sb_audit_listen_take(&l, "hello", 5), -1);
    assert_int_equal(l.n, 2);
    assert_int_equal(l.procs[0].lost, 3);
    assert_true(l.procs[0].ended);
    assert_false(l.procs[1].opened);

    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    end_line(&s);
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    assert_int_equal(sb_audit_set_status(run, l.procs, l.n), 0);
    analyze_default(run);
    assert_int_equal(run->nprocs, 2); /* pid 200 had no file: added, empty */
    sb_audit_opts o = opts_of(run);
    o.max_syncs = 5;
    char *msg;
    assert_int_equal(gate_message(run, &o, &msg), 1);
    assert_non_null(strstr(msg, "pid 100: records incomplete: 3 record lines could not be "
                                "written"));
    assert_non_null(strstr(msg, "pid 200: records incomplete: its record file could not be "
                                "created (No space left on device)"));
    free(msg);
    audit_free(run);
    free(l.procs);
}

/* Names from the program (NVTX ranges, files, warn messages) reach the table and the gate's
 * message escaped: no C0, DEL or C1 control raw (issue 19 item 4). */
static int raw_control(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p < 0x20 && *p != '\n') || *p == 0x7f ||
            (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
            return 1;
    return 0;
}

static void hostile_names_are_escaped(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    line(&s, "{\"t\":\"warn\",\"msg\":\"bad \\u001b[2J \\u009b31m\"}");
    line(&s,
         "{\"t\":\"pystack\",\"id\":0,\"frames\":[[\"/x/\\u001b]0;t\\u0007.py\",\"f\\u009b\",3]]}");
    line(&s, "{\"t\":\"range\",\"tid\":1,\"id\":1,\"name\":\"r\\u001b[31m\\u009b\",\"start\":5,"
             "\"end\":100,\"depth\":0}");
    line(&s, "{\"t\":\"call\",\"api\":\"cudaDeviceSynchronize\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":1,\"start\":10,\"end\":20,\"ranges\":[[1,\"r\\u001b[31m\\u009b\"]],"
             "\"stack\":-1,\"py\":0}");
    end_line(&s);
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    sb_audit_set_wall(run, "python3 \x1b[2J\xc2\x9b", 1, 0);
    analyze_default(run);
    char *t = table_text(run);
    assert_false(raw_control(t));
    assert_non_null(strstr(t, "r\\x1b[31m\\xc2\\x9b"));
    assert_non_null(strstr(t, "bad \\x1b[2J \\xc2\\x9b31m"));
    assert_non_null(strstr(t, "/x/\\x1b]0;t\\x07.py:3 in f\\xc2\\x9b"));
    assert_non_null(strstr(t, "python3 \\x1b[2J\\xc2\\x9b"));
    free(t);
    sb_audit_opts o = opts_of(run);
    o.max_syncs = 0;
    o.range = "r\x1b[31m\xc2\x9b";
    char *msg;
    assert_int_equal(gate_message(run, &o, &msg), 1);
    assert_false(raw_control(msg));
    assert_non_null(strstr(msg, "range 'r\\x1b[31m\\xc2\\x9b'"));
    free(msg);
    audit_free(run);
}

/* nvtxRangeStart/End ranges (ended on another thread) count every thread's blocking calls
 * inside them, for the JSON and the --range gate; domains are kept with their ranges. */
static void nvtx_start_end_ranges_and_domains(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    const char *call =
        "{\"t\":\"call\",\"api\":\"cudaStreamSynchronize\",\"dom\":\"rt\",\"tid\":%d,"
        "\"ctx\":1,\"corr\":%d,\"start\":%d,\"end\":%d,\"ranges\":[],\"stack\":-1}";
    line(&s, call, 1, 1, 50, 60);   /* before the range */
    line(&s, call, 2, 2, 110, 120); /* inside it, thread 2 */
    line(&s, call, 3, 3, 130, 140); /* inside it, thread 3 */
    line(&s, call, 1, 4, 150, 160); /* inside it, thread 1 */
    line(&s, call, 2, 5, 250, 260); /* after it */
    line(&s, "{\"t\":\"range\",\"tid\":1,\"id\":7,\"name\":\"\u03bb-step\",\"start\":100,"
             "\"end\":200,\"depth\":0,\"dom\":\"NCCL\",\"kind\":\"startend\"}");
    end_line(&s);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(p->nranges, 1);
    assert_true(p->ranges[0].startend);
    assert_string_equal(p->ranges[0].domain, "NCCL");
    assert_int_equal(res_of(p)->ranges[0].blocking, 3);
    assert_int_equal(analysis_of(run)->nrange_sums, 1);
    assert_string_equal(analysis_of(run)->range_sums[0].domain, "NCCL");
    sb_audit_opts o = opts_of(run);
    o.max_syncs = 2;
    o.range = "\xce\xbb-step";
    char *msg;
    assert_int_equal(gate_message(run, &o, &msg), 1);
    assert_non_null(strstr(msg, "1 of 1 instance of range '\xce\xbb-step' made more than 2"));
    free(msg);
    o.max_syncs = 3;
    assert_int_equal(gate_message(run, &o, &msg), 0);
    free(msg);
    audit_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_pattern_named_at_its_line),
        cmocka_unit_test(innermost_option_and_library_only_stacks),
        cmocka_unit_test(reports_carry_the_python_site),
        cmocka_unit_test(sites_group_by_python_line),
        cmocka_unit_test(status_lost_and_missing_records_fail_the_gate),
        cmocka_unit_test(hostile_names_are_escaped),
        cmocka_unit_test(nvtx_start_end_ranges_and_domains),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
