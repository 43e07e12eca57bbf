#!/usr/bin/env python3
"""A Hugging Face Trainer fine-tune as users write it (the framework suite, tests/frameworks/):
a GPT-2 built from a config (random weights, nothing downloaded) on synthetic token batches with
an attention mask, as a tokenizer gives them, through Trainer.train() from one line.

    hf_trainer.py [--fix nan-filter-off,non-blocking,no-mask,log-less] [--steps N] [--warmup W]
                  [--size small|gpu] [--alternate nan-filter-off --blocks B [--first sync|fixed]]

  nan-filter-off  TrainingArguments(logging_nan_inf_filter=False): no per-step isnan/isinf
                  check of the loss on the host
  non-blocking    TrainingArguments(accelerator_config={"non_blocking": True}) with the
                  default dataloader_pin_memory=True: each batch copied from pinned memory
                  without a wait
  no-mask         the collator drops an attention mask that masks nothing (the check moves:
                  transformers then checks the position ids on the host instead)
  log-less        TrainingArguments(logging_steps=10**6) rather than 5: the loss and the
                  gradient norm read on the host once in 5 steps no more

--alternate nan-filter-off sets trainer.args.logging_nan_inf_filter between blocks (fw_common),
from a TrainerCallback's on_step_end: the Trainer reads it afresh at each step's check
(_run_epoch, transformers 5.17). A block is a multiple of 5 steps (logging_steps), so that each
holds as many logging steps. The other options do not switch in place: the accelerator and its
dataloader are prepared once, the collator's batches and the logging interval set up front.

Prints fw_common's JSON line."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fw_common  # noqa: E402

FIXES = ("nan-filter-off", "non-blocking", "no-mask", "log-less")
TOGGLES = ("nan-filter-off",)  # the fixes --alternate switches in place
LOGGING_STEPS = 5
SIZES = {"small": dict(n_layer=2, n_embd=128, seq=64, batch=8),
         "gpu": dict(n_layer=6, n_embd=768, seq=256, batch=16)}


class Tokens:
    """Synthetic token sequences, a fixed seed; input_ids, labels and an all-ones mask."""

    def __init__(self, torch, n, seq, vocab):
        g = torch.Generator().manual_seed(0)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        ids = self.ids[i]
        return {"input_ids": ids, "labels": ids, "attention_mask": ids.new_ones(ids.shape)}


def collate(torch, drop_mask):
    def fn(items):
        batch = {k: torch.stack([it[k] for it in items]) for k in items[0]}
        if drop_mask and bool(batch["attention_mask"].all()):  # on the CPU: no sync
            del batch["attention_mask"]
        return batch
    return fn


def main():
    ap = fw_common.parser(__doc__, FIXES, TOGGLES)
    a = ap.parse_args()
    fixes = fw_common.fixes_of(ap, a, FIXES, period=LOGGING_STEPS)
    torch = fw_common.need("torch")
    fw_common.need("transformers")
    fw_common.cuda_or_exit(torch)
    from transformers import (GPT2Config, GPT2LMHeadModel, Trainer, TrainerCallback,
                              TrainingArguments)
    s = SIZES[a.size]
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(n_layer=s["n_layer"], n_head=4, n_embd=s["n_embd"],
                                       vocab_size=1000, n_positions=s["seq"]))
    trainer = None  # set below; the timer's switch reads it after each step

    def set_filter_off(on):
        trainer.args.logging_nan_inf_filter = not on

    timer = fw_common.timer_of(torch, a, set_filter_off)
    steps = fw_common.total_steps(a)

    class Timing(TrainerCallback):
        def on_step_end(self, args, state, control, **kw):
            timer.step_done(state.global_step)

    with tempfile.TemporaryDirectory() as out:
        args = TrainingArguments(
            output_dir=out, max_steps=steps, per_device_train_batch_size=s["batch"],
            learning_rate=1e-4, save_strategy="no", report_to="none", disable_tqdm=True,
            logging_steps=10**6 if "log-less" in fixes else LOGGING_STEPS,
            dataloader_pin_memory=True,
            logging_nan_inf_filter="nan-filter-off" not in fixes,
            accelerator_config={"non_blocking": "non-blocking" in fixes})
        data = Tokens(torch, s["batch"] * (steps + 1), s["seq"], 1000)
        trainer = Trainer(model=model, args=args, train_dataset=data,
                          data_collator=collate(torch, "no-mask" in fixes), callbacks=[Timing()])
        trainer.train()  # the user's one line
    return fw_common.emit("hf_trainer", fixes, a, timer)


if __name__ == "__main__":
    sys.exit(main())
