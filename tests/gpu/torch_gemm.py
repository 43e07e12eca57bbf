"""Reference for big-gemm's TFLOP/s: the same GEMM through torch.mm, timed the same way
(CUDA events around back-to-back launches, median of repetitions, after a warm-up), so
syncbench's figure can be checked to add nothing. Usage: torch_gemm.py [M N K] [dtype]."""
import statistics
import sys
import time

import torch


def main():
    m, n, k = (int(x) for x in sys.argv[1:4]) if len(sys.argv) >= 4 else (8192, 8192, 8192)
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}[
        sys.argv[4] if len(sys.argv) >= 5 else "fp16"]
    torch.backends.cuda.matmul.allow_tf32 = False
    # the same data as syncbench's: uniform in [-1, 1) drawn in fp32, then rounded to dtype.
    # (torch.rand(dtype=fp16) * 2 - 1 leaves the low mantissa bits of small values zero, and a
    # GEMM on such data draws less power and runs a few percent faster on a power-capped GPU.)
    a = torch.empty(m, k, device="cuda", dtype=torch.float32).uniform_(-1, 1).to(dtype)
    b = torch.empty(k, n, device="cuda", dtype=torch.float32).uniform_(-1, 1).to(dtype)
    c = torch.empty(m, n, device="cuda", dtype=dtype)
    t0 = time.time()
    while time.time() - t0 < 1.0:  # warm-up: handles, heuristics, clocks
        torch.mm(a, b, out=c)
    torch.cuda.synchronize()
    batch, times = 32, []
    for _ in range(20):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(batch):
            torch.mm(a, b, out=c)
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e3 / batch)
    us = statistics.median(times)
    print(f"torch.mm {m}x{n}x{k} {sys.argv[4] if len(sys.argv) >= 5 else 'fp16'}: "
          f"kernel_us={us:.1f} TFLOPs={2 * m * n * k / (us * 1e-6) / 1e12:.1f} "
          f"cv={100 * statistics.stdev(times) / statistics.mean(times):.2f}% "
          f"torch={torch.__version__} gpu={torch.cuda.get_device_name()}")


if __name__ == "__main__":
    main()
