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
    assert_int_equal(sb_audit_analyze(run, &o), 0);
    return run;
}

/* The first call of kind k (calls are written kind by kind). */
static const sb_audit_call *call_of(const sb_audit_run *run, int k)
{
    kind all[NKINDS];
    kinds(all);
    size_t i = 0;
    for (int j = 0; j < k; j++)
        i += (size_t)all[j].n;
    return &run->procs[0]->calls[i];
}

static int starts(const char *s, const char *prefix)
{
    return !strncmp(s, prefix, strlen(prefix));
}

/* The call's line inside a library ("" none), the library ("" none), its operation's start. */
static void assert_made(const sb_audit_call *c, const char *via_site, const char *library,
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
    const sb_audit_call *c = call_of(run, STOP);
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

    /* the CSV: the via columns and the library */
    char *csv = csv_text(run);
    snprintf(want, sizeof want,
             ",%s" PKGS GEN ",3,_has_unfinished_sequences,elif "
             "this_peer_finished:,transformers,run\n",
             tmpdir);
    assert_non_null(strstr(csv, want));
    free(csv);

    /* the trace: the call's args carry the via line and the library */
    char *trace = report_text(run, AS_TRACE, NULL, NULL);
    assert_non_null(strstr(trace, "\"via\":\"" GEN ":3 in _has_unfinished_sequences\""));
    assert_non_null(strstr(trace, "\"library\":\"transformers\""));
    free(trace);
    sb_audit_free(run);
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
    for (size_t i = 0; i < p->nrows; i++) {
        const sb_audit_row *r = &p->rows[i];
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
    const sb_audit_call *c = call_of(run, MASKING);
    assert_non_null(strstr(c->made->op, "Python branch on a GPU value"));
    assert_true(starts(c->made->fix, "inside transformers (_ignore_causal_mask_sdpa): an upstream "
                                     "change, or a different call (upstream, the sync-free way: "
                                     "keep the decision on the GPU"));
    c = call_of(run, CUBLAS); /* a CUDA library called by transformers' code */
    assert_non_null(strstr(c->made->op, "inside a CUDA library"));
    assert_true(starts(c->made->fix, "inside transformers (forward): an upstream change"));

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
    sb_audit_free(run);
}

/* torch's own Python is how its operations are called: a sync under torch's frames alone keeps
 * its rule's fix; torch called from a library's code is inside that library. A sync of the
 * user's own line has no second frame. */
static void torch_frames_are_not_a_library(void **state)
{
    (void)state;
    sb_audit_run *run = library_run(0);
    const sb_audit_call *c = call_of(run, USER_SYNC);
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
    sb_audit_free(run);
}

/* --py-site innermost: the library's line is the site; no second frame, the same operation. */
static void innermost_site_is_the_library_line(void **state)
{
    (void)state;
    sb_audit_run *run = library_run(1);
    const sb_audit_call *c = call_of(run, STOP);
    char want[600];
    snprintf(want, sizeof want, "%s" PKGS GEN ":3 in _has_unfinished_sequences", tmpdir);
    assert_string_equal(c->site, want);
    assert_null(c->made->via);
    assert_made(c, "", "transformers",
                "inside transformers: generate()'s stopping check after every token");
    sb_audit_free(run);
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
    sb_audit_stack st = {1, 1, &nf, 1};
    sb_audit_pyframe pf[] = {{maker, "f", 1}, {"/home/me/train.py", "main", 2}};
    sb_audit_pystack ps = {1, 2, pf};
    sb_audit_proc p = {.stacks = &st, .nstacks = 1, .pystacks = &ps, .npystacks = 1};
    sb_audit_call c = {.api = r->api ? first_alt(r->api, api, sizeof api) : "cudaStreamSynchronize",
                       .stack = 1,
                       .py = 1,
                       .copy = r->copy ? first_alt(r->copy, copy, sizeof copy) : NULL,
                       .pyframe = &pf[1],
                       .source = ""};
    sb_audit_made made = {
        .via = &pf[0], .via_site = "", .via_source = source, .lib_source = source, .library = ""};
    made.lib = sb_audit_py_lib_frame(&ps, pkg, sizeof pkg);
    c.made = &made;
    return sb_audit_rule_holds(r, &p, &c);
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
    assert_int_equal(sb_audit_analyze(run, &o), 0);
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
    assert_string_equal(p->calls[0].site, "libstripped.so.1!covered_fn");
    assert_string_equal(p->calls[1].site, "libstripped.so.1+0x2100"); /* past neighbour */
    assert_string_equal(p->calls[2].site, "libstripped.so.1+0x3004");
    assert_string_equal(p->calls[3].site, "libstripped.so.1!covered_fn");
    sb_audit_free(run);

    /* an older writer's names: kept where the object's symbol covers the address, dropped where
     * it does not or the object cannot be read */
    const char *const old[4][3] = {{lib, "covered_fn", "4176"},
                                   {lib, "neighbour", "8448"},
                                   {"/nonexistent/libgone.so", "some_fn", "16"},
                                   {lib, "sizeless", "12292"}};
    run = native_run(0, old);
    p = run->procs[0];
    assert_string_equal(p->calls[0].site, "libstripped.so.1!covered_fn");
    assert_string_equal(p->calls[1].site, "libstripped.so.1+0x2100");
    assert_string_equal(p->calls[2].site, "libgone.so+0x10");
    assert_string_equal(p->calls[3].site, "libstripped.so.1+0x3004");
    sb_audit_free(run);
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
        cmocka_unit_test(native_names_are_never_a_neighbours),
    };
    return cmocka_run_group_tests(tests, setup, remove_tmpdir);
}
