/* The framework table (src/analyze/frameworks.c), iterated: every row is whole and matches its
 * own library's file only, by module, function and line text; a changed line says it is not
 * known; the library lines recorded on an H200 (tests/frameworks/, the framework suite) name
 * their rows; the fix names the user's line to change; a library sync no row knows says so. */
#include "audit_stream.h"
#include "tmpdir.h"

#include <sys/stat.h>

#include "analyze/frameworks.h"

#define PKGS "/lib/python3.12/site-packages/"

/* Writes text at tmpdir/sub/path (folders made), as its line `line` (blank lines before). */
static void write_file(const char *sub, const char *path, int line, const char *text)
{
    char full[1024], cmd[1200];
    snprintf(full, sizeof full, "%s/%s/%s", tmpdir, sub, path);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", full);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(full, "w");
    assert_non_null(f);
    for (int i = 1; i < line; i++)
        fputc('\n', f);
    fprintf(f, "%s\n", text);
    fclose(f);
}

/* One blocking call whose Python stack is the library frame (file under tmpdir/sub, func,
 * line) then the user's train.py line 7; analyzed. */
static sb_audit_run *one_call(const char *sub, const char *file, const char *func, int at)
{
    stream s;
    stream_open(&s);
    proc_line(&s, 100, -1);
    line(&s,
         "{\"t\":\"pystack\",\"id\":1,\"frames\":[[\"%s/%s/%s\",\"%s\",%d],"
         "[\"%s/%s/train.py\",\"main\",7]]}",
         tmpdir, sub, file, func, at, tmpdir, sub);
    line(&s, "{\"t\":\"call\",\"api\":\"cudaStreamSynchronize\",\"dom\":\"rt\",\"tid\":1,"
             "\"ctx\":1,\"corr\":1,\"start\":1000,\"end\":2000,\"stack\":-1,\"py\":1}");
    end_line(&s);
    sb_audit_run *run = load_into(NULL, &s, "proc-100.jsonl");
    sb_audit_opts o;
    sb_audit_opts_default(&o);
    o.symbolize = 0;
    assert_int_equal(analyze_run(run, &o), 0);
    return run;
}

/* The first alternative of "a|b" into buf. */
static const char *first(const char *alts, char *buf, size_t n)
{
    snprintf(buf, n, "%.*s", (int)strcspn(alts, "|"), alts);
    return buf;
}

static void every_row_is_whole_and_its_id_unique(void **state)
{
    (void)state;
    int rows = 0;
    for (const sb_fw_row *r = sb_fw_rows; r->id; r++, rows++) {
        const char *must[] = {r->package, r->versions, r->module, r->func, r->text, r->what,
                              r->fix};
        for (size_t i = 0; i < sizeof must / sizeof must[0]; i++)
            if (!must[i] || !must[i][0])
                fail_msg("row %s: field %zu empty", r->id, i);
        assert_non_null(r->caveat);
        if (r->removes && !r->where)
            fail_msg("row %s removes its syncs but names no call to change", r->id);
        for (const char *a = r->module; *a;) { /* each module is its package's file */
            size_t n = strcspn(a, "|"), p = strlen(r->package);
            if (strncmp(a, r->package, p) || a[p] != '/' || n < 4 || strncmp(a + n - 3, ".py", 3))
                fail_msg("row %s: module %.*s is not a file of %s", r->id, (int)n, a, r->package);
            a += n + (a[n] == '|');
        }
        for (const sb_fw_row *o = sb_fw_rows; o < r; o++)
            if (!strcmp(o->id, r->id))
                fail_msg("row id %s twice", r->id);
        /* a library's row that no option removes names the library in its fix too (it says what
         * the library does, not what your code calls); torch's rows name torch's calls */
        if (!r->removes && strcmp(r->package, "torch") && !strstr(r->fix, r->package))
            fail_msg("row %s: its fix does not name %s", r->id, r->package);
        const char *problem = sb_fw_row_problem(r); /* a --rules file's checks too */
        if (problem)
            fail_msg("row %s: %s", r->id, problem);
    }
    assert_true(rows >= 15);
}

/* Each row, on a file of its own package whose line holds its text: named by that row (op,
 * fix, scenario); the same file in a stranger's package: no row; the line changed: not known. */
static void every_row_matches_its_own_library_only(void **state)
{
    (void)state;
    int i = 0;
    for (const sb_fw_row *r = sb_fw_rows; r->id; r++, i++) {
        char mod[256], func[128], text[256], sub[64], line[512];
        first(r->module, mod, sizeof mod);
        first(r->func, func, sizeof func);
        first(r->text, text, sizeof text);
        snprintf(line, sizeof line, "x = (%s)", text);
        snprintf(sub, sizeof sub, "own%d", i);
        write_file(sub, PKGS "placeholder", 1, "");
        char path[512];
        snprintf(path, sizeof path, PKGS "%s", mod);
        write_file(sub, path, 3, line);
        sb_audit_run *run = one_call(sub, path, func, 3);
        const sb_audit_call_info *c = info_of(run->procs[0], 0);
        if (c->made->fw != r)
            fail_msg("row %s: matched %s", r->id, c->made->fw ? c->made->fw->id : "nothing");
        assert_non_null(strstr(c->made->op, r->what));
        assert_non_null(strstr(c->made->fix, r->fix));
        assert_ptr_equal(c->rule->scenario, r->scenario);
        audit_free(run);

        snprintf(sub, sizeof sub, "stranger%d", i);
        snprintf(path, sizeof path, PKGS "notmine/%s", mod);
        write_file(sub, path, 3, line);
        run = one_call(sub, path, func, 3);
        c = info_of(run->procs[0], 0);
        if (c->made->fw)
            fail_msg("row %s fired in a stranger's package", r->id);
        audit_free(run);

        snprintf(sub, sizeof sub, "changed%d", i);
        snprintf(path, sizeof path, PKGS "%s", mod);
        write_file(sub, path, 3, "y = something_else()");
        run = one_call(sub, path, func, 3);
        c = info_of(run->procs[0], 0);
        assert_null(c->made->fw);
        assert_non_null(c->made->fw_changed);
        assert_non_null(strstr(c->made->fix, "not known to syncbench"));
        audit_free(run);
    }
}

/* The library lines of the framework suite's syncs as recorded on an H200 (torch 2.11,
 * transformers 5.17, accelerate 1.15, lightning 2.6.6; torch.distributed's from ddp_job.py on
 * gloo and nccl: module from its package on, function,
 * line, its text), and the row each names ("": none, left to the generic rules). */
static const struct {
    const char *module, *func;
    int line;
    const char *text, *row;
} RECORDED[] = {
    {"accelerate/utils/operations.py", "send_to_device", 160, "return tensor.to(device, non_blocking=non_blocking)", "accelerate.send_to_device"},
    {"lightning/fabric/utilities/apply_func.py", "batch_to", 104, "data_output = data.to(device, **kwargs)", "lightning.batch_to"},
    {"lightning/fabric/utilities/apply_func.py", "to_item", 134, "return value.item()", "lightning.to_item"},
    {"lightning/pytorch/utilities/data.py", "has_len_all_ranks", 104, "total_length = strategy.reduce(torch.tensor(local_length, device=strategy.root_device), reduce_op=\"sum\")", "lightning.has_len_all_ranks"},
    {"lightning/pytorch/utilities/data.py", "has_len_all_ranks", 105, "if total_length == 0:", "lightning.has_len_all_ranks"},
    {"lightning/pytorch/utilities/data.py", "has_len_all_ranks", 110, "if total_length > 0 and local_length == 0:", "lightning.has_len_all_ranks"},
    {"torch/amp/grad_scaler.py", "<genexpr>", 371, "if not sum(v.item() for v in optimizer_state[\"found_inf_per_device\"].values()):", "torch.amp.grad_scaler.found_inf"},
    {"torch/cuda/__init__.py", "synchronize", 1162, "return torch._C._cuda_synchronize()", ""},
    {"torch/cuda/memory.py", "empty_cache", 224, "torch._C._cuda_emptyCache()", ""},
    {"torch/distributed/distributed_c10d.py", "_object_to_tensor", 3209, "byte_tensor = torch.ByteTensor(byte_storage).to(device)", "torch.distributed.object_collectives"},
    {"torch/distributed/distributed_c10d.py", "_object_to_tensor", 3219, "local_size = torch.LongTensor([byte_tensor.numel()]).to(device)", "torch.distributed.object_collectives"},
    {"torch/distributed/distributed_c10d.py", "_tensor_to_object", 3232, "tensor = tensor.cpu()", "torch.distributed.object_collectives"},
    {"torch/distributed/distributed_c10d.py", "_tensor_to_object", 3233, "buf = tensor.numpy().tobytes()[:tensor_size]", "torch.distributed.object_collectives"},
    {"torch/distributed/distributed_c10d.py", "all_gather_object", 3313, "max_object_size = int(max(object_size_list).item())  # type: ignore[type-var]", "torch.distributed.object_collectives"},
    {"torch/distributed/distributed_c10d.py", "barrier", 5030, "work = group.barrier(opts=opts)", ""},
    {"torch/distributed/utils.py", "_sync_params_and_buffers", 326, "dist._broadcast_coalesced(", "torch.ddp.setup"},
    {"torch/distributed/utils.py", "_verify_param_shape_across_processes", 286, "return dist._verify_params_across_processes(process_group, tensors, logger)", "torch.ddp.setup"},
    {"torch/nn/parallel/distributed.py", "_ddp_init_helper", 1255, "self.reducer = dist.Reducer(", "torch.ddp.setup"},
    {"torch/nn/parallel/distributed.py", "_distributed_broadcast_coalesced", 2172, "dist._broadcast_coalesced(", "torch.ddp.broadcast_buffers"},
    {"torch/nn/parallel/distributed.py", "_pre_forward", 1566, "self.logger.set_runtime_stats_and_log()", "torch.ddp.runtime_stats"},
    {"torch/nn/parallel/distributed.py", "_pre_forward", 1584, "if torch.is_grad_enabled() and self.reducer._rebuild_buckets():", "torch.ddp.setup"},
    {"torch/nn/utils/clip_grad.py", "_get_total_norm", 110, "if error_if_nonfinite and torch.logical_or(total_norm.isnan(), total_norm.isinf()):", "torch.clip_grad_norm.nonfinite"},
    {"torch/serialization.py", "_legacy_save", 1179, "storage._write_file(", ""},
    {"torch/nn/modules/linear.py", "forward", 134, "return F.linear(input, self.weight, self.bias)", ""},
    {"torch/nn/modules/module.py", "<lambda>", 1097, "return self._apply(lambda t: t.cuda(device))", "torch.nn.module.to"},
    {"torch/nn/modules/module.py", "<lambda>", 1165, "return self._apply(lambda t: t.cpu())", "torch.nn.module.to"},
    {"torch/nn/modules/module.py", "convert", 1370, "return t.to(", "torch.nn.module.to"},
    {"torch/utils/data/_utils/pin_memory.py", "pin_memory", 57, "return data.pin_memory()", "torch.utils.data.pin_memory"},
    {"transformers/generation/utils.py", "__call__", 383, "return bool(unfinished_sequences.max() == 0)", "transformers.generate.stop_check"},
    {"transformers/generation/utils.py", "_prepare_special_tokens", 2225, "if eos_token_tensor is not None and torch.isin(eos_token_tensor, pad_token_tensor).any():", "transformers.generate.special_tokens"},
    {"transformers/generation/utils.py", "_prepare_special_tokens", 2234, "torch.is_floating_point(eos_token_tensor) or (eos_token_tensor < 0).any()", "transformers.generate.special_tokens"},
    {"transformers/generation/utils.py", "_tensor_or_none", 2192, "return torch.tensor(token, device=device, dtype=torch.long)", "transformers.generate.special_tokens"},
    {"transformers/generation/utils.py", "generate", 2673, "has_right_padding = torch.any(attention_mask[:, -1] == 0).item()", "transformers.generate.right_padding"},
    {"transformers/generation/utils.py", "generate", 2677, "if has_right_padding:", "transformers.generate.right_padding"},
    {"transformers/masking_utils.py", "_ignore_causal_mask_sdpa", 269, "if (q_length == 1 or kv_length == q_length) and (padding_mask is None or fast_all(padding_mask)):", "transformers.masking.sdpa_check"},
    {"transformers/masking_utils.py", "find_packed_sequence_indices", 755, "if not is_tracing(packed_sequence_mask) and (packed_sequence_mask[:, -1] == 0).all():", "transformers.masking.packed_sequences"},
    {"transformers/pytorch_utils.py", "forward", 119, "x = torch.addmm(self.bias, x.view(-1, x.size(-1)), self.weight)", ""},
    {"transformers/trainer.py", "_finalize_training", 1931, "self._total_loss_scalar += self._tr_loss.item()", "transformers.trainer.finalize"},
    {"transformers/trainer.py", "_inner_training_loop", 1589, "self._tr_loss = torch.tensor(0.0, device=args.device)", "transformers.trainer.finalize"},
    {"transformers/trainer.py", "_run_epoch", 1847, "and (torch.isnan(tr_loss_step) or torch.isinf(tr_loss_step))", "transformers.trainer.nan_inf_filter"},};

static void the_recorded_library_lines_name_their_rows(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof RECORDED / sizeof RECORDED[0]; i++) {
        char sub[64], path[512];
        snprintf(sub, sizeof sub, "rec%zu", i);
        snprintf(path, sizeof path, PKGS "%s", RECORDED[i].module);
        write_file(sub, path, RECORDED[i].line, RECORDED[i].text);
        sb_audit_run *run = one_call(sub, path, RECORDED[i].func, RECORDED[i].line);
        const sb_fw_row *fw = info_of(run->procs[0], 0)->made->fw;
        const char *got = fw ? fw->id : "";
        if (strcmp(got, RECORDED[i].row))
            fail_msg("%s:%d in %s: row '%s', not '%s'", RECORDED[i].module, RECORDED[i].line,
                     RECORDED[i].func, got, RECORDED[i].row);
        audit_free(run);
    }
}

/* Every row whose syncs the suite saw on the GPU is among the recorded lines, and so is every row
 * the suite claims (removes): none is held by its own synthetic file alone. */
static void every_removing_row_was_recorded_or_is_listed(void **state)
{
    (void)state;
    /* rows whose programs ran in the GPU suite after the recording above (make validate --only
     * frameworks counts them before and after their option) */
    static const char *const checked_by_suite[] = {"transformers.trainer.log_loss",
                                                   "torchmetrics.validate_args", NULL};
    /* rows of the same code under another package name (lightning_fabric, pytorch_lightning),
     * and the torch rows read from its source, not run: said in docs/frameworks.md */
    static const char *const by_source[] = {"lightning_fabric.to_item",
                                            "lightning_fabric.batch_to",
                                            "pytorch_lightning.has_len_all_ranks", NULL};
    for (const sb_fw_row *r = sb_fw_rows; r->id; r++) {
        int seen = 0;
        for (size_t i = 0; i < sizeof RECORDED / sizeof RECORDED[0]; i++)
            seen |= !strcmp(RECORDED[i].row, r->id);
        for (int i = 0; checked_by_suite[i]; i++)
            seen |= !strcmp(checked_by_suite[i], r->id);
        for (int i = 0; by_source[i]; i++)
            seen |= !strcmp(by_source[i], r->id);
        if (!seen)
            fail_msg("row %s: no recorded stack and no suite program exercises it", r->id);
    }
}

/* The fix goes where the user made the optimizer: the line of train.py holding the row's `where`
 * call; a library sync no row knows says so, with the sync-free way for the library's authors. */
static void the_fix_names_the_users_line_and_unknown_syncs_say_so(void **state)
{
    (void)state;
    write_file("at", PKGS "torch/amp/grad_scaler.py", 2,
               "if not sum(v.item() for v in optimizer_state[\"found_inf_per_device\"].values()):");
    char user[512];
    snprintf(user, sizeof user, "%s/at/train.py", tmpdir);
    FILE *f = fopen(user, "w");
    assert_non_null(f);
    /* the docstring and the comment name AdamW( too: text, not the call */
    fputs("\"\"\"Trains with torch.optim.AdamW(\n...).\"\"\"\n# AdamW(model.parameters())\n"
          "opt = torch.optim.AdamW(model.parameters())\n"
          "scaler = torch.amp.GradScaler()\n\nscaler.step(opt)\n",
          f);
    fclose(f);
    sb_audit_run *run = one_call("at", PKGS "torch/amp/grad_scaler.py", "_maybe_opt_step", 2);
    const sb_audit_call_info *c = info_of(run->procs[0], 0);
    assert_non_null(c->made->fw);
    assert_string_equal(c->made->fw->id, "torch.amp.grad_scaler.found_inf");
    char want[600];
    snprintf(want, sizeof want, "%s:4", user);
    assert_string_equal(c->made->fix_at, want);
    assert_null(strstr(c->made->fix, "keep it on the GPU"));
    assert_non_null(strstr(c->made->fix, "fused=True"));
    audit_free(run);

    write_file("unknown", PKGS "somelib/loop.py", 4, "if loss.item() > 3:");
    run = one_call("unknown", PKGS "somelib/loop.py", "step", 4);
    c = info_of(run->procs[0], 0);
    assert_null(c->made->fw);
    assert_non_null(strstr(c->made->fix, "inside somelib (step): not in syncbench's framework "
                                         "table"));
    assert_non_null(strstr(c->made->fix, "no option in your code is known to remove it"));
    audit_free(run);
}

/* A user's row (--rules FILE) is tried before the built-in ones, on the same frame. */
static void a_users_row_comes_first(void **state)
{
    (void)state;
    const char *text = "if not sum(v.item() for v in optimizer_state[\"found_inf_per_device\"]):";
    write_file("user", PKGS "torch/amp/grad_scaler.py", 2, text);
    sb_fw_row mine = {.id = "mine.scaler", .package = "torch", .versions = "2.11.0",
                      .module = "torch/amp/grad_scaler.py", .func = "_maybe_opt_step",
                      .text = "found_inf_per_device", .what = "our scaler's read",
                      .fix = "our own fix", .caveat = "", .removes = 1};
    sb_fw_use_user_rows(&mine, 1);
    sb_audit_run *run = one_call("user", PKGS "torch/amp/grad_scaler.py", "_maybe_opt_step", 2);
    const sb_audit_call_info *c = info_of(run->procs[0], 0);
    assert_ptr_equal(c->made->fw, &mine);
    assert_true(!strncmp(c->made->fix, "our own fix", 11));
    audit_free(run);
    sb_fw_use_user_rows(NULL, 0);
    run = one_call("user", PKGS "torch/amp/grad_scaler.py", "_maybe_opt_step", 2);
    assert_string_equal(info_of(run->procs[0], 0)->made->fw->id, "torch.amp.grad_scaler.found_inf");
    audit_free(run);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_row_is_whole_and_its_id_unique),
        cmocka_unit_test(every_row_matches_its_own_library_only),
        cmocka_unit_test(the_recorded_library_lines_name_their_rows),
        cmocka_unit_test(every_removing_row_was_recorded_or_is_listed),
        cmocka_unit_test(the_fix_names_the_users_line_and_unknown_syncs_say_so),
        cmocka_unit_test(a_users_row_comes_first),
    };
    return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
