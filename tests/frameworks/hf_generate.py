#!/usr/bin/env python3
"""transformers' generate() as users call it (the framework suite, tests/frameworks/): greedy
decoding of a GPT-2 built from a config (random weights, nothing downloaded), a batch of
prompts with the attention mask a tokenizer returns, model.generate() from one line, a few
calls.

    hf_generate.py [--fix no-mask] [--steps N] [--warmup W] [--size small|gpu]

  no-mask   the prompts have no padding: generate() is called without an attention mask, so
            transformers' masking code does not check it on the host at each token

A step is one generate() call of 32 new tokens (EOS never chosen). Prints fw_common's JSON
line, with "tokens" a call."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fw_common  # noqa: E402

FIXES = ("no-mask",)
SIZES = {"small": dict(n_layer=2, n_embd=128, batch=8), "gpu": dict(n_layer=12, n_embd=1024,
                                                                      batch=32)}
PROMPT, NEW = 16, 32


def main():
    ap = fw_common.parser(__doc__, FIXES)
    ap.set_defaults(steps=8, warmup=2)
    a = ap.parse_args()
    fixes = fw_common.fixes_of(ap, a, FIXES)
    torch = fw_common.need("torch")
    fw_common.need("transformers")
    fw_common.cuda_or_exit(torch)
    from transformers import GPT2Config, GPT2LMHeadModel
    s = SIZES[a.size]
    torch.manual_seed(0)
    config = GPT2Config(n_layer=s["n_layer"], n_head=8, n_embd=s["n_embd"], vocab_size=1000,
                        n_positions=256, bos_token_id=0, eos_token_id=1, pad_token_id=1)
    model = GPT2LMHeadModel(config).cuda().eval()
    ids = torch.randint(2, 1000, (s["batch"], PROMPT), device="cuda")
    kw = {} if "no-mask" in fixes else {"attention_mask": torch.ones_like(ids)}
    timer = fw_common.StepTimer(torch, a.warmup, a.steps)
    with torch.no_grad():
        for step in range(1, a.steps + 1):
            model.generate(ids, max_new_tokens=NEW, min_new_tokens=NEW, do_sample=False,
                           **kw)  # the user's line
            timer.step_done(step)
    return fw_common.emit("hf_generate", fixes, a, timer, tokens=NEW)


if __name__ == "__main__":
    sys.exit(main())
