#!/usr/bin/env python3
"""A JAX loop for `syncbench audit`'s GPU test (issue 39): XLA's runtime makes the CUDA calls on
threads of its own while the Python thread that asked for a value sleeps until one of them hands
it over, so the audit must name the Python line of the thread that waited.

    jax_loop.py [--steps N] [--gets M]

One warm-up step (the step and the element read compiled, then block_until_ready), then N steps
(default 20) of a jitted step (a 128x128 matmul, a tanh, a blend), each reading one element to
the host with float(x[0, 0]) (the line marked SYNC-LINE); after the loop, M more steps (default
5), each followed by jax.device_get(x), which reads the whole array (GET-LINE): several reads,
so that one missed under a busy machine's load (docs/audit.md, "Under load") leaves others.
XLA's preallocation of most of the GPU's memory is turned off
(XLA_PYTHON_CLIENT_PREALLOCATE=false, unless set). Last line on stdout, one JSON object:
{"steps":N,"platform":"gpu","total":X,"checksum":Y}. Exit 2 on bad usage, 3 when JAX has no
GPU."""
import argparse
import json
import os
import sys


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--gets", type=int, default=5)
    args = ap.parse_args()
    if args.steps < 1 or args.gets < 1:
        ap.error("--steps and --gets must be at least 1")
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    import jax
    import jax.numpy as jnp
    if jax.default_backend() != "gpu":
        print(f"jax_loop.py: JAX has no GPU (backend {jax.default_backend()})", file=sys.stderr)
        return 3

    @jax.jit
    def step(x, w):
        return 0.5 * jnp.tanh(x @ w) + 0.5 * x

    x = jax.random.normal(jax.random.PRNGKey(0), (128, 128), dtype=jnp.float32)
    w = jax.random.normal(jax.random.PRNGKey(1), (128, 128), dtype=jnp.float32) / 16
    # warm-up: every program compiled once, outside the loop
    x = step(x, w)
    x[0, 0].block_until_ready()
    total = 0.0
    for _ in range(args.steps):
        x = step(x, w)
        total += float(x[0, 0])  # SYNC-LINE
    for _ in range(args.gets):
        x = step(x, w)
        host = jax.device_get(x)  # GET-LINE
    print(json.dumps({"steps": args.steps, "platform": jax.default_backend(), "total": total,
                      "checksum": float(host.sum())}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
