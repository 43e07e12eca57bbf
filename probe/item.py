import sys, torch
mode = sys.argv[1] if len(sys.argv) > 1 else "item"
x = torch.randn(256, 256, device="cuda")
if mode == "profiler":
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]) as p:
        for i in range(20):
            with torch.cuda.nvtx.range("train_step"):
                v = (x @ x).sum().item()
    print("profiler events", len(p.events()), "cuda kernels", sum(1 for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA))
for i in range(200):
    with torch.cuda.nvtx.range("train_step"):
        v = (x @ x).sum().item()
torch.cuda.synchronize()
print("done", torch.__version__, torch.version.cuda)
