/* The audit analyzer on synthetic record streams: classes, the waited rule, bubbles, the
 * rows' statistics, ranges, the gate, sites, malformed and incomplete streams. */
#include "audit_stream.h"
#include "base/utf8.h"

#include <dlfcn.h>
#include <jansson.h>
#include <math.h>
#include <limits.h>
#include <unistd.h>

static sb_audit_class cls(const sb_audit_run *run, size_t i)
{
    assert_true(i < run->procs[0]->ncalls);
    return info_of(run->procs[0], i)->cls;
}

static void base_names(void **state)
{
    (void)state;
    char b[64];
    const char *cases[][2] = {
        {"cudaMemcpy_v3020", "cudaMemcpy"},
        {"cudaMemcpyAsync_ptsz_v7000", "cudaMemcpyAsync"},
        {"cudaStreamSynchronize_ptsz", "cudaStreamSynchronize"},
        {"cudaDeviceSynchronize_ptds", "cudaDeviceSynchronize"},
        {"cuMemcpyDtoH_v2", "cuMemcpyDtoH"},
        {"cuCtxSynchronize", "cuCtxSynchronize"},
        {"cuMemsetD2D8", "cuMemsetD2D8"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb_audit_base_name(cases[i][0], b, sizeof b);
        assert_string_equal(b, cases[i][1]);
    }
}

/* Every class from its API names; no GPU work, so nothing is WAITED. */
static void classes_from_names(void **state)
{
    (void)state;
    static const struct {
        const char *api;
        sb_audit_class c;
    } cases[] = {
        {"cudaDeviceSynchronize_v3020", SB_AUDIT_SYNC_DEVICE},
        {"cudaThreadSynchronize_v3020", SB_AUDIT_SYNC_DEVICE},
        {"cuCtxSynchronize", SB_AUDIT_SYNC_DEVICE},
        {"cudaStreamSynchronize_v3020", SB_AUDIT_SYNC_STREAM},
        {"cudaStreamSynchronize_ptsz_v7000", SB_AUDIT_SYNC_STREAM},
        {"cuStreamSynchronize", SB_AUDIT_SYNC_STREAM},
        {"cudaEventSynchronize_v3020", SB_AUDIT_SYNC_EVENT},
        {"cuEventSynchronize", SB_AUDIT_SYNC_EVENT},
        {"cudaStreamQuery_v3020", SB_AUDIT_POLL},
        {"cudaEventQuery_v3020", SB_AUDIT_POLL},
        {"cuStreamQuery", SB_AUDIT_POLL},
        {"cuEventQuery", SB_AUDIT_POLL},
        {"cudaMemcpy_v3020", SB_AUDIT_COPY_SYNC},
        {"cudaMemcpy2D_v3020", SB_AUDIT_COPY_SYNC},
        {"cuMemcpyDtoH_v2", SB_AUDIT_COPY_SYNC},
        {"cuMemcpyHtoD_v2", SB_AUDIT_COPY_SYNC},
        {"cuMemcpyDtoD_v2", SB_AUDIT_NONE},
        {"cudaMemcpyPeer_v4000", SB_AUDIT_NONE}, /* peer copies are device to device */
        {"cuMemcpyPeer", SB_AUDIT_NONE},
        {"cudaMemcpyAsync_ptsz_v7000", SB_AUDIT_NONE},
        {"cuMemcpyDtoHAsync_v2", SB_AUDIT_NONE},
        {"cudaMemset_v3020", SB_AUDIT_MEMSET_SYNC},
        {"cudaMemset2D_v3020", SB_AUDIT_MEMSET_SYNC},
        {"cudaMemset3D_v3020", SB_AUDIT_MEMSET_SYNC},
        {"cuMemsetD8_v2", SB_AUDIT_MEMSET_SYNC},
        {"cuMemsetD16_v2", SB_AUDIT_MEMSET_SYNC},
        {"cuMemsetD32_v2", SB_AUDIT_MEMSET_SYNC},
        {"cuMemsetD2D8_v2", SB_AUDIT_MEMSET_SYNC},
        {"cudaMemsetAsync_v3020", SB_AUDIT_NONE},
        {"cuMemsetD32Async", SB_AUDIT_NONE},
        {"cudaFree_v3020", SB_AUDIT_FREE},
        {"cudaFreeHost_v3020", SB_AUDIT_FREE},
        {"cudaFreeArray_v3020", SB_AUDIT_FREE},
        {"cudaFreeMipmappedArray_v5000", SB_AUDIT_FREE},
        {"cuMemFree_v2", SB_AUDIT_FREE},
        {"cuMemFreeHost", SB_AUDIT_FREE},
        {"cudaMalloc_v3020", SB_AUDIT_NONE},
        {"cudaStreamDestroy_v5050", SB_AUDIT_NONE},
    };
    size_t n = sizeof cases / sizeof cases[0];
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    for (size_t i = 0; i < n; i++)
        call(&s, cases[i].api, (long long)i + 1, 1000 * (long long)i, 1000 * (long long)i + 900);
    end_line(&s);
    sb_audit_run *run = analyzed(&s);
    assert_int_equal(run->procs[0]->ncalls, n);
    for (size_t i = 0; i < n; i++) {
        if (cls(run, i) != cases[i].c)
            fail_msg("%s: %s, expected %s", cases[i].api, sb_audit_class_name(cls(run, i)),
                     sb_audit_class_name(cases[i].c));
        /* what the injection library's blocks count (python/syncbench) is the same class */
        if (sb_audit_class_alone(cases[i].api, NULL, NULL) != cases[i].c)
            fail_msg("class_alone %s: %s", cases[i].api,
                     sb_audit_class_name(sb_audit_class_alone(cases[i].api, NULL, NULL)));
    }
    assert_int_equal(res_of(run->procs[0])->polls, 4);
    audit_free(run);
    /* and what a call's parameters and the driver add: the direction, the host memory */
    assert_int_equal(sb_audit_class_alone("cudaMemcpy_v3020", "DtoD", NULL), SB_AUDIT_NONE);
    assert_int_equal(sb_audit_class_alone("cudaMemcpy_v3020", "DtoH", "pinned"),
                     SB_AUDIT_COPY_SYNC);
    assert_int_equal(sb_audit_class_alone("cudaMemcpyAsync_v3020", "DtoH", "pageable"),
                     SB_AUDIT_COPY_PAGEABLE);
    assert_int_equal(sb_audit_class_alone("cuMemcpyHtoDAsync_v2", NULL, "pageable"),
                     SB_AUDIT_COPY_PAGEABLE);
    assert_int_equal(sb_audit_class_alone("cudaMemcpyAsync_v3020", "DtoH", "pinned"),
                     SB_AUDIT_NONE);
}

static void copy_line(stream *s, long long corr, long long rcorr, const char *kind, const char *src,
                      const char *dst, long long start, long long end)
{
    line(s,
         "{\"t\":\"copy\",\"dev\":0,\"ctx\":1,\"stream\":7,\"corr\":%lld,\"rcorr\":%lld,"
         "\"start\":%lld,\"end\":%lld,\"bytes\":4096,\"kind\":\"%s\",\"src\":\"%s\","
         "\"dst\":\"%s\"}",
         corr, rcorr, start, end, kind, src, dst);
}

/* Async copies: pinned = NONE, pageable = COPY_PAGEABLE, matched by rcorr (runtime) and by corr
 * (driver); a runtime call does not match a copy by its driver id. Synchronous DtoD = NONE. */
static void copies(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    /* 0: runtime async into pinned memory */
    call(&s, "cudaMemcpyAsync_v3020", 11, 1000, 1100);
    copy_line(&s, 9011, 11, "HtoD", "pinned", "device", 2000, 2100);
    /* 1: runtime async from pageable memory, matched by rcorr */
    call(&s, "cudaMemcpyAsync_v3020", 12, 3000, 3100);
    copy_line(&s, 9012, 12, "DtoH", "device", "pageable", 4000, 4100);
    /* 2: driver async to pageable memory, matched by corr */
    line(&s, "{\"t\":\"call\",\"api\":\"cuMemcpyHtoDAsync_v2\",\"dom\":\"drv\",\"tid\":1,"
             "\"ctx\":1,\"corr\":13,\"start\":5000,\"end\":5100,\"ranges\":[],\"stack\":-1}");
    copy_line(&s, 13, 0, "HtoD", "pageable", "device", 6000, 6100);
    /* 3: runtime call whose number is a pageable copy's driver id, not its runtime id */
    call(&s, "cudaMemcpyAsync_ptsz_v7000", 14, 7000, 7100);
    copy_line(&s, 14, 999, "HtoD", "pageable", "device", 8000, 8100);
    /* 4: synchronous DtoD by the copy record's kind (the call says "default") */
    line(&s, "{\"t\":\"call\",\"api\":\"cudaMemcpy_v3020\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":15,\"start\":9000,\"end\":9100,\"stack\":-1,\"copy\":\"default\"}");
    copy_line(&s, 9015, 15, "DtoD", "device", "device", 10000, 10100);
    /* 5: synchronous DtoD by the call's copy field, no copy record */
    line(&s, "{\"t\":\"call\",\"api\":\"cudaMemcpy_v3020\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":16,\"start\":11000,\"end\":11100,\"stack\":-1,\"copy\":\"DtoD\"}");
    /* 6: synchronous DtoH */
    line(&s, "{\"t\":\"call\",\"api\":\"cudaMemcpy_v3020\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":17,\"start\":12000,\"end\":12100,\"stack\":-1,\"copy\":\"DtoH\"}");
    /* 7: runtime async to pageable memory traced without driver calls: CUPTI leaves rcorr 0
     * and gives the copy the runtime's id (as on the H100) */
    call(&s, "cudaMemcpyAsync_v3020", 18, 13000, 13100);
    copy_line(&s, 18, 0, "DtoH", "device", "pageable", 13050, 13090);
    /* 8, 9: copies not recorded (the default mode): the driver's answer about the host
     * pointer decides */
    line(&s, "{\"t\":\"call\",\"api\":\"cudaMemcpyAsync_v3020\",\"dom\":\"rt\",\"tid\":1,"
             "\"ctx\":1,\"corr\":19,\"start\":14000,\"end\":14100,\"stack\":-1,"
             "\"copy\":\"DtoH\",\"host\":\"pageable\"}");
    line(&s, "{\"t\":\"call\",\"api\":\"cudaMemcpyAsync_v3020\",\"dom\":\"rt\",\"tid\":1,"
             "\"ctx\":1,\"corr\":20,\"start\":15000,\"end\":15100,\"stack\":-1,"
             "\"copy\":\"DtoH\",\"host\":\"pinned\"}");
    end_line(&s);
    sb_audit_run *run = analyzed(&s);
    assert_int_equal(cls(run, 7), SB_AUDIT_COPY_PAGEABLE);
    assert_int_equal(cls(run, 8), SB_AUDIT_COPY_PAGEABLE);
    assert_int_equal(cls(run, 9), SB_AUDIT_NONE);
    assert_int_equal(cls(run, 0), SB_AUDIT_NONE);
    assert_int_equal(cls(run, 1), SB_AUDIT_COPY_PAGEABLE);
    assert_int_equal(cls(run, 2), SB_AUDIT_COPY_PAGEABLE);
    assert_int_equal(cls(run, 3), SB_AUDIT_NONE);
    assert_int_equal(cls(run, 4), SB_AUDIT_NONE);
    assert_int_equal(cls(run, 5), SB_AUDIT_NONE);
    assert_int_equal(cls(run, 6), SB_AUDIT_COPY_SYNC);
    audit_free(run);
}

/* The waited rule: GPU busy on the call's device at its start, idle at G in (start, end],
 * end - G <= 20 us, and the call lasted >= 5 us. */
static void waited_rule(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    line(&s, "{\"t\":\"kernel\",\"dev\":1,\"ctx\":2,\"stream\":8,\"corr\":2,\"start\":100,"
             "\"end\":200}"); /* context 2 is device 1, idle during the calls */
    kernel(&s, 0, 1, 1, 1000, 50000);
    call(&s, "cudaMalloc_v3020", 10, 2000, 55000);  /* 0: ends 5 us after G: waited */
    call(&s, "cudaMalloc_v3020", 11, 2000, 70001);  /* 1: 20.001 us after G: no */
    call(&s, "cudaMalloc_v3020", 12, 2000, 70000);  /* 2: exactly 20 us: waited */
    call(&s, "cudaMalloc_v3020", 13, 60000, 90000); /* 3: GPU idle at start: no */
    call(&s, "cudaMalloc_v3020", 14, 49000, 50001); /* 4: too short (1 us): no */
    call(&s, "cudaMalloc_v3020", 15, 2000, 40000);  /* 5: ended before G: no */
    call(&s, "cudaMemcpy_v3020", 16, 2000, 55000);  /* 6: a sync copy stays COPY_SYNC */
    /* 7: context 2 (device 1, idle): no */
    line(&s, "{\"t\":\"call\",\"api\":\"cudaHostAlloc_v3020\",\"dom\":\"rt\",\"tid\":1,"
             "\"ctx\":2,\"corr\":17,\"start\":2000,\"end\":55000,\"stack\":-1}");
    /* 8: unknown context 9: every device merged: waited */
    line(&s, "{\"t\":\"call\",\"api\":\"cudaHostAlloc_v3020\",\"dom\":\"rt\",\"tid\":1,"
             "\"ctx\":9,\"corr\":18,\"start\":2000,\"end\":55000,\"stack\":-1}");
    /* 9: a DtoD sync copy that waited */
    line(&s, "{\"t\":\"call\",\"api\":\"cudaMemcpy_v3020\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":19,\"start\":2000,\"end\":55000,\"stack\":-1,\"copy\":\"DtoD\"}");
    end_line(&s);
    sb_audit_run *run = analyzed(&s);
    sb_audit_class want[] = {SB_AUDIT_WAITED, SB_AUDIT_NONE,  SB_AUDIT_WAITED,    SB_AUDIT_NONE,
                             SB_AUDIT_NONE,   SB_AUDIT_NONE,  SB_AUDIT_COPY_SYNC, SB_AUDIT_NONE,
                             SB_AUDIT_WAITED, SB_AUDIT_WAITED};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        if (cls(run, i) != want[i])
            fail_msg("call %zu: %s, expected %s", i, sb_audit_class_name(cls(run, i)),
                     sb_audit_class_name(want[i]));
    /* a waited call's bubble: from G (50000) to the next GPU work: none */
    assert_int_equal(info_of(run->procs[0], 0)->bubble_ns, 0);
    audit_free(run);
}

/* Bubbles on a hand-built timeline: kernels [1000, 5000) and [9000, 10000). */
static void bubbles(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    kernel(&s, 0, 1, 1, 1000, 3000);
    kernel(&s, 0, 1, 2, 2500, 5000); /* overlaps: one busy stretch [1000, 5000) */
    kernel(&s, 0, 1, 3, 9000, 10000);
    call(&s, "cudaStreamSynchronize_v3020", 10, 2000, 5500);   /* busy at start: 9000 - 5000 */
    call(&s, "cudaDeviceSynchronize_v3020", 11, 6000, 7000);   /* idle at start: 9000 - 6000 */
    call(&s, "cudaStreamSynchronize_v3020", 12, 11000, 12000); /* no next activity: 0 */
    call(&s, "cudaEventSynchronize_v3020", 13, 2000, 4000);    /* GPU busy past its end: 0 */
    call(&s, "cudaStreamQuery_v3020", 14, 6000, 7000);         /* a poll: no bubble */
    call(&s, "cudaMalloc_v3020", 15, 6000, 7000);              /* NONE: no bubble */
    line(&s, "{\"t\":\"end\",\"clock_ns\":12000,\"mono_ns\":1012000,\"why\":\"exit\","
             "\"dropped\":0}");
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(info_of(p, 0)->bubble_ns, 4000);
    assert_int_equal(info_of(p, 1)->bubble_ns, 3000);
    assert_int_equal(info_of(p, 2)->bubble_ns, 0);
    assert_int_equal(info_of(p, 3)->bubble_ns, 0);
    assert_int_equal(info_of(p, 4)->bubble_ns, 0);
    assert_int_equal(info_of(p, 5)->bubble_ns, 0);
    /* lifetime 500..12000 = 11.5 us, busy 5 us; the launches were not recorded: no replay */
    assert_true(fabs(res_of(p)->lifetime_us - 11.5) < 1e-9);
    assert_true(fabs(res_of(p)->busy_us - 5) < 1e-9);
    assert_int_equal(res_of(p)->nsavings, 0);
    assert_true(fabs(res_of(p)->blocked_us - 7.5) < 1e-9);
    assert_int_equal(res_of(p)->blocking, 4);
    assert_int_equal(res_of(p)->polls, 1);
    audit_free(run);
}

/* A stream without kernels (the default mode records only the calls and copies): no call is
 * judged "waited" and no bubble is made up from the copies alone; the CSV leaves the bubble
 * empty and the JSON says null. */
static void without_kernels(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    line(&s, "{\"t\":\"proc\",\"v\":1,\"pid\":100,\"ppid\":1,\"rank\":-1,\"local_rank\":-1,"
             "\"cmd\":\"app\",\"clock_ns\":500,\"mono_ns\":1000500,\"mode\":\"count\","
             "\"kernels\":0}");
    line(&s, "{\"t\":\"copy\",\"dev\":0,\"ctx\":1,\"stream\":7,\"corr\":1,\"rcorr\":0,"
             "\"start\":1000,\"end\":50000,\"bytes\":4,\"kind\":\"HtoD\",\"src\":\"pinned\","
             "\"dst\":\"device\"}");
    line(&s, "{\"t\":\"copy\",\"dev\":0,\"ctx\":1,\"stream\":7,\"corr\":2,\"rcorr\":0,"
             "\"start\":60000,\"end\":61000,\"bytes\":4,\"kind\":\"HtoD\",\"src\":\"pinned\","
             "\"dst\":\"device\"}");
    call(&s, "cudaMalloc_v3020", 10, 2000, 55000);            /* waited, were kernels known */
    call(&s, "cudaStreamSynchronize_v3020", 11, 2000, 52000); /* a bubble of 8 us, were they */
    end_line(&s);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(p->kernels, 0);
    assert_int_equal(cls(run, 0), SB_AUDIT_NONE);
    assert_int_equal(cls(run, 1), SB_AUDIT_SYNC_STREAM);
    assert_int_equal(info_of(p, 1)->bubble_ns, 0);
    char *csv = csv_text(run);
    assert_non_null(strstr(csv, ",sync-stream,,?,1,50,50,50,,"));
    free(csv);
    json_t *doc = json_report(run);
    json_t *proc = json_array_get(json_object_get(doc, "processes"), 0);
    assert_true(json_is_null(json_object_get(proc, "gpu_busy_pct")));
    assert_true(json_is_null(json_object_get(proc, "predicted")));
    assert_null(json_object_get(proc, "could_save_us"));
    json_t *row = json_array_get(json_object_get(doc, "rows"), 0);
    assert_true(json_is_null(json_object_get(row, "bubble_total_us")));
    json_decref(doc);
    audit_free(run);
}

/* One row's statistics: durations 1, 2, 3, 4, 10 us. */
static void median_p95(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    long long d[] = {3000, 10000, 1000, 4000, 2000};
    for (int i = 0; i < 5; i++)
        call(&s, "cudaStreamSynchronize_v3020", i + 1, 100000 * i, 100000 * i + d[i]);
    call(&s, "cudaDeviceSynchronize_v3020", 9, 900000, 901000);
    end_line(&s);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(res_of(p)->nrows, 2);
    const sb_audit_row *r = &res_of(p)->rows[1]; /* rows sorted by class: sync-device first */
    assert_int_equal(res_of(p)->rows[0].cls, SB_AUDIT_SYNC_DEVICE);
    assert_int_equal(r->cls, SB_AUDIT_SYNC_STREAM);
    assert_int_equal(r->count, 5);
    assert_true(fabs(r->blocked_total_us - 20) < 1e-9);
    assert_true(fabs(r->blocked_median_us - 3) < 1e-9);
    assert_true(fabs(r->blocked_p95_us - 8.8) < 1e-9); /* 4 + 0.8 * (10 - 4) */
    assert_string_equal(r->range, "");
    assert_string_equal(r->site, "?");
    audit_free(run);
}

/* Range "step": instance 1 with 2 blocking calls, instance 2 with 3 (one nested in "inner"),
 * a poll in instance 1 (not counted), one blocking call outside. 6 blocking in all. */
static void ranges_stream(stream *s)
{
    stream_open(s);
    proc_line(s, 100, 0);
    const char *fmt = "{\"t\":\"call\",\"api\":\"%s\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
                      "\"corr\":%d,\"start\":%d,\"end\":%d,\"ranges\":%s,\"stack\":%d}";
    line(s, "{\"t\":\"stack\",\"id\":1,\"frames\":[[\"/usr/lib/libcudart.so.13\","
            "\"cudaStreamSynchronize\",4096,0],[\"/app/train\",\"train_step\",512,0]]}");
    line(s, fmt, "cudaStreamSynchronize_v3020", 1, 1000, 2000, "[[1,\"step\"]]", 1);
    line(s, fmt, "cudaStreamSynchronize_v3020", 2, 3000, 4000, "[[1,\"step\"]]", 1);
    line(s, fmt, "cudaStreamQuery_v3020", 3, 4100, 4200, "[[1,\"step\"]]", 1);
    line(s, "{\"t\":\"range\",\"tid\":1,\"id\":1,\"name\":\"step\",\"start\":900,\"end\":5000,"
            "\"depth\":0}");
    line(s, fmt, "cudaStreamSynchronize_v3020", 4, 6000, 7000, "[[2,\"step\"]]", 1);
    line(s, fmt, "cudaMemcpy_v3020", 5, 7100, 7200, "[[2,\"step\"],[3,\"inner\"]]", 1);
    line(s, fmt, "cudaFree_v3020", 6, 7300, 7400, "[[2,\"step\"],[3,\"inner\"]]", -1);
    line(s, "{\"t\":\"range\",\"tid\":1,\"id\":3,\"name\":\"inner\",\"start\":7050,"
            "\"end\":7500,\"depth\":1}");
    line(s, "{\"t\":\"range\",\"tid\":1,\"id\":2,\"name\":\"step\",\"start\":5900,\"end\":8000,"
            "\"depth\":0}");
    line(s, fmt, "cudaDeviceSynchronize_v3020", 7, 9000, 9100, "[]", 1);
    end_line(s);
}

static int gate(sb_audit_run *run, const char *range, long long max, char **msg)
{
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    o.range = range;
    o.max_syncs = max;
    return gate_message(run, &o, msg);
}

static void ranges_and_gate(void **state)
{
    (void)state;
    stream s;
    ranges_stream(&s);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    assert_string_equal(info_of(p, 0)->range, "step");
    assert_string_equal(info_of(p, 4)->range, "inner"); /* innermost */
    assert_string_equal(info_of(p, 6)->range, "");
    assert_int_equal(res_of(p)->blocking, 6);
    const sb_audit_range_info *r1 = sb_audit_find_range_info(res_of(p), 1, 1),
                              *r2 = sb_audit_find_range_info(res_of(p), 1, 2);
    assert_non_null(r1);
    assert_non_null(r2);
    assert_int_equal(r1->blocking, 2);
    assert_int_equal(r2->blocking, 3);
    assert_int_equal(sb_audit_find_range_info(res_of(p), 1, 3)->blocking, 2);
    assert_null(sb_audit_find_range_info(res_of(p), 1, 99));

    char *msg;
    assert_int_equal(gate(run, "step", 3, &msg), 0);
    assert_non_null(strstr(msg, "passed"));
    free(msg);
    assert_int_equal(gate(run, "step", 2, &msg), 1);
    assert_non_null(strstr(msg, "FAILED"));
    assert_non_null(strstr(msg, "'step'"));
    assert_non_null(strstr(msg, "1 of 2 instances"));
    assert_non_null(strstr(msg, "pid 100, 3"));
    assert_non_null(strstr(msg, "train!train_step")); /* the top site in the instance */
    assert_non_null(strstr(msg, "copy-sync"));
    free(msg);
    assert_int_equal(gate(run, "inner", 2, &msg), 0);
    free(msg);
    assert_int_equal(gate(run, "inner", 1, &msg), 1);
    free(msg);
    /* a range never entered: fails */
    assert_int_equal(gate(run, "nope", 100, &msg), 1);
    assert_non_null(strstr(msg, "never entered"));
    free(msg);
    /* the whole run: 6 blocking calls */
    assert_int_equal(gate(run, NULL, 6, &msg), 0);
    free(msg);
    assert_int_equal(gate(run, NULL, 5, &msg), 1);
    assert_non_null(strstr(msg, "6 blocking calls"));
    assert_non_null(strstr(msg, "train!train_step"));
    free(msg);
    /* -1: no gate, even for a range never entered */
    assert_int_equal(gate(run, "nope", -1, &msg), 0);
    free(msg);
    audit_free(run);
}

/* Analyzed, then another process loaded and the run analyzed again: the first process's sums
 * stay as they were (not counted twice), the second's are its own, and the ranges and their
 * instances are summed over both once. */
static void analyzed_again_after_another_process(void **state)
{
    (void)state;
    stream s;
    ranges_stream(&s);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    const double blocked = res_of(p)->blocked_us;
    const long blocking = res_of(p)->blocking, syncs = res_of(p)->counts[SB_AUDIT_SYNC_STREAM];
    const size_t nrows = res_of(p)->nrows;
    assert_int_equal(blocking, 6);
    stream_open(&s);
    proc_line(&s, 200, 1);
    call(&s, "cudaStreamSynchronize_v3020", 1, 1000, 4000);
    end_line(&s);
    load_into(run, &s, "proc-200.jsonl");
    analyze_default(run);
    p = run->procs[0];
    assert_true(res_of(p)->blocked_us == blocked);
    assert_int_equal(res_of(p)->blocking, blocking);
    assert_int_equal(res_of(p)->counts[SB_AUDIT_SYNC_STREAM], syncs);
    assert_int_equal(res_of(p)->nrows, nrows);
    assert_int_equal(res_of(run->procs[1])->blocking, 1);
    assert_true(res_of(run->procs[1])->blocked_us == 3.0);
    /* "step": two instances of process 100 */
    const sb_audit_range_sum *step = NULL;
    for (size_t i = 0; i < analysis_of(run)->nrange_sums; i++)
        if (!strcmp(analysis_of(run)->range_sums[i].name, "step"))
            step = &analysis_of(run)->range_sums[i];
    assert_non_null(step);
    assert_int_equal(step->instances, 2);
    assert_int_equal(step->total_blocking, 5);
    audit_free(run);
}

/* A killed process: the ranges its calls name count as instances though never written. */
static void range_without_record(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    line(&s, "{\"t\":\"call\",\"api\":\"cudaDeviceSynchronize\",\"dom\":\"rt\",\"tid\":4,"
             "\"ctx\":1,\"corr\":1,\"start\":10,\"end\":20,\"ranges\":[[5,\"step\"]],"
             "\"stack\":-1}");
    sb_audit_run *run = analyzed(&s);
    assert_int_equal(run->procs[0]->complete, 0);
    char *msg;
    /* its records are cut short: the gate cannot pass, whatever the counts */
    assert_int_equal(gate(run, "step", 1, &msg), 1);
    assert_non_null(strstr(msg, "pid 100: records incomplete: its records end without an end "
                                "record"));
    free(msg);
    assert_int_equal(gate(run, "step", 0, &msg), 1);
    free(msg);
    audit_free(run);
}

/* A recorded range and calls that name unrecorded ones before it: each instance once, however
 * the unrecorded ones sort (the JSON "ranges" and the gate count what the calls name). */
static void unrecorded_before_recorded(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    const char *fmt = "{\"t\":\"call\",\"api\":\"cudaDeviceSynchronize\",\"dom\":\"rt\","
                      "\"tid\":1,\"ctx\":1,\"corr\":%d,\"start\":%d,\"end\":%d,"
                      "\"ranges\":[[%d,\"%s\"]],\"stack\":-1}";
    line(&s, "{\"t\":\"range\",\"tid\":1,\"id\":10,\"name\":\"step\",\"start\":5,\"end\":100,"
             "\"depth\":0}");
    line(&s, fmt, 1, 10, 20, 5, "a");
    line(&s, fmt, 2, 30, 40, 3, "b");
    line(&s, fmt, 3, 50, 60, 10, "step");
    line(&s, fmt, 4, 70, 80, 3, "b");
    end_line(&s);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(p->nranges, 3);
    assert_int_equal(sb_audit_find_range_info(res_of(p), 1, 10)->blocking, 1);
    assert_int_equal(sb_audit_find_range_info(res_of(p), 1, 3)->blocking, 2);
    assert_int_equal(sb_audit_find_range(p, 1, 3)->start, 30); /* the first call's */
    assert_int_equal(analysis_of(run)->nrange_sums, 3);
    for (size_t i = 0; i < analysis_of(run)->nrange_sums; i++)
        assert_int_equal(analysis_of(run)->range_sums[i].instances, 1);
    char *msg;
    assert_int_equal(gate(run, "step", 0, &msg), 1);
    assert_non_null(strstr(msg, "1 of 1 instance of range 'step'"));
    free(msg);
    audit_free(run);
}

/* 200000 blocking calls naming 100000 ranges never recorded (a killed process), at 5000 sites:
 * n log n, the counts as the table's. */
static void many_ranges_and_sites(void **state)
{
    (void)state;
    enum { NCALLS = 200000, NSITES = 5000, NNAMES = 10 };
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    for (int i = 0; i < NSITES; i++)
        line(&s, "{\"t\":\"stack\",\"id\":%d,\"frames\":[[\"/app/train\",\"f%d\",16,0]]}", i, i);
    for (int i = 0; i < NCALLS; i++) {
        int id = NCALLS / 2 - 1 - i / 2; /* descending: every new range sorts first */
        line(&s,
             "{\"t\":\"call\",\"api\":\"cudaDeviceSynchronize\",\"dom\":\"rt\",\"tid\":1,"
             "\"ctx\":1,\"corr\":%d,\"start\":%d,\"end\":%d,\"ranges\":[[%d,\"r%d\"]],"
             "\"stack\":%d}",
             i + 1, 10 * i, 10 * i + 5, id, id % NNAMES, i % NSITES);
    }
    end_line(&s);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(res_of(p)->blocking, NCALLS);
    assert_int_equal(p->nranges, NCALLS / 2);
    assert_int_equal(res_of(p)->nrows, NSITES); /* the calls at one site name ranges of one name */
    for (size_t i = 0; i < p->nranges; i++)
        assert_int_equal(res_of(p)->ranges[i].blocking, 2);
    assert_int_equal(analysis_of(run)->nrange_sums, NNAMES);
    for (size_t i = 0; i < analysis_of(run)->nrange_sums; i++) {
        assert_int_equal(analysis_of(run)->range_sums[i].instances, NCALLS / 2 / NNAMES);
        assert_int_equal(analysis_of(run)->range_sums[i].total_blocking, NCALLS / NNAMES);
        assert_int_equal(analysis_of(run)->range_sums[i].max_blocking, 2);
    }
    char *msg;
    assert_int_equal(gate(run, "r3", 2, &msg), 0);
    assert_non_null(strstr(msg, "10000 instances of range 'r3'"));
    free(msg);
    assert_int_equal(gate(run, "r3", 1, &msg), 1);
    assert_non_null(strstr(msg, "10000 of 10000 instances"));
    assert_non_null(strstr(msg, "      40  sync-device    train!f"));
    free(msg);
    assert_int_equal(gate(run, NULL, NCALLS - 1, &msg), 1);
    /* every site: 40 blocking calls, as the table counts them (over its ranges) */
    assert_non_null(strstr(msg, "      40  sync-device    train!f"));
    assert_null(strstr(msg, "      41  "));
    free(msg);
    char *buf = table_text(run);
    assert_non_null(strstr(buf, "sync-device       200000"));
    assert_non_null(strstr(buf, "\n       40  sync-device    r"));
    free(buf);
    audit_free(run);
}

/* A formatted text that does not fit is cut on a character boundary; invalid bytes become '?'. */
static void utf8_fmt(void **state)
{
    (void)state;
    char buf[8];
    sb_audit_fmt(buf, sizeof buf, "%s", "ab\xff\xc3\xa9\xc3\xa9");
    assert_string_equal(buf, "ab?\xc3\xa9\xc3\xa9");
    sb_audit_fmt(buf, 7, "%s", "ab\xff\xc3\xa9\xc3\xa9");
    assert_string_equal(buf, "ab?\xc3\xa9");
    sb_audit_fmt(buf, 6, "%s", "\xe2\x82\xac\xe2\x82\xac"); /* euro signs */
    assert_string_equal(buf, "\xe2\x82\xac");
    sb_audit_fmt(buf, sizeof buf, "x%dy", 1);
    assert_string_equal(buf, "x1y");
}

static void sites(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    line(&s, "{\"t\":\"stack\",\"id\":1,\"frames\":["
             "[\"/usr/lib/x86_64-linux-gnu/libcuda.so.1\",\"\",74565,0],"
             "[\"/opt/libcupti.so.13\",\"cuptiFoo\",1,0],"
             "[\"/tmp/libsyncbench_audit.so\",\"on_call\",1,0],"
             "[\"/usr/lib/libnvToolsExt.so.1\",\"x\",1,0],"
             "[\"/usr/local/cuda/lib64/libcudart.so.13\",\"cudaStreamSynchronize\",1,0],"
             "[\"/app/train\",\"cudart::cudaApiStreamSynchronize\",1,0],"
             "[\"/app/train\",\"__cudart1234\",1,0],"
             "[\"/app/train\",\"cudaStreamSynchronize\",1,0],"
             "[\"/app/train\",\"cuStreamSynchronize\",1,0],"
             "[\"/app/train\",\"libcudart_static_x\",1,0],"
             "[\"/usr/lib/libtorch_cuda.so\",\"at::native::item\",4660,0],"
             "[\"/app/train\",\"main\",16,0]]}");
    line(&s, "{\"t\":\"stack\",\"id\":2,\"frames\":["
             "[\"/usr/local/cuda/lib64/libcudart.so.13\",\"\",1,0],"
             "[\"/nonexistent/libfoo.so\",\"\",6844,0],[\"/app/train\",\"main\",16,0]]}");
    line(&s, "{\"t\":\"stack\",\"id\":3,\"frames\":["
             "[\"/app/train\",\"cublasSgemm_internal\",1,0]]}");
    line(&s, "{\"t\":\"stack\",\"id\":4,\"frames\":[[\"/usr/lib/libcuda.so\",\"\",1,0]]}");
    line(&s, "{\"t\":\"stack\",\"id\":5,\"frames\":["
             "[\"/lib/libc10_cuda.so\",\"_ZN3c104cuda18device_synchronizeEv\",1,0]]}");
    const char *fmt = "{\"t\":\"call\",\"api\":\"cudaDeviceSynchronize\",\"dom\":\"rt\","
                      "\"tid\":1,\"ctx\":1,\"corr\":%d,\"start\":%d,\"end\":%d,\"stack\":%d}";
    line(&s, fmt, 1, 100, 200, 1);
    line(&s, fmt, 2, 300, 400, 2);
    line(&s, fmt, 3, 500, 600, 3);
    line(&s, fmt, 4, 700, 800, 4);
    line(&s, fmt, 5, 900, 1000, -1);
    line(&s, fmt, 6, 1100, 1200, 77); /* no such stack */
    line(&s, fmt, 7, 1300, 1400, 5);
    end_line(&s);
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    sb_audit_opts o;
    sb_audit_opts_default(&o); /* symbolize on: the objects do not exist, nothing changes */
    assert_int_equal(analyze_run(run, &o), 0);
    const sb_audit_proc *p = run->procs[0];
    assert_string_equal(info_of(p, 0)->site, "libtorch_cuda.so!at::native::item");
    assert_string_equal(info_of(p, 1)->site, "libfoo.so+0x1abc");
    assert_string_equal(info_of(p, 2)->site, "train!cublasSgemm_internal"); /* cu + lowercase */
    assert_string_equal(info_of(p, 3)->site, "?");
    assert_string_equal(info_of(p, 4)->site, "?");
    assert_string_equal(info_of(p, 5)->site, "?");
    /* C++ names read as they were written */
    assert_string_equal(info_of(p, 6)->site, "libc10_cuda.so!c10::cuda::device_synchronize()");
    audit_free(run);
}

__attribute__((noinline)) int sb_test_audit_marker(int x)
{
    return x * 3 + (int)getpid() % 7;
}

/* addr2line resolves a frame of this test binary (a PIE: the offset from its load base). */
static void symbolize_frames(void **state)
{
    (void)state;
    if (access("/usr/bin/addr2line", X_OK) != 0 && system("command -v addr2line >/dev/null"))
        skip();
    Dl_info info;
    assert_true(dladdr((void *)sb_test_audit_marker, &info) != 0);
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    assert_true(n > 0);
    exe[n] = '\0';
    long long off = (long long)((char *)sb_test_audit_marker - (char *)info.dli_fbase);
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    line(&s, "{\"t\":\"stack\",\"id\":1,\"frames\":[[\"%s\",\"\",%lld,%lld]]}", exe, off,
         (long long)(size_t)sb_test_audit_marker);
    call(&s, "cudaStreamSynchronize", 1, 10, 20);
    line(&s, "{\"t\":\"call\",\"api\":\"cudaStreamSynchronize\",\"dom\":\"rt\",\"tid\":1,"
             "\"ctx\":1,\"corr\":2,\"start\":30,\"end\":40,\"stack\":1}");
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    assert_int_equal(analyze_run(run, &o), 0);
    const char *site = info_of(run->procs[0], 1)->site;
    if (!strstr(site, "!sb_test_audit_marker"))
        fail_msg("site %s", site);
    assert_non_null(strstr(site, "test_audit.c:"));
    audit_free(run);
    (void)sb_test_audit_marker(1);
}

static void malformed_lines(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    line(&s, "{\"t\":\"call\",\"api\":\"cudaDeviceSynchronize\",\"dom\":\"rt\",\"tid\":1,"
             "\"ctx\":1,\"corr\":1,\"start\":10,\"end\":20,\"stack\":-1,\"new_field\":[1,2]}");
    line(&s, "{\"t\":\"call\",\"api\":\"cudaDeviceSy"); /* cut mid-line */
    line(&s, "[1,2,3]");
    line(&s, "{\"t\":\"call\",\"api\":\"cudaFree\"}"); /* no times */
    line(&s, "{\"no_t\":1}");
    line(&s, "%s", "");
    line(&s, "{\"t\":\"future_record\",\"x\":1}"); /* a newer writer's: ignored */
    line(&s, "{\"t\":\"call\",\"api\":\"cudaFree\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":2,\"start\":30,\"end\":40,\"stack\":-1}");
    end_line(&s);
    sb_audit_run *run = analyzed(&s);
    const sb_audit_proc *p = run->procs[0];
    assert_int_equal(p->malformed, 4);
    assert_int_equal(p->ncalls, 2);
    assert_int_equal(res_of(p)->blocking, 2);
    assert_int_equal(p->complete, 1);
    char *buf = table_text(run);
    assert_non_null(strstr(buf, "pid 100: 4 malformed lines skipped"));
    assert_null(strstr(buf, "no end record"));
    free(buf);
    audit_free(run);
}

static void incomplete_stream(void **state)
{
    (void)state;
    stream s;
    stream_open(&s);
    proc_line(&s, 4242, -1);
    call(&s, "cudaDeviceSynchronize", 1, 10, 20);
    sb_audit_run *run = load_into(NULL, &s, "proc-4242.jsonl");
    analyze_default(run);
    assert_int_equal(run->procs[0]->complete, 0);
    sb_audit_set_wall(run, "python3 train.py", 1.5, 0);
    char *buf = table_text(run);
    assert_non_null(strstr(buf,
                           "pid 4242: records incomplete: its records end without an end "
                           "record (killed, or the disk full); what was recorded is reported"));
    assert_non_null(strstr(buf, "python3 train.py"));
    assert_non_null(strstr(buf, "sync-device"));
    free(buf);
    audit_free(run);
}

static void no_cuda(void **state)
{
    (void)state;
    sb_audit_run *run = sb_audit_run_new();
    sb_audit_set_wall(run, "ls -l", 0.01, 0);
    analyze_default(run);
    assert_int_equal(sb_audit_nprocs(run), 0);
    char *buf = table_text(run);
    assert_non_null(strstr(buf, "ls -l never initialized CUDA: nothing to audit"));
    free(buf);
    char *msg; /* nothing was watched: the gate fails (issue 47, item 7) ... */
    assert_int_equal(gate(run, NULL, 0, &msg), 1);
    assert_non_null(strstr(msg, "FAILED: no process initialized CUDA"));
    free(msg);
    sb_audit_opts o; /* ... unless --allow-no-cuda: 0 blocking calls <= 0 */
    sb_audit_opts_default(&o);
    o.max_syncs = 0;
    o.allow_no_cuda = 1;
    assert_int_equal(gate_message(run, &o, &msg), 0);
    assert_non_null(strstr(msg, "nothing was watched"));
    free(msg);
    audit_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(base_names),
        cmocka_unit_test(classes_from_names),
        cmocka_unit_test(copies),
        cmocka_unit_test(waited_rule),
        cmocka_unit_test(bubbles),
        cmocka_unit_test(without_kernels),
        cmocka_unit_test(median_p95),
        cmocka_unit_test(ranges_and_gate),
        cmocka_unit_test(analyzed_again_after_another_process),
        cmocka_unit_test(range_without_record),
        cmocka_unit_test(unrecorded_before_recorded),
        cmocka_unit_test(many_ranges_and_sites),
        cmocka_unit_test(utf8_fmt),
        cmocka_unit_test(sites),
        cmocka_unit_test(symbolize_frames),
        cmocka_unit_test(malformed_lines),
        cmocka_unit_test(incomplete_stream),
        cmocka_unit_test(no_cuda),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
