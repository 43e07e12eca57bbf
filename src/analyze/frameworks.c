/* Syncs made by the frameworks people train with, as data: one row per known sync of a
 * library's own code, with the option in the user's own code that removes it (frameworks.h).
 * A row is matched by a Python frame between the user's line and the call: its module (from
 * its package on), its function and its line's text, so that a release that moves the line
 * still matches and one that changes it says "not known to syncbench" rather than a wrong fix.
 * Rows with `removes` set were checked on an H200 with the suite in tests/frameworks/ (make
 * validate --only frameworks); the others name where no option is known. To add a row: one
 * entry here, a recorded stack in tests/unit/test_audit_frameworks.c, and its line in
 * docs/frameworks.md. */
#include "analyze/frameworks.h"

#include <string.h>

#include "analyze/analyze.h"

#define TORCH "2.11.0"
#define HF "5.17.0"
#define ACCEL "1.15.0"
#define LIGHTNING "2.6.6"
#define TM "1.9.0"
#define LIGHTNING_APPLY "lightning/fabric/utilities/apply_func.py"
#define FABRIC_APPLY "lightning_fabric/utilities/apply_func.py"
#define GENERATION "transformers/generation/utils.py"
#define MASKING "transformers/masking_utils.py"
#define ONCE "once a call or a run, not a step: it costs nothing per step of a long loop"
#define TO_ITEM_WHAT                                                                               \
    "a value logged with self.log(...) read on the host (.item()) for the progress bar and the "   \
    "loggers, each step"
#define TO_ITEM_FIX                                                                                \
    "self.log(..., prog_bar=False) for values the bar need not show each step; or "                \
    "self.log(..., on_step=False, on_epoch=True): reduced on the GPU and read once an epoch"
#define TO_ITEM_CAVEAT                                                                             \
    "the bar no longer shows the value (on_epoch: the bar and the logger show it once an epoch)"
#define BATCH_TO_WHAT "each batch copied to the GPU from pageable memory (Lightning's batch_to)"
#define BATCH_TO_FIX                                                                               \
    "DataLoader(..., pin_memory=True): Lightning copies with non_blocking=True, which waits only " \
    "on pageable memory"
#define BATCH_TO_CAVEAT                                                                            \
    "pinned batches are page-locked host memory: keep the loader's prefetch (num_workers x "       \
    "prefetch_factor) modest"

/* clang-format off */
const sb_fw_row sb_fw_rows[] = {
    /* torch */
    {.id = "torch.amp.grad_scaler.found_inf", .package = "torch", .versions = TORCH,
     .module = "torch/amp/grad_scaler.py|torch/cuda/amp/grad_scaler.py",
     .func = "_maybe_opt_step|<genexpr>", .text = "found_inf_per_device",
     .what = "GradScaler.step() reads found_inf on the host (.item()) before each optimizer step",
     .fix = "an optimizer that takes the scaling on the GPU: torch.optim.AdamW(..., fused=True) "
            "(Adam and SGD take fused=True too); or bf16 autocast without a GradScaler",
     .caveat = "fused=True needs the parameters on CUDA in a floating type; bf16 needs a GPU "
               "that has it (Ampere and later) and may change the numerics",
     .where = "AdamW(|Adam(|SGD(|GradScaler(", .scenario = "log-every", .removes = 1},
    {.id = "torch.clip_grad_norm.nonfinite", .package = "torch", .versions = TORCH,
     .module = "torch/nn/utils/clip_grad.py",
     .func = "_clip_grads_with_norm_|clip_grad_norm_|_get_total_norm",
     .text = "error_if_nonfinite|isnan()|isinf()",
     .what = "clip_grad_norm_(..., error_if_nonfinite=True) reads the total norm on the host",
     .fix = "clip_grad_norm_(..., error_if_nonfinite=False) (the default); check "
            "torch.isfinite(norm) every N steps",
     .caveat = "a non-finite norm is no longer raised at the step it happens",
     .where = "clip_grad_norm_(", .scenario = "log-every", .removes = 1},
    {.id = "torch.nn.module.to", .package = "torch", .versions = TORCH,
     .module = "torch/nn/modules/module.py", .func = "convert|<lambda>|_apply",
     .text = "t.to(|t.cuda(|t.cpu(",
     .what = "Module.to(...) / .cuda() / .cpu(): each parameter copied between the host's "
             "pageable memory and the GPU",
     .fix = "build the model on the GPU (with torch.device(\"cuda\"): Model(...)) or load its "
            "weights there; " ONCE,
     .caveat = "", .where = ".cuda(|.to(", .scenario = "copy", .removes = 0},
    {.id = "torch.utils.data.pin_memory", .package = "torch", .versions = TORCH,
     .module = "torch/utils/data/_utils/pin_memory.py", .func = "pin_memory",
     .text = "pin_memory(",
     .what = "the DataLoader's pin thread pins a batch (pinned allocations wait for the GPU while "
             "the caching host allocator grows)",
     .fix = "none needed once the caching host allocator holds its blocks (the first batches): "
            "keep batch shapes steady so that pinned blocks are reused",
     .caveat = "", .where = NULL, .scenario = "alloc", .removes = 0},
    /* torch.distributed and DDP (checked with tests/frameworks/ddp_job.py: gloo, 2 ranks on one
     * GPU, and nccl, 1 rank) */
    {.id = "torch.distributed.object_collectives", .package = "torch", .versions = TORCH,
     .module = "torch/distributed/distributed_c10d.py",
     .func = "all_gather_object|gather_object|broadcast_object_list|scatter_object_list|"
             "_object_to_tensor|_tensor_to_object",
     .text = ".item()|.cpu()|.numpy()|.to(device)|dump(|load(",
     .what = "an *_object collective (all_gather_object, ...) pickles the object, copying a GPU "
             "tensor in it to the host, and on NCCL moves the bytes and their sizes through the "
             "GPU and reads them back (.item(), .cpu())",
     .fix = "collect tensors, not objects: dist.all_reduce(t) or dist.all_gather(ts, t) of the "
            "tensor, kept on the GPU and read every N steps",
     .caveat = "the value is read every N steps rather than each",
     .where = "all_gather_object(|gather_object(|broadcast_object_list(|scatter_object_list(",
     .scenario = "log-every", .removes = 1},
    {.id = "torch.ddp.broadcast_buffers", .package = "torch", .versions = TORCH,
     .module = "torch/nn/parallel/distributed.py",
     .func = "_distributed_broadcast_coalesced|_sync_buffers|_sync_module_buffers|"
             "_default_broadcast_coalesced",
     .text = "_broadcast_coalesced(",
     .what = "DDP broadcasts the module's buffers (BatchNorm's running statistics) from rank 0 "
             "before each forward; on gloo the host waits for the broadcast's copies",
     .fix = "DistributedDataParallel(..., broadcast_buffers=False)",
     .caveat = "each rank keeps its own buffers (BatchNorm's running statistics differ across "
               "ranks: SyncBatchNorm, or one broadcast before evaluating)",
     .where = "DistributedDataParallel(|DDP(", .scenario = "copy", .removes = 1},
    {.id = "torch.ddp.runtime_stats", .package = "torch", .versions = TORCH,
     .module = "torch/nn/parallel/distributed.py", .func = "_pre_forward|forward|pre_forward",
     .text = "set_runtime_stats_and_log(",
     .what = "DDP's logger reads its CUDA timing events (forward, backward, communication) at "
             "the iterations it samples: the first 10, then one in 100",
     .fix = "none needed in a long run (10 iterations, then 1 in 100); "
            "model._set_ddp_runtime_logging_sample_rate(N) samples one in N (a private method)",
     .caveat = "", .where = NULL, .scenario = NULL, .removes = 0},
    {.id = "torch.ddp.setup", .package = "torch", .versions = TORCH,
     .module = "torch/nn/parallel/distributed.py|torch/distributed/utils.py",
     .func = "_pre_forward|_ddp_init_helper|__init__|_verify_param_shape_across_processes|"
             "_sync_params_and_buffers|_sync_module_states",
     .text = "_rebuild_buckets()|dist.Reducer(|_verify_params_across_processes(|"
             "_broadcast_coalesced(",
     .what = "DDP's set-up: the parameters' shapes checked across ranks and rank 0's weights "
             "broadcast when it is built, its gradient buckets rebuilt after the first iteration",
     .fix = "none needed: " ONCE, .caveat = "", .where = NULL, .scenario = NULL, .removes = 0},
    /* transformers: the Trainer */
    {.id = "transformers.trainer.nan_inf_filter", .package = "transformers", .versions = HF,
     .module = "transformers/trainer.py", .func = "_run_epoch|_inner_training_loop",
     .text = "torch.isnan(tr_loss_step)|torch.isinf(tr_loss_step)",
     .what = "the Trainer's check of each step's loss for NaN or Inf, a branch on a GPU value",
     .fix = "TrainingArguments(..., logging_nan_inf_filter=False)",
     .caveat = "a NaN or Inf loss then enters the logged loss as it is, rather than being "
               "replaced by the average of the previous ones (training is the same)",
     .where = "TrainingArguments(|Seq2SeqTrainingArguments(", .scenario = "device-branch",
     .removes = 1},
    {.id = "transformers.trainer.log_loss", .package = "transformers", .versions = HF,
     .module = "transformers/trainer.py", .func = "_maybe_log_save_evaluate",
     .text = ".item()",
     .what = "the Trainer reads the loss (and the gradient norm) on the host at each logging step",
     .fix = "TrainingArguments(..., logging_steps=N) with N large enough: one read every N steps",
     .caveat = "the loss is logged every N steps", .where = "TrainingArguments(",
     .scenario = "log-every", .removes = 1},
    {.id = "transformers.trainer.finalize", .package = "transformers", .versions = HF,
     .module = "transformers/trainer.py", .func = "_finalize_training|_inner_training_loop",
     .text = "_tr_loss.item()|torch.tensor(0.0, device",
     .what = "the Trainer sets up and reads its loss total at the start and end of train()",
     .fix = "none needed in transformers' Trainer: " ONCE, .caveat = "", .where = NULL, .scenario = NULL, .removes = 0},
    /* transformers: masks and generate() */
    {.id = "transformers.masking.sdpa_check", .package = "transformers", .versions = HF,
     .module = MASKING, .func = "_ignore_causal_mask_sdpa", .text = "fast_all(",
     .what = "SDPA's mask check: whether the attention mask masks anything, read on the host at "
             "each forward (each token in generate())",
     .fix = "no option in your code is known to remove it: without an attention mask the check "
            "moves to find_packed_sequence_indices (one a forward as well, measured) and "
            "generate() builds a mask itself; for transformers' authors: pass the mask to SDPA "
            "and keep the decision on the GPU",
     .caveat = "", .where = NULL, .scenario = "device-branch", .removes = 0},
    {.id = "transformers.masking.packed_sequences", .package = "transformers", .versions = HF,
     .module = MASKING, .func = "find_packed_sequence_indices",
     .text = "packed_sequence_mask[:, -1] == 0",
     .what = "a check whether position_ids pack several sequences, read on the host at each "
             "forward without an attention mask",
     .fix = "no option in your code is known to remove it: with an attention mask the check is "
            "SDPA's instead (one a forward as well); for transformers' authors: keep the decision "
            "on the GPU",
     .caveat = "", .where = NULL, .scenario = "device-branch", .removes = 0},
    {.id = "transformers.generate.stop_check", .package = "transformers", .versions = HF,
     .module = GENERATION, .func = "__call__",
     .text = "unfinished_sequences.max() == 0",
     .what = "generate() reads on the host after every token whether every sequence has finished",
     .fix = "no option of transformers' generate() skips it on CUDA (its DeferredStopCheck, "
            "which reads the flag a token late, runs on mps only); a decoding loop of your own "
            "can check every N tokens",
     .caveat = "", .where = NULL, .scenario = "device-branch", .removes = 0},
    {.id = "transformers.generate.special_tokens", .package = "transformers", .versions = HF,
     .module = GENERATION, .func = "_tensor_or_none|_prepare_special_tokens",
     .text = "torch.tensor(token|.any()",
     .what = "generate() makes and checks its special-token tensors on the host at each call",
     .fix = "none needed in transformers' generate(): " ONCE, .caveat = "", .where = NULL, .scenario = NULL, .removes = 0},
    {.id = "transformers.generate.right_padding", .package = "transformers", .versions = HF,
     .module = GENERATION, .func = "generate", .text = "has_right_padding",
     .what = "generate() checks the prompts for right padding on the host at each call",
     .fix = "none needed in transformers' generate(): " ONCE, .caveat = "", .where = NULL, .scenario = NULL, .removes = 0},
    /* accelerate */
    {.id = "accelerate.send_to_device", .package = "accelerate", .versions = ACCEL,
     .module = "accelerate/utils/operations.py", .func = "send_to_device",
     .text = "non_blocking=non_blocking",
     .what = "each batch copied to the GPU with a wait (accelerate's send_to_device with "
             "non_blocking off, its default)",
     .fix = "TrainingArguments(..., dataloader_pin_memory=True, accelerator_config="
            "{\"non_blocking\": True}); with accelerate alone: Accelerator(dataloader_config="
            "DataLoaderConfiguration(non_blocking=True)) and a DataLoader with pin_memory=True",
     .caveat = "non_blocking saves the wait only from pinned memory: keep "
               "dataloader_pin_memory=True (the Trainer's default)",
     .where = "TrainingArguments(|Accelerator(|DataLoaderConfiguration(", .scenario = "copy",
     .removes = 1},
    /* Lightning (the lightning package, and lightning_fabric / pytorch_lightning) */
    {.id = "lightning.to_item", .package = "lightning", .versions = LIGHTNING,
     .module = LIGHTNING_APPLY, .func = "to_item", .text = ".item()", .what = TO_ITEM_WHAT,
     .fix = TO_ITEM_FIX, .caveat = TO_ITEM_CAVEAT, .where = "self.log(|self.log_dict(",
     .scenario = "log-every", .removes = 1},
    {.id = "lightning_fabric.to_item", .package = "lightning_fabric", .versions = LIGHTNING,
     .module = FABRIC_APPLY, .func = "to_item", .text = ".item()", .what = TO_ITEM_WHAT,
     .fix = TO_ITEM_FIX, .caveat = TO_ITEM_CAVEAT, .where = "self.log(|self.log_dict(",
     .scenario = "log-every", .removes = 1},
    {.id = "lightning.batch_to", .package = "lightning", .versions = LIGHTNING,
     .module = LIGHTNING_APPLY, .func = "batch_to", .text = "data.to(device", .what = BATCH_TO_WHAT,
     .fix = BATCH_TO_FIX, .caveat = BATCH_TO_CAVEAT, .where = "DataLoader(", .scenario = "copy",
     .removes = 1},
    {.id = "lightning_fabric.batch_to", .package = "lightning_fabric", .versions = LIGHTNING,
     .module = FABRIC_APPLY, .func = "batch_to", .text = "data.to(device", .what = BATCH_TO_WHAT,
     .fix = BATCH_TO_FIX, .caveat = BATCH_TO_CAVEAT, .where = "DataLoader(", .scenario = "copy",
     .removes = 1},
    {.id = "lightning.has_len_all_ranks", .package = "lightning", .versions = LIGHTNING,
     .module = "lightning/pytorch/utilities/data.py", .func = "has_len_all_ranks",
     .text = "total_length|local_length",
     .what = "fit() sums the loader's length over the ranks and reads it on the host",
     .fix = "none needed in lightning's fit(): " ONCE, .caveat = "", .where = NULL,
     .scenario = NULL, .removes = 0},
    {.id = "pytorch_lightning.has_len_all_ranks", .package = "pytorch_lightning",
     .versions = LIGHTNING, .module = "pytorch_lightning/utilities/data.py",
     .func = "has_len_all_ranks", .text = "total_length|local_length",
     .what = "fit() sums the loader's length over the ranks and reads it on the host",
     .fix = "none needed in pytorch_lightning's fit(): " ONCE, .caveat = "", .where = NULL,
     .scenario = NULL, .removes = 0},
    /* torchmetrics */
    {.id = "torchmetrics.validate_args", .package = "torchmetrics", .versions = TM,
     .module = "torchmetrics/functional/classification/stat_scores.py",
     .func = "_multiclass_stat_scores_tensor_validation|_binary_stat_scores_tensor_validation|"
             "_multilabel_stat_scores_tensor_validation",
     .text = "torch.unique(|.any()|_check_for_unique",
     .what = "a classification metric checks its inputs' values on the host at each update",
     .fix = "the metric with validate_args=False (MulticlassAccuracy(num_classes=N, "
            "validate_args=False), F1Score(..., validate_args=False), ...)",
     .caveat = "out-of-range labels or predictions are no longer caught",
     .where = "Accuracy(|F1Score(|Precision(|Recall(|StatScores(|AUROC(",
     .scenario = "device-branch", .removes = 1},
    {.id = NULL},
};
/* clang-format on */

int sb_fw_module_is(const char *alts, const char *path)
{
    const char *in_pkg = path ? sb_audit_py_in_package(path) : NULL; /* from its package on */
    for (const char *a = alts; in_pkg && *a;) {
        size_t n = strcspn(a, "|");
        if (n && strlen(in_pkg) == n && !strncmp(in_pkg, a, n))
            return 1;
        a += n + (a[n] == '|');
    }
    return 0;
}

/* The first row of rows[0..n) (n SIZE_MAX: up to the terminator) whose module and function
 * frame f matches; its text too when text is set. */
static const sb_fw_row *row_of(const sb_fw_row *rows, size_t n, const sb_audit_pyframe *f,
                               const char *line, int text)
{
    for (size_t i = 0; i < n && rows[i].id; i++) {
        const sb_fw_row *r = &rows[i];
        if (sb_fw_module_is(r->module, f->file) && sb_audit_alt_is(r->func, f->func) &&
            (!text || sb_audit_alt_in(r->text, line)))
            return r;
    }
    return NULL;
}

static const sb_fw_row *rows_match(const sb_audit_pyframe *f, const char *line, int text)
{
    size_t nuser = 0;
    const sb_fw_row *user = sb_fw_user_rows(&nuser), *r = NULL;
    if (user)
        r = row_of(user, nuser, f, line, text);
    return r ? r : row_of(sb_fw_rows, (size_t)-1, f, line, text);
}

const sb_fw_row *sb_fw_match(const sb_audit_pystack *s, const sb_audit_call_info *ci,
                             sb_audit_analysis *an, const sb_fw_row **changed)
{
    *changed = NULL;
    const sb_audit_pyframe *maker = NULL;
    for (int i = 0; s && ci->pyframe && i < s->nframes && &s->frames[i] != ci->pyframe; i++) {
        const sb_audit_pyframe *f = &s->frames[i];
        if (!sb_audit_py_in_package(f->file))
            continue; /* the standard library, generated code: no row's */
        const char *line = sb_audit_py_source(an, f);
        /* the line of the frame that made the call, when it cannot be read (the records read on
         * another machine), is taken as the row's; an outer frame's must be read and hold it */
        if (!line[0] && maker)
            continue;
        const sb_fw_row *r = rows_match(f, line, line[0] != 0);
        if (!maker)
            maker = f;
        if (r)
            return r;
    }
    if (maker)
        *changed = rows_match(maker, NULL, 0);
    return NULL;
}

/* The first line of the user's files on the stack (outermost last) that holds one of the row's
 * `where` calls: "train.py:31", interned; "" when none does. */
static const char *fix_at(sb_audit_analysis *an, const sb_audit_pystack *s, const char *where)
{
    sb_audit_run *run = an->run;
    for (int i = 0; s && where && i < s->nframes; i++) {
        const sb_audit_pyframe *f = &s->frames[i];
        if (sb_audit_py_library(f->file))
            continue;
        int line = sb_audit_py_find_line(an, f->file, where);
        if (line > 0)
            return sb_audit_py_file_line(&run->strs, f->file, line);
    }
    return sb_audit_intern(&run->strs, "");
}

int sb_fw_attribute(sb_audit_analysis *an, const sb_audit_pystack *s, sb_audit_call_info *ci,
                    sb_audit_made *m, sb_audit_rule *own)
{
    m->fw = sb_fw_match(s, ci, an, &m->fw_changed);
    if (!m->fw)
        return 0;
    m->fix_at = fix_at(an, s, m->fw->where);
    if (!m->fix_at)
        return -1;
    /* the row's own rule: its scenario prices it; the op and fix are the row's (rules.c) */
    *own = (sb_audit_rule){.op = m->fw->what, .fix = m->fw->fix, .scenario = m->fw->scenario};
    ci->rule = own;
    return 0;
}
