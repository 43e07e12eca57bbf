#!/usr/bin/env python3
"""A real training loop and generate() for the sync baseline's GPU tests (issue 46,
tests/gpu/test_baseline_*.py), run by `syncbench audit` as a script and imported by a pytest
test (the plugin's marker), from one file whose variants are flags:

    baseline_loop.py train [--steps N] [--reads R] [--extra-item] [--warm-syncs W]
    baseline_loop.py generate [--steps N] [--new-tokens T] [--extra-item]
    baseline_loop.py threads [--reads-each A,B]
    baseline_loop.py tasks [--reads-each A,B]

  train     an MLP built from CONFIG (LayerNorm, GELU), AdamW, torch.autocast(float16) with
            torch.amp.GradScaler, batches from a DataLoader over host tensors: N steps, each in
            syncbench.step("train_step") (the NVTX range train_step too), each with the syncs
            such a loop keeps: the batch's copies from pageable memory, GradScaler.step()'s
            found_inf read (inside torch), and the loss read R times (marked SYNC:loss; R = 1)
  generate  a GPT-2 built from a config (random weights, nothing downloaded): N greedy
            generate() calls of T new tokens (EOS never chosen), each in
            syncbench.step("generate"): transformers' own check after every token
  threads   two threads, worker-1 and worker-2, each one step "work" of A (B) reads of a GPU
            value at one line (marked SYNC:thread); prints {"tids": {name: tid}} first
  tasks     two asyncio tasks on one thread, each A (B) reads at that line, yielding to the
            other after each, each counted by syncbench.count_syncs(scope="task"), and task 1
            again under no_syncs(allow=its own calls, scope="task") and allow=one less (needs
            the package, attached in this process: not under syncbench audit)
  --extra-item   one more scalar read in each step, at its own line (marked SYNC:extra in train,
                 SYNC:gen_extra in generate)
  --warm-syncs W a torch.cuda.synchronize() in each of the first W steps only (marked SYNC:warm)

The line `# SHIFT-HERE` is where a test inserts lines above every sync (the sites move). The
last line on stdout is one JSON object: {"mode", "steps", ...}. Exit 2 when torch has no CUDA
device (or transformers is missing for generate)."""
import argparse
import asyncio
import json
import sys
import threading

# SHIFT-HERE

CONFIG = dict(width=256, depth=3, classes=10, batch=64, batches=8)
GPT2 = dict(n_layer=2, n_head=4, n_embd=128, vocab_size=1000, n_positions=128, bos_token_id=0,
            eos_token_id=1, pad_token_id=1)


def step(torch, name):
    """syncbench.step(name) where the package is found (the plugin's steps and the NVTX range),
    else the NVTX range alone: what syncbench audit --range counts."""
    try:
        import syncbench
    except ImportError:
        return torch.cuda.nvtx.range(name)
    return syncbench.step(name)


def mlp(torch, cfg):
    layers = [torch.nn.Linear(cfg["width"], cfg["width"])]
    for _ in range(cfg["depth"]):
        layers += [torch.nn.LayerNorm(cfg["width"]), torch.nn.GELU(),
                   torch.nn.Linear(cfg["width"], cfg["width"])]
    return torch.nn.Sequential(*layers, torch.nn.Linear(cfg["width"], cfg["classes"]))


def train(torch, args, cfg=CONFIG):
    torch.manual_seed(0)
    model = mlp(torch, cfg).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    scaler = torch.amp.GradScaler("cuda")
    xs = torch.randn(cfg["batch"] * cfg["batches"], cfg["width"])
    ys = torch.randint(0, cfg["classes"], (cfg["batch"] * cfg["batches"],))
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xs, ys),
                                         batch_size=cfg["batch"])
    logged, i = 0.0, 0
    while i < args.steps:
        for x, y in loader:
            if i == args.steps:
                break
            with step(torch, "train_step"):
                x, y = x.to("cuda"), y.to("cuda")  # pageable: copied and waited for
                with torch.autocast("cuda", dtype=torch.float16):
                    loss = torch.nn.functional.cross_entropy(model(x), y)
                opt.zero_grad(set_to_none=True)
                scaler.scale(loss).backward()
                scaler.step(opt)  # GradScaler reads found_inf on the host (inside torch)
                scaler.update()
                for _ in range(args.reads):
                    logged = loss.item()  # SYNC:loss
                if args.extra_item:
                    logged += loss.detach().abs().max().item()  # SYNC:extra
                if i < args.warm_syncs:
                    torch.cuda.synchronize()  # SYNC:warm
            i += 1
    return {"mode": "train", "steps": args.steps, "loss": logged}


def generate(torch, args):
    from transformers import GPT2Config, GPT2LMHeadModel
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(**GPT2)).cuda().eval()
    ids = torch.randint(2, GPT2["vocab_size"], (4, 8), device="cuda")
    mask = torch.ones_like(ids)
    tokens = 0
    # greedy, every call args.new_tokens long (EOS never chosen before)
    kw = dict(attention_mask=mask, max_new_tokens=args.new_tokens,
              min_new_tokens=args.new_tokens, do_sample=False)
    with torch.no_grad():
        for _ in range(args.steps):
            with step(torch, "generate"):
                out = model.generate(ids, **kw)  # SYNC:gen (one line: the call's line)
                if args.extra_item:
                    tokens += int(out[0, -1])  # SYNC:gen_extra
            tokens += out.shape[1] - ids.shape[1]
    return {"mode": "generate", "steps": args.steps, "tokens": tokens}


def read(t):
    return t.sum().item()  # SYNC:thread


def threads(torch, args):
    counts = [int(n) for n in args.reads_each.split(",")]
    x = torch.ones(16, device="cuda")
    read(x)  # the first read's one-off work outside every step
    tids, go = {}, threading.Barrier(len(counts))

    def work(name, n):
        tids[name] = threading.get_native_id()
        go.wait()
        with step(torch, "work"):
            for _ in range(n):
                read(x)

    ts = [threading.Thread(target=work, args=(f"worker-{k}", n), name=f"worker-{k}")
          for k, n in enumerate(counts, 1)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    print(json.dumps({"tids": tids}), flush=True)
    return {"mode": "threads", "steps": len(counts), "reads": counts}


async def _reads(syncbench, x, n, got, key):
    """n reads in this task, yielding to the other task after each: its calls alone counted."""
    with syncbench.count_syncs(scope="task") as s:
        for _ in range(n):
            read(x)
            await asyncio.sleep(0)  # the other task reads here
    got[key] = s.blocking


async def _held(syncbench, x, n, allow):
    """n reads under no_syncs(allow, scope="task"), yielding after each: "passed" or
    "failed"."""
    try:
        with syncbench.no_syncs(allow=allow, scope="task"):
            for _ in range(n):
                read(x)
                await asyncio.sleep(0)
    except syncbench.SyncError:
        return "failed"
    return "passed"


def tasks(torch, args):
    import syncbench
    counts = [int(n) for n in args.reads_each.split(",")]
    x = torch.ones(16, device="cuda")
    read(x)  # the first read's one-off work outside every block
    with syncbench.count_syncs() as one:
        read(x)
    per, got = one.blocking, {}

    async def main():
        with syncbench.count_syncs(scope="thread") as every:
            await asyncio.gather(*(_reads(syncbench, x, n, got, f"task-{k}")
                                   for k, n in enumerate(counts, 1)))
        got["thread"] = every.blocking
        for name, allow in (("exact", per * counts[0]), ("one_less", per * counts[0] - 1)):
            held = await asyncio.gather(_held(syncbench, x, counts[0], allow),
                                        _reads(syncbench, x, counts[1], {}, "other"))
            got[name] = held[0]

    asyncio.run(main())
    return {"mode": "tasks", "steps": len(counts), "reads": counts, "per_read": per, **got}


def parser():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("train", "generate", "threads", "tasks"))
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--reads", type=int, default=1)
    ap.add_argument("--reads-each", default="1,3")
    ap.add_argument("--extra-item", action="store_true")
    ap.add_argument("--warm-syncs", type=int, default=0)
    ap.add_argument("--new-tokens", type=int, default=8)
    return ap


def run(argv):
    """The mode argv names (a list, as on the command line): its JSON object."""
    args = parser().parse_args(argv)
    if args.steps is None:
        args.steps = 8 if args.mode == "train" else 4
    try:
        import torch
    except ImportError as e:
        print(f"baseline_loop.py: torch is not installed: {e}", file=sys.stderr)
        raise SystemExit(2)
    if not torch.cuda.is_available():
        print("baseline_loop.py: torch has no CUDA device", file=sys.stderr)
        raise SystemExit(2)
    if args.mode == "generate":
        try:
            import transformers  # noqa: F401 (only whether it imports)
        except ImportError as e:
            print(f"baseline_loop.py: transformers is not installed: {e}", file=sys.stderr)
            raise SystemExit(2)
    modes = {"train": train, "generate": generate, "threads": threads, "tasks": tasks}
    out = modes[args.mode](torch, args)
    torch.cuda.synchronize()
    return out


if __name__ == "__main__":
    print(json.dumps(run(sys.argv[1:])), flush=True)
