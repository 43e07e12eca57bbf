#!/usr/bin/env python3
"""A PyTorch training loop as users write it, for the replay across threads (issue 34) and the
replay's suite (tests/gpu/replay_suite.py): an MLP, `loss.backward()`, `optimizer.step()`, and
the loss read back every step. PyTorch runs every backward pass of a CUDA model on its autograd
engine's own thread, so the loop's kernels are launched by two host threads.

    torch_train.py [--variant sync|fixed|alternate] [--size gpu|host] [--steps N] [--compile]
                   [--count-threads] [--blocks B] [--first sync|fixed] [--no-syncs ALLOW]
                   [--recording-turns B]

  sync     `losses.append(loss.item())` each step (the line marked `# SYNC-LINE`): a sync a step
  fixed    the losses kept on the GPU and read once after the loop: the fix
  alternate  B blocks (default 8) of N steps each, alternating sync and fixed, FIRST first
           (alternate.py: after an untimed fixed block; each block timed as the loop alone)
  gpu      a wide MLP (GPU-bound steps, about 7 ms on an H100); host: a narrow one (launch-bound)
  compile  the model wrapped in torch.compile (default mode), compiled in the warm-up (30 steps
           instead of 20), so that the timed steps run the compiled forward and backward
  count-threads  a hook on the first layer's weight gradient counts the host threads that ran a
           backward pass; off by default: a Python hook on the engine's thread takes the GIL
           each step, which a user's loop does not
  recording-turns  under `syncbench audit` only (exit 2 otherwise): the syncing variant in B
           blocks of N steps, the audit's recording on and off in turns (recording_turns.py:
           what the default mode costs the loop, within one process)
  no-syncs  each step (its readback included), warm-up too, inside
           `with syncbench.no_syncs(allow=ALLOW):` (step_blocks.py; what the blocks cost:
           tests/gpu/audit_cost_real.py)

Prints one JSON line: {"variant": ..., "size": ..., "compile": ..., "steps": N, "step_us": wall
us per step (after the warm-up, the final torch.cuda.synchronize() included), "steps_per_s",
"threads": the host threads that ran a backward pass (null without --count-threads),
"last_loss": ..., "no_syncs": ALLOW or null, "syncs_per_block": the blocking calls a block
made (null without --no-syncs)}; with
alternate, alternate.py's line (blocks, sync_us, fixed_us, saving_us) with size and compile; with
--recording-turns, recording_turns.py's line (blocks, on_us, off_us, cost_us, cost_pct).
Exit 2 when torch has no CUDA device."""
import argparse
import json
import sys
import threading
import time

import alternate  # beside this file
import mlp  # beside this file
import recording_turns  # beside this file
import step_blocks  # beside this file


def build(torch, args):
    """(step function, the set the thread hook fills or None) for the chosen size."""
    width, batch = (4096, 2048) if args.size == "gpu" else (256, 64)
    model = mlp.mlp(torch, width, 10, "cuda")
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    x = torch.randn(batch, width, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    threads = None
    if args.count_threads:  # on the plain module: the compiled wrapper is not indexable
        threads = set()
        model[0].weight.register_hook(lambda g: threads.add(threading.get_ident()))
    if args.compile:
        model = torch.compile(model)
    return mlp.stepper(model, opt, torch.nn.functional.cross_entropy, x, y), threads


def timed(torch, step, steps, sync, block):
    """(wall us per step, the last loss) of STEPS steps, each loss read back at once (SYNC) or
    kept on the GPU and read after the loop; the final torch.cuda.synchronize() included. Each
    step runs inside block() (--no-syncs)."""
    losses = []
    t0 = time.perf_counter()
    for _ in range(steps):
        with block():
            loss = step()
            if sync:
                losses.append(loss.item())  # SYNC-LINE
            else:
                losses.append(loss.detach())
    if not sync:
        losses = torch.stack(losses).tolist()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / steps * 1e6, losses[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--variant", choices=("sync", "fixed", "alternate"), default="sync")
    ap.add_argument("--size", choices=("gpu", "host"), default="gpu")
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--compile", action="store_true")
    ap.add_argument("--count-threads", action="store_true")
    alternate.add_arguments(ap)
    step_blocks.add_argument(ap)
    ap.add_argument("--recording-turns", type=int, metavar="B", default=None,
                    help="under syncbench audit: B blocks, the recording on and off in turns "
                         "(pairs in both orders: a multiple of 4 cancels a drift)")
    args = ap.parse_args()
    alternate.check_blocks(ap, args.blocks)
    if args.recording_turns is not None:
        if args.recording_turns < 2 or args.variant != "sync":
            ap.error("--recording-turns takes B >= 2, with --variant sync")
        if recording_turns.not_audited():
            ap.error(f"--recording-turns: {recording_turns.not_audited()}")
    blocks = step_blocks.StepBlocks(args.no_syncs)
    import torch
    if not torch.cuda.is_available():
        print("torch_train.py: torch has no CUDA device", file=sys.stderr)
        return 2
    torch.manual_seed(0)
    step, threads = build(torch, args)

    for _ in range(30 if args.compile else 20):  # torch.compile compiles on the first steps
        with blocks.block():
            step()
    torch.cuda.synchronize()
    head = {"size": args.size, "compile": args.compile}
    if args.recording_turns is not None:
        recording, why = recording_turns.switch()  # CUDA is up: the library is loaded
        if not recording:
            print(f"torch_train.py: --recording-turns: {why}", file=sys.stderr)
            return 1
        turns = recording_turns.run(args.recording_turns,
                                    lambda: timed(torch, step, args.steps, True, blocks.block)[0],
                                    recording)
        out = {**recording_turns.summary(args.steps, turns), **head}
    elif args.variant == "alternate":
        blocks = alternate.run(args.first, args.blocks,
                               lambda sync: timed(torch, step, args.steps, sync, blocks.block)[0])
        out = {**alternate.summary(args.first, args.steps, blocks), **head}
    else:
        step_us, last_loss = timed(torch, step, args.steps, args.variant == "sync", blocks.block)
        out = {"variant": args.variant, **head, "steps": args.steps, "step_us": step_us,
               "steps_per_s": 1e6 / step_us,
               "threads": None if threads is None else len(threads), "last_loss": last_loss,
               **blocks.fields()}
    print(json.dumps(out), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
