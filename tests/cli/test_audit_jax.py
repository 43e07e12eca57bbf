"""Rules that cannot fire on a stranger's symbol (issue 39), end to end through `syncbench audit
--from DIR`, no GPU: the records of a JAX program shaped as the H100 run that found it (every
CUDA call on an XLA runtime thread, native frames in jax's CUDA plugin) and of a torch DDP
process. XLA's own `CudaTimer` is not DDP's step timer, and what host frees it makes are not
either; XLA's stream waits and host frees are named by the JAX rules, in JAX's terms; a float()
of a jax.Array on the Python thread is the user's own read, not a sync inside a library; DDP's
timer in libtorch_cuda.so keeps its name."""
import json

from conftest import run

PLUGIN = "/venv/lib/python3.12/site-packages/jax_cuda12_plugin/xla_cuda_plugin.so"
JAX = "/venv/lib/python3.12/site-packages/jax/_src/"
LIBCUDA = "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
LIBTORCH_CUDA = "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so"

# stream_executor's names as the plugin's symbol table holds them (mangled)
XLA_TIMER = "_ZN15stream_executor3gpu9CudaTimer18GetElapsedDurationEv"
XLA_FREE = "_ZN15stream_executor3gpu12CudaExecutor20HostMemoryDeallocateEPv"
XLA_SYNC = ("_ZN15stream_executor3gpu9GpuDriver17SynchronizeStreamEPNS0_7ContextE"
            "P11CUstream_st")
XLA_DONE = "_ZN15stream_executor3gpu10CudaStream18BlockHostUntilDoneEv"
DDP_TIMER = ("_ZN4c10d12_GLOBAL__N_19CudaTimer17measureDifferenceENS_5Timer5EventES3_")

XLA_THREAD, PY_THREAD = 7, 1


def proc_file(folder, pid, stacks, pystacks, calls):
    """proc-PID.jsonl: stacks (lists of (object, symbol)), Python stacks (lists of (file,
    function, line)), and calls (api, tid, stack, py or None, how many)."""
    lines = [json.dumps({"t": "proc", "v": 1, "pid": pid, "ppid": 1, "rank": -1,
                         "local_rank": -1, "cmd": "python3 train.py", "clock_ns": 0,
                         "mono_ns": 0, "mode": "count", "symsize": 1})]
    for i, frames in enumerate(stacks):
        lines.append(json.dumps({"t": "stack", "id": i, "frames": [
            [obj, sym, 4096 * (k + 1), 0] for k, (obj, sym) in enumerate(frames)]}))
    for i, frames in enumerate(pystacks):
        lines.append(json.dumps({"t": "pystack", "id": i, "frames": [list(f) for f in frames]}))
    corr = 0
    for api, tid, stack, py, n in calls:
        for _ in range(n):
            corr += 1
            call = {"t": "call", "api": api, "dom": "drv", "tid": tid, "ctx": 1, "corr": corr,
                    "start": 1000 * corr, "end": 1000 * corr + 500, "ranges": [],
                    "stack": stack}
            if py is not None:
                call["py"] = py
            lines.append(json.dumps(call))
    end = 1000 * (corr + 1)
    lines.append(json.dumps({"t": "end", "clock_ns": end, "mono_ns": end, "why": "exit",
                             "dropped": 0}))
    (folder / f"proc-{pid}.jsonl").write_text("\n".join(lines) + "\n")


def jax_and_ddp_records(folder):
    folder.mkdir()
    proc_file(folder, 300, stacks=[
        [(LIBCUDA, ""), (PLUGIN, XLA_TIMER)],
        [(LIBCUDA, ""), (PLUGIN, XLA_FREE), (PLUGIN, XLA_TIMER)],  # a host free under the timer
        [(LIBCUDA, ""), (PLUGIN, XLA_SYNC), (PLUGIN, XLA_DONE)],
    ], pystacks=[
        [(JAX + "array.py", "_value", 637), (JAX + "profiler.py", "wrapper", 333),
         (JAX + "array.py", "__float__", 300), ("/home/me/train_jax.py", "main", 12)],
    ], calls=[
        ("cuEventSynchronize", XLA_THREAD, 0, None, 4),
        ("cuMemFreeHost", XLA_THREAD, 1, None, 2),
        ("cuStreamSynchronize", XLA_THREAD, 2, None, 3),
        ("cuStreamSynchronize", PY_THREAD, 2, 0, 1),
    ])
    proc_file(folder, 200, stacks=[
        [(LIBCUDA, ""), (LIBTORCH_CUDA, DDP_TIMER)],
    ], pystacks=[], calls=[("cuEventSynchronize", PY_THREAD, 0, None, 2)])


def rows_of(tmp_path):
    jax_and_ddp_records(tmp_path / "recs")
    j = tmp_path / "r.json"
    r = run("audit", "-q", "--from", tmp_path / "recs", "--json", j)
    assert r.returncode == 0, r.stderr
    return json.loads(j.read_text())["rows"]


def one_row(rows, pid, native_site):
    found = [r for r in rows if r["pid"] == pid and r["native_site"] == native_site]
    assert len(found) == 1, (native_site, rows)
    return found[0]


def test_xla_timer_is_not_ddps(tmp_path):
    rows = rows_of(tmp_path)
    named = [(r["native_site"], r["operation"]) for r in rows if r["pid"] == 300]
    assert named and not [n for n in named if "DDP" in (n[1] or "")], named
    timer = one_row(rows, 300, "xla_cuda_plugin.so!stream_executor::gpu::CudaTimer::"
                               "GetElapsedDuration()")
    assert timer["count"] == 4
    # no rule knows XLA's timer: what its API alone says, at its native frame
    assert timer["operation"] == "explicit sync: event (cudaEventSynchronize)", timer
    assert timer["site"] == timer["native_site"]
    assert "torch" not in timer["fix"] and "ev.query()" not in timer["fix"]


def test_xla_waits_and_host_frees_are_named_for_jax(tmp_path):
    rows = rows_of(tmp_path)
    free = one_row(rows, 300, "xla_cuda_plugin.so!stream_executor::gpu::CudaExecutor::"
                              "HostMemoryDeallocate(void*)")
    assert free["count"] == 2 and free["class"] == "free"
    assert free["operation"].startswith("inside XLA: pinned host memory freed"), free
    assert "jax.device_put" in free["fix"] and "pinned" in free["fix"]
    sync = [r for r in rows if r["pid"] == 300 and r["python"] is None and
            r["class"] == "sync-stream"]
    assert len(sync) == 1 and sync[0]["count"] == 3, rows
    assert sync[0]["native_site"].startswith(
        "xla_cuda_plugin.so!stream_executor::gpu::GpuDriver::SynchronizeStream(")
    assert sync[0]["operation"].startswith("inside XLA: the host waits for a stream"), sync
    for text in ("jax.block_until_ready", "jax.lax.cond", "jax.device_get of a tuple"):
        assert text in sync[0]["fix"], sync[0]["fix"]


def test_a_float_of_a_jax_array_is_the_users_read(tmp_path):
    rows = rows_of(tmp_path)
    py = [r for r in rows if r["pid"] == 300 and r["python"] is not None]
    assert len(py) == 1, rows
    r = py[0]
    assert r["python"]["file"] == "/home/me/train_jax.py" and r["python"]["line"] == 12
    assert r["operation"] == "jax: scalar read: float(x) / int(x)", r
    assert r["library"] is None  # jax's Python is how its operations are called
    assert r["fix"].startswith("keep it on the device") and "jax.device_get" in r["fix"]
    assert r["scenario"] == "log-every"


def test_ddps_timer_in_libtorch_keeps_its_name(tmp_path):
    rows = rows_of(tmp_path)
    ddp = one_row(rows, 200, "libtorch_cuda.so!c10d::(anonymous namespace)::CudaTimer::"
                             "measureDifference(c10d::Timer::Event, c10d::Timer::Event)")
    assert ddp["operation"] == "inside a library: DDP's step timer (CudaTimer::measureDifference)"
    assert "_set_ddp_runtime_logging_sample_rate" in ddp["fix"]
