#!/usr/bin/env python3
"""A mixed-precision training loop as the PyTorch recipe writes it (the framework suite,
tests/frameworks/): an MLP under torch.autocast(float16) with torch.amp.GradScaler and AdamW,
its batches from a DataLoader over host tensors.

    amp_loop.py [--fix fused,bf16,pinned,no-check] [--steps N] [--warmup W] [--size small|gpu]
                [--alternate no-check --blocks B [--first sync|fixed]]

  fused   AdamW(..., fused=True): the optimizer takes the scaler's inf check on the GPU, so
          GradScaler.step() reads no found_inf on the host
  bf16    torch.autocast(bfloat16) and no GradScaler (bf16 needs no loss scaling)
  pinned  DataLoader(pin_memory=True) and .to("cuda", non_blocking=True)
  no-check  not a fix: GradScaler.step() steps without reading found_inf (an inf step is then
          not skipped); the same compute as the baseline less that one sync, to price the sync
          alone (fused also changes the optimizer's kernels)

--alternate no-check switches the scaler's step between GradScaler's own and the one that reads
no found_inf, in place between blocks (fw_common). fused does not switch in place: the fused
AdamW keeps its step counts on the GPU and the foreach one on the host (it would read a GPU count
with .item() per parameter), so one optimizer cannot take both, and two would copy their state
at each switch. A block is a multiple of 8 steps (an epoch of the loader).

Prints fw_common's JSON line."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fw_common  # noqa: E402

FIXES = ("fused", "bf16", "pinned", "no-check")
TOGGLES = ("no-check",)  # the fixes --alternate switches in place
EPOCH = 8  # batches an epoch
SIZES = {"small": dict(width=512, depth=4, batch=64), "gpu": dict(width=4096, depth=8, batch=512)}


def unchecked(optimizer, state, *args, **kw):
    """GradScaler._maybe_opt_step less its read of found_inf: steps whatever it holds."""
    return optimizer.step(*args, **kw)


def main():
    ap = fw_common.parser(__doc__, FIXES, TOGGLES)
    a = ap.parse_args()
    fixes = fw_common.fixes_of(ap, a, FIXES, period=EPOCH)
    if a.alternate and "bf16" in fixes:
        ap.error("--alternate no-check needs the GradScaler that bf16 leaves out")
    torch = fw_common.need("torch")
    fw_common.cuda_or_exit(torch)
    s = SIZES[a.size]
    torch.manual_seed(0)
    layers = []
    for _ in range(s["depth"]):
        layers += [torch.nn.Linear(s["width"], s["width"]), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(s["width"], 10)).cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4, fused="fused" in fixes)
    bf16 = "bf16" in fixes
    scaler = None if bf16 else torch.amp.GradScaler("cuda")
    checked = None if scaler is None else scaler._maybe_opt_step

    def set_no_check(on):
        # GradScaler._maybe_opt_step reads found_inf with .item() before stepping
        scaler._maybe_opt_step = unchecked if on else checked

    if "no-check" in fixes:
        set_no_check(True)
    dtype = torch.bfloat16 if bf16 else torch.float16
    xs = torch.randn(s["batch"] * EPOCH, s["width"])
    ys = torch.randint(0, 10, (s["batch"] * EPOCH,))
    pinned = "pinned" in fixes
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(xs, ys),
                                         batch_size=s["batch"], pin_memory=pinned)
    timer = fw_common.timer_of(torch, a, set_no_check)
    steps = fw_common.total_steps(a)
    step = 0
    while step < steps:
        for x, y in loader:
            x, y = x.to("cuda", non_blocking=pinned), y.to("cuda", non_blocking=pinned)
            with torch.autocast("cuda", dtype=dtype):
                loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad(set_to_none=True)
            if scaler is None:
                loss.backward()
                opt.step()
            else:
                scaler.scale(loss).backward()
                scaler.step(opt)  # the scaler's found_inf read here unless fused
                scaler.update()
            step += 1
            timer.step_done(step)
            if step == steps:
                break
    return fw_common.emit("amp_loop", fixes, a, timer)


if __name__ == "__main__":
    sys.exit(main())
