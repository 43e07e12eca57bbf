"""torch.compile apart (docs/audit.md, "torch.compile: compile time apart"), through
`syncbench audit --from DIR` on synthetic record streams (docs/record-format.md): a call whose
Python stack holds torch.compile's compile, autotuning or benchmarking machinery, or made by a
compile worker, is compile time: named as torch.compile's work at the user's line (never at a
file of Inductor's cache), reported apart, outside the gate unless --include-compile and outside
the replay's savings; a call of the compiled step at run time, through the same wrappers and the
same generated code, stays in the gate."""
import csv
import json

from conftest import assert_usage_error, run

PKG = "/usr/lib/python3/dist-packages/"
CACHE = "/tmp/torchinductor_me/"
LAUNCHER = [CACHE + "kt/ckotz5zqbd3.py", "launcher", 180]  # a Triton launcher Inductor wrote
GRAPH = [CACHE + "ab/cab4x2.py", "call", 77]               # the compiled graph's call()
USER_SRC = "import torch\n\n\n\n\n\n\n\n\n\n\nloss = step(x)\nprint(loss.item())\n"

# The stacks below the user's line, innermost first: a kernel's configurations benchmarked at
# its first launch (the generated launcher innermost), Dynamo compiling the frame, and the
# compiled step at run time (the same launcher, through the wrappers only).
AUTOTUNE = [LAUNCHER,
            [PKG + "torch/_inductor/runtime/triton_heuristics.py", "kernel_call", 900],
            [PKG + "torch/_inductor/runtime/benchmarking.py", "benchmark_gpu", 60],
            [PKG + "torch/_inductor/runtime/triton_heuristics.py", "bench", 910],
            [PKG + "torch/_inductor/runtime/triton_heuristics.py", "benchmark_all_configs", 950],
            [PKG + "torch/_inductor/runtime/triton_heuristics.py", "autotune_to_one_config", 960],
            [PKG + "torch/_inductor/runtime/triton_heuristics.py", "run", 1000],
            GRAPH,
            [PKG + "torch/_inductor/output_code.py", "__call__", 460],
            [PKG + "torch/_functorch/_aot_autograd/runtime_wrappers.py", "runtime_wrapper", 300],
            [PKG + "torch/_dynamo/eval_frame.py", "_fn", 570]]
DYNAMO = [[PKG + "torch/_dynamo/convert_frame.py", "_compile", 700],
          [PKG + "torch/_dynamo/convert_frame.py", "__call__", 1100],
          [PKG + "torch/_dynamo/eval_frame.py", "_fn", 570]]
RUNTIME = [LAUNCHER,
           [PKG + "torch/_inductor/runtime/triton_heuristics.py", "run", 1000],
           GRAPH,
           [PKG + "torch/_inductor/output_code.py", "__call__", 460],
           [PKG + "torch/_inductor/compile_fx.py", "run", 1500],
           [PKG + "torch/_functorch/_aot_autograd/runtime_wrappers.py", "runtime_wrapper", 300],
           [PKG + "torch/_dynamo/eval_frame.py", "_fn", 570]]
WORKER_CMD = ("/usr/bin/python3 " + PKG + "torch/_inductor/compile_worker/__main__.py "
              "--pickler=torch._inductor.compile_worker.subproc_pool.SubprocPickler --kind=fork "
              "--workers=4 --parent=100")
TRITON_COMPILE = [[PKG + "triton/compiler/compiler.py", "compile", 300],
                  [PKG + "torch/_inductor/async_compile.py", "_worker_compile_triton", 40]]


class Stream:
    """One process's records, as records.h writes them: a proc record, Python stacks, calls
    (each 10 us, in the order given, inside an NVTX range when given), and an end record."""

    def __init__(self, pid, cmd, gpu=False):
        self.pid, self.lines, self.stacks, self.t, self.corr = pid, [], {}, 1000, 0
        flags = ',"kernels":1,"launches":1' if gpu else ',"kernels":0'  # absent: kernels 1
        self.lines.append(json.dumps({"t": "proc", "v": 1, "pid": pid, "ppid": 1, "rank": -1,
                                      "local_rank": -1, "cmd": cmd, "clock_ns": 0,
                                      "mono_ns": 0, "mode": "count"})[:-1] + flags + "}")

    def call(self, api, frames, n=1, rng=None, kernel=False):
        key = json.dumps(frames)
        if frames is not None and key not in self.stacks:
            self.stacks[key] = len(self.stacks) + 1
            self.lines.append(json.dumps({"t": "pystack", "id": self.stacks[key],
                                          "frames": frames}))
        for _ in range(n):
            self.corr += 2
            if kernel:  # a launch and its kernel, which the sync then waits for
                self.lines += [json.dumps({"t": "api", "api": "cudaLaunchKernel_v7000",
                                           "dom": "rt", "tid": 1, "corr": self.corr - 1,
                                           "start": self.t, "end": self.t + 2000}),
                               json.dumps({"t": "kernel", "dev": 0, "ctx": 1, "stream": 7,
                                           "corr": self.corr - 1, "start": self.t + 3000,
                                           "end": self.t + 50000})]
                self.t += 2500
            rec = {"t": "call", "api": api, "dom": "rt", "tid": 1, "ctx": 1, "corr": self.corr,
                   "start": self.t, "end": self.t + 60000 if kernel else self.t + 10000,
                   "ranges": [[self.t, rng]] if rng else [], "stack": -1,
                   "py": self.stacks[key] if frames is not None else -1}
            self.lines.append(json.dumps(rec))
            if kernel:
                self.lines.append(json.dumps({"t": "sync", "type": "stream", "ctx": 1,
                                              "stream": 7, "corr": self.corr, "sync_id": -1,
                                              "start": self.t, "end": self.t + 60000}))
            if rng:
                self.lines.append(json.dumps({"t": "range", "tid": 1, "id": self.t, "name": rng,
                                              "start": self.t, "end": self.t + 10000,
                                              "depth": 0}))
            self.t += 100000
        return self

    def write(self, folder):
        folder.mkdir(exist_ok=True)
        self.lines.append(json.dumps({"t": "end", "clock_ns": self.t, "mono_ns": self.t,
                                      "why": "exit", "dropped": 0}))
        (folder / f"proc-{self.pid}.jsonl").write_text("\n".join(self.lines) + "\n")


def user(tmp_path, line=12):
    """The user's frames: train.py's line that calls the compiled step, then <module>."""
    src = tmp_path / "train.py"
    src.write_text(USER_SRC)
    return [[str(src), "main", line], [str(src), "<module>", 20]]


def compiled_step(tmp_path, run_time=2):
    """A compiled training step: 8 device syncs and 3 polls of autotuning, one sync of Dynamo
    compiling the frame, `run_time` syncs of the compiled step at run time, through the same
    launcher, and the loop's .item() line once per step."""
    u = user(tmp_path)
    s = Stream(100, "python3 train.py")
    s.call("cudaStreamSynchronize_v3020", DYNAMO + u)
    s.call("cudaDeviceSynchronize_v3020", AUTOTUNE + u, n=8)
    s.call("cudaEventQuery_v3020", AUTOTUNE + u, n=3)
    s.call("cudaStreamSynchronize_v3020", RUNTIME + u, n=run_time)
    return s


def audit(folder, *args):
    return run("audit", "--from", folder, *args, timeout=60)


def rows_of(path):
    return json.loads(path.read_text())["rows"]


def test_a_compile_time_sync_is_named_at_the_users_line_apart(tmp_path):
    compiled_step(tmp_path).write(tmp_path / "recs")
    j, c = tmp_path / "r.json", tmp_path / "r.csv"
    r = audit(tmp_path / "recs", "--json", j, "--csv", c)
    assert r.returncode == 0, r.stderr
    rows = rows_of(j)
    tune = [x for x in rows if x["class"] == "sync-device"]
    assert len(tune) == 1 and tune[0]["count"] == 8
    t = tune[0]
    assert t["phase"] == "compile"
    assert t["operation"] == "torch.compile: autotuning/benchmarking"
    assert t["site"].endswith("train.py:12 in main"), t["site"]
    assert t["python"]["line"] == 12 and t["python"]["source"] == "loss = step(x)"
    # the innermost frame is the generated launcher: the via line is the first a user can open
    assert t["via"]["file"] == PKG + "torch/_inductor/runtime/triton_heuristics.py", t["via"]
    assert t["via"]["function"] == "kernel_call"
    assert t["scenario"] is None and t["site_save_us"] is None
    dyn = [x for x in rows if x["operation"] and "Dynamo" in x["operation"]]
    assert len(dyn) == 1 and dyn[0]["phase"] == "compile" and dyn[0]["count"] == 1
    # no generated file is a site or a via line, in any report
    for x in rows:
        assert "torchinductor_" not in x["site"]
        assert x["via"] is None or "torchinductor_" not in x["via"]["file"] + x["via"]["site"]
    assert "torchinductor_" not in r.stderr and "torchinductor_" not in c.read_text()
    with open(c, newline="") as f:
        phases = {(x["class"], x["phase"]) for x in csv.DictReader(f)}
    assert ("sync-device", "compile") in phases and ("sync-stream", "run") in phases
    total = json.loads(j.read_text())["total"]["phases"]
    assert total["compile"] == {"blocking_calls": 9, "blocked_us": 90, "polls": 3}
    assert total["run"] == {"blocking_calls": 2, "blocked_us": 20, "polls": 0}
    # the table: the run time, then the compile time, each with its own top sites
    assert "pid 100: compile time (torch.compile): 9 blocking calls (0.090 ms blocked) and 3 " \
           "polls, apart below" in r.stderr
    head, run_part = r.stderr.split("\nrun time\n")
    run_part, compile_part = run_part.split("\ncompile time (torch.compile")
    assert "torch.compile" not in run_part and "sync-device" not in run_part
    assert "what: torch.compile: autotuning/benchmarking" in compile_part
    assert "top sites, compile time (torch.compile)" in compile_part


def test_a_run_time_call_of_the_compiled_step_stays_in_the_gate(tmp_path):
    u = user(tmp_path)
    Stream(100, "python3 train.py").call("cudaStreamSynchronize_v3020", RUNTIME + u,
                                         n=2).write(tmp_path / "recs")
    j = tmp_path / "r.json"
    r = audit(tmp_path / "recs", "--max-syncs", "0", "--json", j)
    assert r.returncode == 1, r.stderr
    assert "audit gate: FAILED: 2 blocking calls" in r.stderr
    assert "compile-time" not in r.stderr
    (row,) = rows_of(j)
    assert row["phase"] == "run" and not row["operation"].startswith("torch.compile")
    assert row["site"].endswith("train.py:12 in main"), row["site"]
    # the innermost frame is Inductor's generated launcher: the line inside a library is the
    # first one a user can open
    assert row["via"]["file"].endswith("torch/_inductor/runtime/triton_heuristics.py")


def test_the_gate_passes_on_compile_time_syncs_alone_and_include_compile_gates_them(tmp_path):
    compiled_step(tmp_path, run_time=0).write(tmp_path / "recs")
    r = audit(tmp_path / "recs", "--max-syncs", "0")
    assert r.returncode == 0, r.stderr
    assert "audit gate: passed: 0 blocking calls (max 0)" in r.stderr
    assert "audit gate: the run's 9 compile-time blocking calls (torch.compile) left out; " \
           "--include-compile gates them" in r.stderr
    j = tmp_path / "r.json"
    r = audit(tmp_path / "recs", "--max-syncs", "0", "--include-compile", "--json", j)
    assert r.returncode == 1, r.stderr
    assert "audit gate: FAILED: 9 blocking calls, more than --max-syncs 0" in r.stderr
    assert "counted too (--include-compile): 9 in the run" in r.stderr
    assert "(torch.compile: autotuning/benchmarking)" in r.stderr  # the offending site's op
    gate = json.loads(j.read_text())["gate"]
    assert gate["include_compile"] is True and gate["passed"] is False


def test_the_gate_counts_the_run_time_of_a_compiled_step_only(tmp_path):
    compiled_step(tmp_path, run_time=2).write(tmp_path / "recs")
    j = tmp_path / "r.json"
    r = audit(tmp_path / "recs", "--max-syncs", "2", "--json", j)
    assert r.returncode == 0, r.stderr
    assert "audit gate: passed: 2 blocking calls (max 2)" in r.stderr
    gate = json.loads(j.read_text())["gate"]
    assert gate["compile_left_out"] == 9 and gate["include_compile"] is False
    r = audit(tmp_path / "recs", "--max-syncs", "1")
    assert r.returncode == 1
    assert "audit gate: FAILED: 2 blocking calls" in r.stderr
    top = r.stderr[r.stderr.index("top sites:"):]
    assert "torch.compile" not in top and "sync-device" not in top  # run-time offenders only


def test_a_range_gate_leaves_the_first_steps_compile_out(tmp_path):
    u = user(tmp_path)
    s = Stream(100, "python3 train.py")
    s.call("cudaDeviceSynchronize_v3020", AUTOTUNE + u, n=4, rng="train_step")
    s.call("cudaStreamSynchronize_v3020", RUNTIME + u, n=3, rng="train_step")
    s.write(tmp_path / "recs")
    r = audit(tmp_path / "recs", "--max-syncs", "1", "--range", "train_step")
    assert r.returncode == 0, r.stderr
    assert "at most 1 blocking call each" in r.stderr
    assert "the run's 4 compile-time blocking calls (torch.compile) left out" in r.stderr
    r = audit(tmp_path / "recs", "--max-syncs", "0", "--range", "train_step",
              "--include-compile")
    assert r.returncode == 1 and "7 of 7 instances" in r.stderr, r.stderr


def test_a_compile_worker_is_labelled_and_its_calls_are_compile_time(tmp_path):
    compiled_step(tmp_path, run_time=1).write(tmp_path / "recs")
    Stream(101, WORKER_CMD).call("cudaDeviceSynchronize_v3020", TRITON_COMPILE) \
        .call("cudaStreamSynchronize_v3020", None).write(tmp_path / "recs")
    j = tmp_path / "r.json"
    r = audit(tmp_path / "recs", "--max-syncs", "1", "--json", j)
    assert r.returncode == 0, r.stderr
    assert "pid 101 (torch.compile worker): host blocked" in r.stderr
    assert "pid 100 (torch.compile worker)" not in r.stderr
    report = json.loads(j.read_text())
    roles = {p["pid"]: p["role"] for p in report["processes"]}
    assert roles == {100: None, 101: "torch.compile worker"}
    worker = [x for x in report["rows"] if x["pid"] == 101]
    assert len(worker) == 2 and all(x["phase"] == "compile" for x in worker)
    ops = {x["operation"] for x in worker}
    assert ops == {"torch.compile: compiling and loading kernels", "torch.compile: compile worker"}
    assert "audit gate: the run's 11 compile-time blocking calls (torch.compile) left out" \
        in r.stderr


def test_a_worker_found_by_its_stack_alone(tmp_path):
    """A worker whose command line says nothing (a binary of its own): its entry point on a
    Python stack."""
    entry = [[PKG + "torch/_inductor/compile_worker/__main__.py", "main", 40]]
    Stream(102, "compile-helper").call("cudaDeviceSynchronize_v3020", entry).write(tmp_path / "r")
    j = tmp_path / "r.json"
    r = audit(tmp_path / "r", "--json", j)
    assert r.returncode == 0, r.stderr
    assert json.loads(j.read_text())["processes"][0]["role"] == "torch.compile worker"


def test_a_programs_own_triton_benchmark_is_not_compile_time(tmp_path):
    """triton.testing.do_bench called by the program itself, not by Inductor: its syncs are the
    program's, in the gate."""
    u = user(tmp_path)
    bench = [[PKG + "triton/testing.py", "do_bench", 120]]
    Stream(100, "python3 bench.py").call("cudaDeviceSynchronize_v3020", bench + u) \
        .write(tmp_path / "recs")
    j = tmp_path / "r.json"
    r = audit(tmp_path / "recs", "--max-syncs", "0", "--json", j)
    assert r.returncode == 1, r.stderr
    assert rows_of(j)[0]["phase"] == "run"


def test_only_generated_frames_give_no_python_site(tmp_path):
    """A stack of Inductor's cache alone: no line a user can open, so the site is native."""
    Stream(100, "python3 x.py").call("cudaDeviceSynchronize_v3020", [LAUNCHER, GRAPH]) \
        .write(tmp_path / "recs")
    j = tmp_path / "r.json"
    r = audit(tmp_path / "recs", "--json", j)
    assert r.returncode == 0, r.stderr
    (row,) = rows_of(j)
    assert row["python"] is None and row["via"] is None and row["site"] == "?"


def test_the_replay_removes_no_compile_time_sync(tmp_path):
    u = user(tmp_path)
    s = Stream(100, "python3 train.py", gpu=True)
    s.call("cudaStreamSynchronize_v3020", AUTOTUNE + u, n=3, kernel=True)
    s.call("cudaStreamSynchronize_v3020", [[str(tmp_path / "train.py"), "main", 13]] + u[1:],
           n=2, kernel=True)
    s.write(tmp_path / "recs")
    j = tmp_path / "r.json"
    r = audit(tmp_path / "recs", "--json", j)
    assert r.returncode == 0, r.stderr
    pred = json.loads(j.read_text())["processes"][0]["predicted"]
    assert pred["calls"] == 2, pred["calls"]
    assert pred["sites"] and all(x["site"].endswith("train.py:13 in main") for x in pred["sites"])
    assert "removing all 2 syncs would save" in r.stderr
    for x in rows_of(j):
        assert (x["site_save_us"] is None) == (x["phase"] == "compile")


def test_include_compile_needs_a_gate():
    assert_usage_error(run("audit", "--include-compile", "--", "/bin/true"),
                       "--include-compile needs --max-syncs N")
