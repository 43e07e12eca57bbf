/* Syncs made inside a library (issue 35), on recorded stacks: the user's line and the line
 * inside the library that made the call (the innermost Python frame), each distinct library
 * line its own row under the user's line in every report and the gate; the fix of a sync inside
 * a library's own code says so; the library rules match only their own library's files; and
 * native frames are named only by a symbol that covers their address. */
#include "audit_stream.h"
#include "tmpdir.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#define PKGS "/lib/python3.12/site-packages/"
#define GEN "transformers/generation/utils.py"
#define MASK "transformers/masking_utils.py"
#define GPT2 "transformers/models/gpt2/modeling_gpt2.py"
#define TORCH_CTX "torch/utils/_contextlib.py"
#define TORCH_CUDA "torch/cuda/__init__.py"

/* The files the stacks name, under tmpdir: the user's script and the installed packages'. */
static const struct {
    const char *path; /* under tmpdir */
    const char *text;
} FILES[] = {
    {"/train.py", "import torch\n"
                  "model = build()\n"
                  "ids = prompt()\n"
                  "for _ in range(5):\n"
                  "    out = model.generate(ids, max_new_tokens=48)\n" /* 5 */
                  "    print(out.shape)\n"
                  "    loss = out.float().mean().item()\n" /* 7 */
                  "    torch.cuda.synchronize()\n"},       /* 8 */
    {PKGS GEN, "    def _has_unfinished_sequences(self, this_peer_finished, synced_gpus):\n"
               "        if synced_gpus:\n"
               "        elif this_peer_finished:\n" /* 3 */
               "            return False\n"
               "            streamer.put(next_tokens.cpu())\n" /* 5 */
               "        torch.cuda.synchronize()\n"},          /* 6 */
    {PKGS MASK, "def _ignore_causal_mask_sdpa(padding_mask, query_length, kv_length):\n"
                "    if padding_mask is not None and padding_mask.all():\n"}, /* 2 */
    {PKGS GPT2, "        attn_output = self.c_proj(attn_output)\n"},
    {PKGS TORCH_CTX, "            return func(*args, **kwargs)\n"},
    {PKGS TORCH_CUDA, "        return torch._C._cuda_synchronize()\n"},
};

static int setup(void **state)
{
    if (make_tmpdir(state) != 0)
        return -1;
    for (size_t i = 0; i < sizeof FILES / sizeof FILES[0]; i++) {
        char path[512], cmd[600];
        snprintf(path, sizeof path, "%s%s", tmpdir, FILES[i].path);
        snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
        if (system(cmd) != 0)
            return -1;
        FILE *f = fopen(path, "w");
        if (!f)
            return -1;
        fputs(FILES[i].text, f);
        fclose(f);
    }
    return 0;
}

/* A Python frame's JSON: file under tmpdir, function, line (in a pool that outlives a run's
 * kinds). */
static const char *F(const char *file, const char *func, int line)
{
    static char pool[128][512];
    static int next;
    char *buf = pool[next++ % 128];
    snprintf(buf, sizeof pool[0], "[\"%s%s\",\"%s\",%d]", tmpdir, file, func, line);
    return buf;
}

#define USER(line) F("/train.py", "main", line)

#define SYM_BRANCH                                                                                 \
    "_ZN2at6native10is_nonzeroERKNS_6TensorE\"],[\"/venv/lib/libtorch_cuda.so\","                  \
    "\"_ZN2at6native24_local_scalar_dense_cudaERKNS_6TensorE"
#define SYM_SCALAR "_ZN2at6native24_local_scalar_dense_cudaERKNS_6TensorE"
#define SYM_DEVSYNC "_ZN3c104cuda18device_synchronizeEv"

/* One kind of call: its API, its native symbols (in libtorch_cuda, or "" in libcublas) and its
 * Python stack (innermost first); calls of it, each `n` times. */
typedef struct {
    const char *api, *sym;
    const char *frames[7];
    int n;
} kind;

enum { STOP, MASKING, CUBLAS, LIB_SYNC, USER_ITEM, USER_SYNC, NKINDS };

static void kinds(kind *k)
{
    k[STOP] = (kind){"cudaStreamSynchronize",
                     SYM_BRANCH,
                     {F(PKGS GEN, "_has_unfinished_sequences", 3), F(PKGS GEN, "_sample", 40),
                      F(PKGS GEN, "generate", 20), F(PKGS TORCH_CTX, "decorate_context", 1),
                      USER(5), "[\"<frozen runpy>\",\"_run_code\",88]"},
                     3};
    k[MASKING] = (kind){"cudaStreamSynchronize",
                        SYM_BRANCH,
                        {F(PKGS MASK, "_ignore_causal_mask_sdpa", 2), F(PKGS GPT2, "forward", 1),
                         F(PKGS GEN, "_sample", 41), F(PKGS GEN, "generate", 20), USER(5)},
                        2};
    k[CUBLAS] = (kind){
        "cudaFree", "", {F(PKGS GPT2, "forward", 1), F(PKGS GEN, "_sample", 41), USER(5)}, 1};
    k[LIB_SYNC] = (kind){"cudaDeviceSynchronize",
                         SYM_DEVSYNC,
                         {F(PKGS TORCH_CUDA, "synchronize", 1), F(PKGS GEN, "_prefill", 6),
                          F(PKGS GEN, "generate", 20), USER(5)},
                         1};
    k[USER_ITEM] = (kind){"cudaStreamSynchronize", SYM_SCALAR, {USER(7)}, 1};
    k[USER_SYNC] = (kind){
        "cudaDeviceSynchronize", SYM_DEVSYNC, {F(PKGS TORCH_CUDA, "synchronize", 1), USER(8)}, 1};
}

/* A run of every kind's calls, analyzed with --py-site user (innermost 0) or innermost. */
static sb_audit_run *library_run(int innermost)
{
    kind k[NKINDS];
    kinds(k);
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    long corr = 1;
    for (int i = 0; i < NKINDS; i++) {
        char frames[4096] = "";
        size_t len = 0;
        for (int f = 0; f < 7 && k[i].frames[f]; f++)
            len += (size_t)snprintf(frames + len, sizeof frames - len, "%s%s", f ? "," : "",
                                    k[i].frames[f]);
        line(&s, "{\"t\":\"pystack\",\"id\":%d,\"frames\":[%s]}", i, frames);
        line(&s, "{\"t\":\"stack\",\"id\":%d,\"frames\":[[\"%s\",\"%s\",4096,0]]}", i,
             k[i].sym[0] ? "/venv/lib/libtorch_cuda.so" : "/usr/local/cuda/lib64/libcublas.so.13",
             k[i].sym);
        for (int n = 0; n < k[i].n; n++, corr++)
            line(&s,
                 "{\"t\":\"call\",\"api\":\"%s\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
                 "\"corr\":%ld,\"start\":%ld,\"end\":%ld,\"stack\":%d,\"py\":%d}",
                 k[i].api, corr, corr * 1000, corr * 1000 + 500, i, i);
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

/* The first call of kind k (calls are written kind by kind). */
static const sb_audit_call_info *call_of(const sb_audit_run *run, int k)
{
    kind all[NKINDS];
    kinds(all);
    size_t i = 0;
    for (int j = 0; j < k; j++)
        i += (size_t)all[j].n;
    return info_of(run->procs[0], i);
}

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* The call's line inside a library ("" none), the library ("" none), its operation's start. */
static void assert_made(const sb_audit_call_info *c, const char *via_site, const char *library,
                        const char *op)
{
    assert_string_equal(c->made->via_site, via_site);
    assert_string_equal(c->made->library, library);
    if (!starts(c->made->op, op))
        fail_msg("operation '%s' is not '%s...'", c->made->op, op);
}

static const char *user_site(int line)
{
    static char buf[512];
    snprintf(buf, sizeof buf, "%s/train.py:%d in main", tmpdir, line);
    return buf;
}

static void a_sync_inside_an_installed_package_gets_both_frames(void **state)
{
    (void)state;
    sb_audit_run *run = library_run(0);
    const sb_audit_call_info *c = call_of(run, STOP);
    assert_string_equal(c->site, user_site(5));
    assert_string_equal(c->source, "out = model.generate(ids, max_new_tokens=48)");
    assert_non_null(c->made->via);
    assert_int_equal(c->made->via->line, 3);
    assert_string_equal(c->made->via->func, "_has_unfinished_sequences");
    assert_made(c, GEN ":3 in _has_unfinished_sequences", "transformers",
                "inside transformers: generate()'s stopping check after every token");
    assert_string_equal(c->made->via_source, "elif this_peer_finished:");
    assert_non_null(strstr(c->made->fix, "transformers' generate() reads on the host"));
    assert_non_null(strstr(c->made->fix, "no option of generate() skips it"));
    assert_string_equal(c->rule->scenario, "device-branch");

    /* the JSON: both frames, the via file as recorded (absolute) */
    json_t *doc = json_report(run);
    json_t *row = NULL, *r;
    size_t i;
    json_array_foreach(json_object_get(doc, "rows"), i, r)
    {
        json_t *via = json_object_get(r, "via");
        if (json_is_object(via) && json_integer_value(json_object_get(via, "line")) == 3)
            row = r;
    }
    assert_non_null(row);
    json_t *via = json_object_get(row, "via");
    char want[600];
    snprintf(want, sizeof want, "%s" PKGS GEN, tmpdir);
    assert_string_equal(json_string_value(json_object_get(via, "file")), want);
    assert_string_equal(json_string_value(json_object_get(via, "function")),
                        "_has_unfinished_sequences");
    assert_string_equal(json_string_value(json_object_get(via, "source")),
                        "elif this_peer_finished:");
    assert_string_equal(json_string_value(json_object_get(row, "library")), "transformers");
    assert_int_equal(json_integer_value(json_object_get(row, "count")), 3);
    json_t *py = json_object_get(row, "python");
    assert_int_equal(json_integer_value(json_object_get(py, "line")), 5);
    json_decref(doc);

    /* the CSV: the via columns, the library, the phase and where the site comes from */
    char *csv = csv_text(run);
    snprintf(want, sizeof want,
             ",%s" PKGS GEN ",3,_has_unfinished_sequences,elif "
             "this_peer_finished:,transformers,run,python,,,,,\n",
             tmpdir);
    assert_non_null(strstr(csv, want));
    free(csv);

    /* the trace: the call's args carry the via line and the library */
    char *trace = report_text(run, AS_TRACE, NULL, NULL);
    assert_non_null(strstr(trace, "\"via\":\"" GEN ":3 in _has_unfinished_sequences\""));
    assert_non_null(strstr(trace, "\"library\":\"transformers\""));
    free(trace);
    audit_free(run);
}

static void distinct_library_lines_are_distinct_rows_under_the_user_line(void **state)
{
    (void)state;
    sb_audit_run *run = library_run(0);
    const sb_audit_proc *p = run->procs[0];
    const char *vias[] = {GEN ":3 in _has_unfinished_sequences",
                          MASK ":2 in _ignore_causal_mask_sdpa", GPT2 ":1 in forward",
                          TORCH_CUDA ":1 in synchronize"};
    const long counts[] = {3, 2, 1, 1};
    int seen = 0;
    for (size_t i = 0; i < res_of(p)->nrows; i++) {
        const sb_audit_row *r = &res_of(p)->rows[i];
        if (strcmp(r->site, user_site(5)) != 0)
            continue;
        int k = 0;
        while (k < 4 && strcmp(r->made.via_site, vias[k]) != 0)
            k++;
        assert_true(k < 4);
        assert_int_equal(r->count, counts[k]);
        assert_false(seen & 1 << k); /* one row each */
        seen |= 1 << k;
    }
    assert_int_equal(seen, 15);

    /* the masking line: torch's operation, a fix that says it is inside transformers */
    const sb_audit_call_info *c = call_of(run, MASKING);
    assert_non_null(strstr(c->made->op, "Python branch on a GPU value"));
    /* its line is transformers 4's, not the one the framework table checked: not known */
    assert_true(starts(c->made->fix, "inside transformers (_ignore_causal_mask_sdpa): the line "
                                     "differs from the one syncbench checked on transformers"));
    assert_non_null(strstr(c->made->fix, "not known to syncbench; no option in your code is known "
                                         "to remove it; for the library's authors: keep the "
                                         "decision on the GPU"));
    c = call_of(run, CUBLAS); /* a CUDA library called by transformers' code */
    assert_non_null(strstr(c->made->op, "inside a CUDA library"));
    assert_true(starts(c->made->fix, "inside transformers (forward): not in syncbench's framework "
                                     "table"));

    /* the table: the user's line once, with its total, each library line indented under it */
    char *t = table_text(run);
    char want[1200];
    snprintf(want, sizeof want,
             "%9d  %-14s %-20s %10s  %s\n%59s| out = model.generate(ids, max_new_tokens=48)\n"
             "%9d  %-14s %-20s %10s    via " GEN ":3 in _has_unfinished_sequences\n"
             "%61s| elif this_peer_finished:\n"
             "%61swhat: inside transformers: generate()'s stopping check",
             7, "", "", "-", user_site(5), "", 3, "sync-stream", "-", "", "", "");
    if (!strstr(t, want))
        fail_msg("not in the table:\n%s\n---\n%s", want, t);
    assert_non_null(strstr(t, "    via " MASK ":2 in _ignore_causal_mask_sdpa\n"));
    free(t);

    /* the gate's message lists the library lines under the user's */
    char *msg = gate_failed(run);
    snprintf(want, sizeof want,
             "  %8d  %-14s %s  (inside transformers: generate()'s stopping check after every "
             "token)\n  %8s  %-14s   via " GEN ":3 in _has_unfinished_sequences\n",
             3, "sync-stream", user_site(5), "", "");
    if (!strstr(msg, want))
        fail_msg("not in the gate's message:\n%s\n---\n%s", want, msg);
    free(msg);
    audit_free(run);
}

/* torch's own Python is how its operations are called: a sync under torch's frames alone keeps
 * its rule's fix; torch called from a library's code is inside that library. A sync of the
 * user's own line has no second frame. */
static void torch_frames_are_not_a_library(void **state)
{
    (void)state;
    sb_audit_run *run = library_run(0);
    const sb_audit_call_info *c = call_of(run, USER_SYNC);
    assert_string_equal(c->site, user_site(8));
    assert_made(c, TORCH_CUDA ":1 in synchronize", "", "explicit sync: torch.cuda.synchronize()");
    assert_string_equal(c->made->fix, c->rule->fix);
    c = call_of(run, LIB_SYNC);
    assert_made(c, TORCH_CUDA ":1 in synchronize", "transformers",
                "explicit sync: torch.cuda.synchronize()");
    assert_true(starts(c->made->fix, "inside transformers (_prefill): "));
    c = call_of(run, USER_ITEM);
    assert_null(c->made->via);
    assert_made(c, "", "", "scalar read: .item()");
    char *t = table_text(run);
    assert_non_null(strstr(t, "| loss = out.float().mean().item()"));
    free(t);
    audit_free(run);
}

/* --py-site innermost: the library's line is the site; no second frame, the same operation. */
static void innermost_site_is_the_library_line(void **state)
{
    (void)state;
    sb_audit_run *run = library_run(1);
    const sb_audit_call_info *c = call_of(run, STOP);
    char want[600];
    snprintf(want, sizeof want, "%s" PKGS GEN ":3 in _has_unfinished_sequences", tmpdir);
    assert_string_equal(c->site, want);
    assert_null(c->made->via);
    assert_made(c, "", "transformers",
                "inside transformers: generate()'s stopping check after every token");
    audit_free(run);
}

static void packages_by_path(void **state)
{
    (void)state;
    char pkg[64];
    assert_string_equal(
        sb_audit_py_package("/v/lib/python3.12/site-packages/transformers/a/b.py", pkg, sizeof pkg),
        "transformers");
    assert_string_equal(
        sb_audit_py_package("/usr/lib/python3/dist-packages/six.py", pkg, sizeof pkg), "six");
    assert_string_equal(sb_audit_py_package("/usr/lib/python3.12/threading.py", pkg, sizeof pkg),
                        "");
    assert_string_equal(sb_audit_py_package("/home/me/train.py", pkg, sizeof pkg), "");
    /* the innermost package frame before the user's code, torch and the standard library
     * passed over */
    sb_audit_pyframe f[] = {{"/v/site-packages/torch/cuda/__init__.py", "synchronize", 1},
                            {"/usr/lib/python3.12/contextlib.py", "inner", 2},
                            {"/v/site-packages/accelerate/hooks.py", "forward", 3},
                            {"/home/me/train.py", "main", 4},
                            {"/v/site-packages/pytest/main.py", "run", 5}};
    sb_audit_pystack s = {1, 5, f};
    assert_ptr_equal(sb_audit_py_lib_frame(&s, pkg, sizeof pkg), &f[2]);
    assert_string_equal(pkg, "accelerate");
    s.frames = &f[3]; /* the user's code innermost: no library */
    s.nframes = 2;
    assert_null(sb_audit_py_lib_frame(&s, pkg, sizeof pkg));
    assert_string_equal(pkg, "");
}

/* The first alternative of a rule's condition ("a|b" -> "a"), or "" when none. */
static const char *first_alt(const char *alts, char *buf, size_t n)
{
    snprintf(buf, n, "%.*s", alts ? (int)strcspn(alts, "|") : 0, alts ? alts : "");
    return buf;
}

/* Does rule r hold for a call whose every condition but the library's file is met, made by a
 * frame of `maker` (a path under an installed package) over the user's line? */
static int holds_made_in(const sb_audit_rule *r, const char *maker)
{
    char api[128], sym[256], source[256], copy[32], pkg[64];
    first_alt(r->source, source, sizeof source);
    sb_audit_frame nf = {"/venv/lib/libtorch_cuda.so", first_alt(r->native, sym, sizeof sym), 0, 0};
    sb_audit_stack st = {1, 1, &nf};
    sb_audit_pyframe pf[] = {{maker, "f", 1}, {"/home/me/train.py", "main", 2}};
    sb_audit_pystack ps = {1, 2, pf};
    sb_audit_proc p = {.stacks = &st, .nstacks = 1, .pystacks = &ps, .npystacks = 1};
    sb_audit_call c = {.api = r->api ? first_alt(r->api, api, sizeof api) : "cudaStreamSynchronize",
                       .stack = 1,
                       .py = 1,
                       .copy = r->copy ? first_alt(r->copy, copy, sizeof copy) : NULL};
    sb_audit_made made = {
        .via = &pf[0], .via_site = "", .via_source = source, .lib_source = source, .library = ""};
    made.lib = sb_audit_py_lib_frame(&ps, pkg, sizeof pkg);
    sb_audit_call_info ci = {.pyframe = &pf[1], .source = "", .made = &made};
    return sb_audit_rule_holds(r, &p, &c, &ci);
}

/* Every rule of a library (`lib`) names that library in its operation and its fix, and holds
 * only for its own library's files: not for another package's, not for the user's code. */
static void every_library_rule_matches_only_its_own_library(void **state)
{
    (void)state;
    int libs = 0;
    for (const sb_audit_rule *r = sb_audit_rules; r->op; r++) {
        if (!r->lib)
            continue;
        libs++;
        char own[256], name[64], other[512];
        first_alt(r->lib, own, sizeof own);
        snprintf(name, sizeof name, "inside %.*s", (int)strcspn(own, "/"), own);
        if (strncmp(r->op, name, strlen(name)) != 0)
            fail_msg("rule '%s' does not start with '%s'", r->op, name);
        if (!strstr(r->fix, name + strlen("inside ")))
            fail_msg("the fix of rule '%s' does not name its library", r->op);
        const char *x = own[strlen(own) - 1] == '/' ? "x.py" : "";
        snprintf(other, sizeof other, "/v" PKGS "%s%s", own, x);
        if (!holds_made_in(r, other))
            fail_msg("rule '%s' does not hold in its own file %s", r->op, other);
        snprintf(other, sizeof other, "/v" PKGS "otherlib/%s%s", own, x);
        if (holds_made_in(r, other))
            fail_msg("rule '%s' holds in another library's file %s", r->op, other);
        snprintf(other, sizeof other, "/home/me/%s%s", own, x);
        if (holds_made_in(r, other))
            fail_msg("rule '%s' holds in the user's code %s", r->op, other);
    }
    assert_true(libs >= 3);
}

/* ---- every rule in its own library (issue 39): the same name in a stranger's never fires ---- */

/* Every rule that matches a native symbol names its library (the file a frame lies in), and every
 * rule that matches a library's Python frame its package (the file's first path component): a
 * symbol or a function alone would fire on a stranger's code of the same name. */
static void every_rule_that_matches_a_frame_names_its_library(void **state)
{
    (void)state;
    int native = 0, python = 0;
    for (const sb_audit_rule *r = sb_audit_rules; r->op; r++) {
        assert_non_null(r->fix);
        if (r->native && !r->object)
            fail_msg("rule '%s' matches the symbol '%s' in any library", r->op, r->native);
        if (r->pyfunc && !r->pyfile)
            fail_msg("rule '%s' matches the function '%s' in any file", r->op, r->pyfunc);
        const char *conds[] = {r->api,    r->native, r->object, r->pyfile,
                               r->pyfunc, r->source, r->copy,   r->lib};
        for (size_t i = 0; i < sizeof conds / sizeof conds[0]; i++)
            if (conds[i] && (!conds[i][0] || strstr(conds[i], "||") || conds[i][0] == '|' ||
                             conds[i][strlen(conds[i]) - 1] == '|'))
                fail_msg("rule '%s': an empty alternative in '%s'", r->op, conds[i]);
        for (const char *a = r->pyfile; a && *a;) {
            size_t n = strcspn(a, "|"), pkg = strcspn(a, "/");
            if (pkg == 0 || pkg >= n)
                fail_msg("rule '%s': '%.*s' names no package", r->op, (int)n, a);
            a += n + (a[n] == '|');
        }
        native += r->object != NULL;
        python += r->pyfile != NULL;
    }
    assert_true(native >= 10 && python >= 8);
}

/* Where a call's frames are: its native frame (library file, symbol) and its Python frame (file,
 * function; file NULL: none) over the user's line. */
typedef struct {
    const char *obj, *sym, *file, *func;
} frames_at;

/* A call that meets every condition of rule r, its frames at w. */
typedef struct {
    sb_audit_frame nf[2];
    sb_audit_stack st;
    sb_audit_pyframe pf[2];
    sb_audit_pystack ps;
    sb_audit_proc p;
    sb_audit_call c;
    sb_audit_call_info ci;
    char api[128], source[256], copy[32];
} rule_call;

static void rule_call_at(rule_call *k, const sb_audit_rule *r, frames_at w)
{
    memset(k, 0, sizeof *k);
    /* the innermost frame CUDA's own, as recorded; the library's next */
    k->nf[0] = (sb_audit_frame){"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "", 4096, 0};
    k->nf[1] = (sb_audit_frame){w.obj, w.sym, 16, 0};
    k->st = (sb_audit_stack){1, 2, k->nf};
    k->pf[0] = (sb_audit_pyframe){w.file, w.func, 1};
    k->pf[1] = (sb_audit_pyframe){"/home/me/train.py", "main", 2};
    k->ps = (sb_audit_pystack){1, w.file ? 2 : 1, w.file ? k->pf : &k->pf[1]};
    k->p = (sb_audit_proc){.stacks = &k->st, .nstacks = 1, .pystacks = &k->ps, .npystacks = 1};
    /* a rule that needs no API is tried with one that no rule names */
    k->c = (sb_audit_call){.api = r->api ? first_alt(r->api, k->api, sizeof k->api)
                                         : "cuStreamDestroy_v2",
                           .stack = 1,
                           .py = 1,
                           .copy = r->copy ? first_alt(r->copy, k->copy, sizeof k->copy) : NULL};
    k->ci = (sb_audit_call_info){.pyframe = &k->pf[1],
                                 .source = first_alt(r->source, k->source, sizeof k->source)};
}

/* Does rule r name a frame (else it says what the API, the copy and the lines' text alone say)? */
static int names_a_frame(const sb_audit_rule *r)
{
    return r->native || r->object || r->pyfile || r->pyfunc || r->lib;
}

/* The rule's call with its frames in a stranger's code: r does not hold, no rule that names a
 * frame does, and when no rule holds the call is unknown, its site the stranger's native frame. */
static void assert_stranger(const sb_audit_rule *r, frames_at w, const char *what)
{
    rule_call k;
    rule_call_at(&k, r, w);
    if (sb_audit_rule_holds(r, &k.p, &k.c, &k.ci))
        fail_msg("rule '%s' holds for %s", r->op, what);
    const sb_audit_rule *got = sb_audit_rule_for(&k.p, &k.c, &k.ci);
    if (got && names_a_frame(got))
        fail_msg("%s is named '%s' (rule '%s' tried)", what, got->op, r->op);
    if (got)
        return;
    sb_audit_run *run = sb_audit_run_new();
    assert_non_null(run);
    char want[600];
    const char *name = strrchr(w.obj, '/') + 1;
    if (w.sym[0])
        snprintf(want, sizeof want, "%s!%s", name, w.sym);
    else
        snprintf(want, sizeof want, "%s+0x10", name);
    assert_string_equal(sb_audit_site(&run->strs, &k.st), want);
    audit_free(run);
}

/* Alternative i of a condition ("a|b|c", 1 -> "b"), into buf; its first when it has fewer, ""
 * when none. *more is set when it has an alternative i. */
static const char *alt_at(const char *alts, int i, char *buf, size_t n, int *more)
{
    const char *a = alts ? alts : "";
    int k = 0;
    for (; k < i && a[strcspn(a, "|")]; k++)
        a += strcspn(a, "|") + 1;
    if (k < i)
        a = alts ? alts : "";
    else if (alts)
        *more = 1;
    snprintf(buf, n, "%.*s", (int)strcspn(a, "|"), a);
    return buf;
}

/* The file of a library named by an `object` alternative ("libtorch_cuda" -> libtorch_cuda.so.1,
 * "_jax." -> _jax.so), under dir. */
static const char *library_file(char *buf, size_t n, const char *dir, const char *lib)
{
    const char *tail = strstr(lib, ".so") ? "" : lib[strlen(lib) - 1] == '.' ? "so" : ".so.1";
    snprintf(buf, n, "%s%s%s", dir, lib, tail);
    return buf;
}

/* The rule's native frame in strangers' files: another library, a file whose name holds the
 * library's but is another, a file in a folder of the library's name. */
static void assert_native_strangers(const sb_audit_rule *r, frames_at w)
{
    char bad[3][600];
    const char *name = strrchr(w.obj, '/') + 1;
    snprintf(bad[0], sizeof bad[0], "/opt/app/libstranger.so");
    snprintf(bad[1], sizeof bad[1], "/opt/app/not_%s", name);
    snprintf(bad[2], sizeof bad[2], "/venv/lib/%s.d/libstranger.so", name);
    for (int i = 0; i < 3; i++) {
        w.obj = bad[i];
        assert_stranger(r, w, bad[i]);
    }
}

/* Every rule that names a frame, each alternative of its library, symbol, package file and
 * function: fires with its frames in its own library's files (and is not behind another rule);
 * not with the same symbol in a stranger's library, nor the same function in another package's
 * file of that path, nor another function of its own file. */
static void every_rule_fires_only_in_its_own_library(void **state)
{
    (void)state;
    int tried = 0;
    for (const sb_audit_rule *r = sb_audit_rules; r->op; r++) {
        if (!r->native && !r->object && !r->pyfile)
            continue; /* `lib` alone: every_library_rule_matches_only_its_own_library */
        for (int i = 0, more = 1; more; i++) {
            char lib[256], sym[256], pyfile[256], func[128], obj[512], file[512], bad[600];
            more = 0;
            alt_at(r->object, i, lib, sizeof lib, &more);
            alt_at(r->native, i, sym, sizeof sym, &more);
            alt_at(r->pyfile, i, pyfile, sizeof pyfile, &more);
            alt_at(r->pyfunc, i, func, sizeof func, &more);
            if (!more)
                break;
            frames_at w = {lib[0] ? library_file(obj, sizeof obj, "/venv/lib/", lib) : "/bin/app",
                           sym, NULL, func[0] ? func : "f"};
            if (pyfile[0]) {
                snprintf(file, sizeof file, "/v" PKGS "%s%s", pyfile,
                         pyfile[strlen(pyfile) - 1] == '/' ? "x.py" : "");
                w.file = file;
            }
            rule_call k;
            rule_call_at(&k, r, w);
            if (!sb_audit_rule_holds(r, &k.p, &k.c, &k.ci))
                fail_msg("rule '%s' does not hold in its own library (%s!%s, %s in %s)", r->op,
                         w.obj, w.sym, w.func, w.file ? w.file : "no Python");
            const sb_audit_rule *won = sb_audit_rule_for(&k.p, &k.c, &k.ci);
            if (strcmp(won->op, r->op) != 0)
                fail_msg("rule '%s' is behind '%s'", r->op, won->op);
            tried++;
            if (r->object)
                assert_native_strangers(r, w);
            if (r->pyfile) {
                frames_at other = w;
                snprintf(bad, sizeof bad, "/v" PKGS "not%s", pyfile);
                other.file = bad;
                assert_stranger(r, other, bad);
            }
            if (r->pyfunc) {
                frames_at other = w;
                other.func = "not_the_function";
                assert_stranger(r, other, "another function of its file");
            }
        }
    }
    assert_true(tried >= 40);
}

/* ---- native names: a symbol only where it covers the address ---- */

/* A stripped library's symbol table, as an ELF file: three functions exported, covered_fn at
 * [0x1000, 0x1100), neighbour at [0x2000, 0x2010), sizeless at 0x3000 with no size. */
static void write_fake_library(const char *path)
{
    static const char dynstr[] = "\0covered_fn\0neighbour\0sizeless\0";
    static const char shstr[] = "\0.dynsym\0.dynstr\0.shstrtab\0";
    Elf64_Sym syms[4] = {{0}};
    const struct {
        uint32_t name;
        uint64_t value, size;
    } def[3] = {{1, 0x1000, 0x100}, {12, 0x2000, 0x10}, {22, 0x3000, 0}};
    for (int i = 0; i < 3; i++)
        syms[i + 1] = (Elf64_Sym){.st_name = def[i].name,
                                  .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC),
                                  .st_shndx = 5,
                                  .st_value = def[i].value,
                                  .st_size = def[i].size};
    size_t off_sym = sizeof(Elf64_Ehdr), off_str = off_sym + sizeof syms;
    size_t off_shstr = off_str + sizeof dynstr, off_sh = (off_shstr + sizeof shstr + 7) & ~7u;
    Elf64_Ehdr h = {.e_type = ET_DYN,
                    .e_machine = EM_X86_64,
                    .e_version = EV_CURRENT,
                    .e_shoff = off_sh,
                    .e_ehsize = sizeof h,
                    .e_shentsize = sizeof(Elf64_Shdr),
                    .e_shnum = 4,
                    .e_shstrndx = 3};
    memcpy(h.e_ident, ELFMAG, SELFMAG);
    h.e_ident[EI_CLASS] = ELFCLASS64;
    h.e_ident[EI_DATA] = ELFDATA2LSB;
    h.e_ident[EI_VERSION] = EV_CURRENT;
    Elf64_Shdr sh[4] = {{0}};
    sh[1] = (Elf64_Shdr){.sh_name = 1,
                         .sh_type = SHT_DYNSYM,
                         .sh_offset = off_sym,
                         .sh_size = sizeof syms,
                         .sh_link = 2,
                         .sh_info = 1,
                         .sh_entsize = sizeof(Elf64_Sym)};
    sh[2] = (Elf64_Shdr){
        .sh_name = 9, .sh_type = SHT_STRTAB, .sh_offset = off_str, .sh_size = sizeof dynstr};
    sh[3] = (Elf64_Shdr){
        .sh_name = 17, .sh_type = SHT_STRTAB, .sh_offset = off_shstr, .sh_size = sizeof shstr};
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fwrite(&h, sizeof h, 1, f);
    fwrite(syms, sizeof syms, 1, f);
    fwrite(dynstr, sizeof dynstr, 1, f);
    fwrite(shstr, sizeof shstr, 1, f);
    for (size_t pad = off_shstr + sizeof shstr; pad < off_sh; pad++)
        fputc(0, f);
    fwrite(sh, sizeof sh, 1, f);
    fclose(f);
}

/* The sites of four calls whose stacks are one frame each, (object, symbol, offset), in a
 * process of a writer that checks sizes (symsize 1) or of an older one. */
static sb_audit_run *native_run(int symsize, const char *const frames[4][3])
{
    stream s;
    stream_open(&s);
    line(&s,
         "{\"t\":\"proc\",\"v\":1,\"pid\":100,\"ppid\":1,\"rank\":-1,\"local_rank\":-1,"
         "\"cmd\":\"x\",\"clock_ns\":0,\"mono_ns\":0,\"mode\":\"count\"%s}",
         symsize ? ",\"symsize\":1" : "");
    for (int i = 0; i < 4; i++) {
        line(&s, "{\"t\":\"stack\",\"id\":%d,\"frames\":[[\"%s\",\"%s\",%s,0]]}", i, frames[i][0],
             frames[i][1], frames[i][2]);
        line(&s,
             "{\"t\":\"call\",\"api\":\"cudaFree\",\"dom\":\"rt\",\"tid\":1,\"ctx\":1,"
             "\"corr\":%d,\"start\":%d,\"end\":%d,\"stack\":%d}",
             i + 1, 100 * i, 100 * i + 50, i);
    }
    end_line(&s);
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    sb_audit_opts o;
    sb_audit_opts_default(&o); /* symbolize on: the object's table, and addr2line when there */
    assert_int_equal(analyze_run(run, &o), 0);
    return run;
}

static void native_names_are_never_a_neighbours(void **state)
{
    (void)state;
    char lib[300];
    snprintf(lib, sizeof lib, "%s/libstripped.so.1", tmpdir);
    write_fake_library(lib);
    sb_elf_syms *e = sb_elf_syms_open(lib);
    assert_non_null(e);
    char buf[64];
    sb_audit_frame at = {lib, "", 0x10ff, 0};
    assert_string_equal(sb_elf_sym_at(e, &at, buf, sizeof buf), "covered_fn");
    at.off = 0x1100; /* one past its end */
    assert_null(sb_elf_sym_at(e, &at, buf, sizeof buf));
    at.off = 0x3000; /* a symbol of unknown size covers nothing */
    assert_null(sb_elf_sym_at(e, &at, buf, sizeof buf));
    sb_elf_syms_free(e);
    assert_null(sb_elf_syms_open("/nonexistent/lib.so"));

    /* recorded without a name (dladdr's neighbour dropped): named where a symbol covers */
    const char *const fresh[4][3] = {
        {lib, "", "4176"}, {lib, "", "8448"}, {lib, "", "12292"}, {lib, "covered_fn", "4176"}};
    sb_audit_run *run = native_run(1, fresh);
    const sb_audit_proc *p = run->procs[0];
    assert_string_equal(info_of(p, 0)->site, "libstripped.so.1!covered_fn");
    assert_string_equal(info_of(p, 1)->site, "libstripped.so.1+0x2100"); /* past neighbour */
    assert_string_equal(info_of(p, 2)->site, "libstripped.so.1+0x3004");
    assert_string_equal(info_of(p, 3)->site, "libstripped.so.1!covered_fn");
    audit_free(run);

    /* an older writer's names: kept where the object's symbol covers the address, dropped where
     * it does not or the object cannot be read */
    const char *const old[4][3] = {{lib, "covered_fn", "4176"},
                                   {lib, "neighbour", "8448"},
                                   {"/nonexistent/libgone.so", "some_fn", "16"},
                                   {lib, "sizeless", "12292"}};
    run = native_run(0, old);
    p = run->procs[0];
    assert_string_equal(info_of(p, 0)->site, "libstripped.so.1!covered_fn");
    assert_string_equal(info_of(p, 1)->site, "libstripped.so.1+0x2100");
    assert_string_equal(info_of(p, 2)->site, "libgone.so+0x10");
    assert_string_equal(info_of(p, 3)->site, "libstripped.so.1+0x3004");
    audit_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_sync_inside_an_installed_package_gets_both_frames),
        cmocka_unit_test(distinct_library_lines_are_distinct_rows_under_the_user_line),
        cmocka_unit_test(torch_frames_are_not_a_library),
        cmocka_unit_test(innermost_site_is_the_library_line),
        cmocka_unit_test(packages_by_path),
        cmocka_unit_test(every_library_rule_matches_only_its_own_library),
        cmocka_unit_test(every_rule_that_matches_a_frame_names_its_library),
        cmocka_unit_test(every_rule_fires_only_in_its_own_library),
        cmocka_unit_test(native_names_are_never_a_neighbours),
    };
    return cmocka_run_group_tests(tests, setup, remove_tmpdir);
}
