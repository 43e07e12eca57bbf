#!/usr/bin/env python3
"""Syncs made inside a library (issue 35): `model.generate()` of a small Hugging Face GPT-2
built from a config (no download), called a few times from one line of this script. With
`--warn`, torch's own sync checker (`torch.cuda.set_sync_debug_mode("warn")`) runs in the same
process, and the distinct Python lines it names are printed, so that the audit's library lines
can be compared with torch's in one run.

    hf_lib_generate.py [--calls N] [--tokens N] [--warn]

Prints one JSON line last: {"calls", "tokens", "generate_us" (mean per call), "warn_lines":
[["file", line], ...] (with --warn; sorted, distinct)}."""
import argparse
import json
import sys
import time
import warnings


def build(torch):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    config = GPT2Config(n_layer=2, n_head=4, n_embd=128, vocab_size=1000, n_positions=256,
                        bos_token_id=0, eos_token_id=1, pad_token_id=1)
    return GPT2LMHeadModel(config).cuda().eval()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=5)
    ap.add_argument("--tokens", type=int, default=48)
    ap.add_argument("--warn", action="store_true")
    args = ap.parse_args()
    import torch
    if not torch.cuda.is_available():
        print("hf_lib_generate.py: torch has no CUDA device", file=sys.stderr)
        return 2
    model = build(torch)
    prompt = torch.randint(2, 1000, (2, 8), device="cuda")
    mask = torch.ones_like(prompt)
    lines = set()
    if args.warn:
        torch.cuda.set_sync_debug_mode("warn")
    t0 = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(args.calls):
            with torch.no_grad():
                model.generate(prompt, attention_mask=mask, max_new_tokens=args.tokens,  # GENERATE
                               min_new_tokens=args.tokens, do_sample=False)
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    for w in caught:
        if "synchroniz" in str(w.message):
            lines.add((w.filename, w.lineno))
    print(json.dumps({"calls": args.calls, "tokens": args.tokens,
                      "generate_us": wall / args.calls * 1e6,
                      "warn_lines": sorted(lines)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
