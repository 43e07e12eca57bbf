#!/usr/bin/env python3
"""Greedy decoding with the KV cache as users hand-write it, for the replay's suite
(tests/gpu/replay_suite.py): a transformers GPT-2 built from a small config (random weights, no
download), a batch of 8 prompts of 16 tokens, and a `finished` flag per sequence kept on the
GPU; the loop checks it to stop early.

    hf_generate.py [--variant sync|fixed|alternate] [--generations N] [--new-tokens T]
                   [--blocks B] [--first sync|fixed] [--no-syncs ALLOW]

  sync   `if finished.all(): break` after every token (the line marked `# SYNC-LINE`): a
         Python branch on a GPU value, a readback and a sync a token
  fixed  the same check every 16 tokens (one sync in 16 is kept)
  alternate  B blocks (default 8) of N generations each, alternating sync and fixed, FIRST
         first (alternate.py: after an untimed fixed block; each block timed as the loop alone)
  no-syncs  each token (its forward, its check), warm-up too, inside
         `with syncbench.no_syncs(allow=ALLOW):` (step_blocks.py; what the blocks cost:
         tests/gpu/audit_cost_real.py)

EOS's logit is masked to -inf in both variants, so the stop never fires and both do the same
work: T new tokens (default 128) a generation, each `model(input_ids=next_tokens,
past_key_values=past, use_cache=True)` on the cache the previous call returned (the legacy
tuples of transformers 4.x or its DynamicCache: whichever the model returns is passed back).
2 warm-up generations without the check (the marked line runs only in the timed ones), then N
timed generations (default 6). Works with transformers 4.40 and later, 5.x included.

Prints one JSON line: {"variant": ..., "steps": N x T tokens, "step_us": wall us per token (the
prompts' prefill and a final torch.cuda.synchronize() included), "tokens_per_s",
"tokens_checksum": ..., "no_syncs": ALLOW or null, "syncs_per_block": the blocking calls a
token's block made (null without --no-syncs)}; with
alternate, alternate.py's line (blocks, sync_us, fixed_us, saving_us; steps: N x T, a block's
tokens). Exit 2 when torch has no CUDA device or transformers is missing."""
import argparse
import json
import sys
import time

import alternate  # beside this file
import step_blocks  # beside this file

BATCH, PROMPT, EOS, CHECK_EVERY, WARMUP = 8, 16, 0, 16, 2


def model_of():
    from transformers import GPT2Config, GPT2LMHeadModel
    config = GPT2Config(n_layer=4, n_head=4, n_embd=256, vocab_size=1000, n_positions=1024,
                        bos_token_id=EOS, eos_token_id=EOS)
    return GPT2LMHeadModel(config).cuda().eval()


def generate(torch, model, prompt, new_tokens, check_every, block):
    """Greedy decoding of T tokens after PROMPT; the stop checked after every token
    (check_every 1), every N tokens, or never (0); each token inside block() (--no-syncs).
    Returns the tokens, (batch, T)."""
    eos_bias = torch.zeros(model.config.vocab_size, device=prompt.device)
    eos_bias[EOS] = float("-inf")  # the stop never fires: both variants do the same work
    finished = torch.zeros(prompt.shape[0], dtype=torch.bool, device=prompt.device)
    past, ids, out_tokens = None, prompt, []
    for t in range(new_tokens):
        with block():
            out = model(input_ids=ids, past_key_values=past, use_cache=True)
            past = out.past_key_values
            nxt = (out.logits[:, -1, :] + eos_bias).argmax(-1)
            finished |= nxt == EOS
            out_tokens.append(nxt)
            ids = nxt[:, None]
            if check_every == 1:
                if finished.all():  # SYNC-LINE
                    break
            elif check_every and (t + 1) % check_every == 0 and finished.all():
                break
    return torch.stack(out_tokens, 1)


def timed(torch, model, prompt, args, sync, block):
    """(wall us per token, tokens' checksum) of --generations generations, the stop checked
    every token (SYNC) or every CHECK_EVERY; the final read and synchronize() included."""
    every = 1 if sync else CHECK_EVERY
    t0 = time.perf_counter()
    checksum = 0
    for _ in range(args.generations):
        checksum += generate(torch, model, prompt, args.new_tokens, every, block).sum()
    checksum = int(checksum)
    torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    return wall / (args.generations * args.new_tokens) * 1e6, checksum


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("sync", "fixed", "alternate"), default="sync")
    ap.add_argument("--generations", type=int, default=6)
    ap.add_argument("--new-tokens", type=int, default=128)
    alternate.add_arguments(ap)
    step_blocks.add_argument(ap)
    args = ap.parse_args()
    if args.generations < 1 or args.new_tokens < 1:
        ap.error("--generations and --new-tokens must be at least 1")
    alternate.check_blocks(ap, args.blocks)
    blocks = step_blocks.StepBlocks(args.no_syncs)
    import torch
    if not torch.cuda.is_available():
        print("hf_generate.py: torch has no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    try:
        model = model_of()
    except ImportError as e:
        print(f"hf_generate.py: needs transformers ({e})", file=sys.stderr)
        return 2
    prompt = torch.randint(1, model.config.vocab_size, (BATCH, PROMPT), device="cuda")
    steps = args.generations * args.new_tokens
    with torch.inference_mode():
        for _ in range(WARMUP):
            generate(torch, model, prompt, args.new_tokens, 0, blocks.block)
        torch.cuda.synchronize()
        if args.variant == "alternate":
            blocks = alternate.run(args.first, args.blocks,
                                   lambda sync: timed(torch, model, prompt, args, sync,
                                                      blocks.block)[0])
            out = alternate.summary(args.first, steps, blocks)
        else:
            step_us, checksum = timed(torch, model, prompt, args, args.variant == "sync",
                                      blocks.block)
            out = {"variant": args.variant, "steps": steps, "step_us": step_us,
                   "tokens_per_s": 1e6 / step_us, "tokens_checksum": checksum,
                   **blocks.fields()}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
