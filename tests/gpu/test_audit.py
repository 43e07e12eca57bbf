"""`syncbench audit -- CMD` on a real GPU: exact counts of every class of host-blocking CUDA call
per NVTX range, from programs that print what they did (tests/audit/: audit_counts,
audit_exit, audit_parent, torch_item.py); the gate per range instance; how CMD ends (exit code,
crash, kill, no CUDA); a process tree; bubbles and GPU busy only with GPU activity recorded; the
Chrome trace and plot/timeline.py on it; and syncbench's own scenarios audited, whose sync
counts the code fixes (iters x reps). Counts and structure only: how long a sync blocked and
how long a bubble lasted are tests/validate/'s (`make validate`). Skipped where there is no GPU
(the torch tests also where torch or its CUDA is missing)."""
import csv
import json
import os
import subprocess
import sys

import pytest

from conftest import AUDIT_CSV_COLUMNS, torch_python, BIN, ROOT, gpu_available, run

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

PROGRAMS = os.environ.get("SYNCBENCH_TEST_PROGRAMS", str(ROOT / "build" / "tests"))
COUNTS = os.path.join(PROGRAMS, "audit_counts")
EXIT = os.path.join(PROGRAMS, "audit_exit")
PARENT = os.path.join(PROGRAMS, "audit_parent")
NVTX_PROG = os.path.join(PROGRAMS, "audit_nvtx")
TORCH_ITEM = str(ROOT / "tests" / "audit" / "torch_item.py")
TIMELINE = str(ROOT / "plot" / "timeline.py")

CSV_COLUMNS = AUDIT_CSV_COLUMNS.split(",")
CLASSES = ["sync-device", "sync-stream", "sync-event", "copy-sync", "copy-pageable",
           "memset-sync", "free", "waited", "poll"]
BLOCKING = [c for c in CLASSES if c != "poll"]  # explicit and implicit: what the gate counts
N = 5


@pytest.fixture(scope="module", autouse=True)
def programs_built():
    for p in (COUNTS, EXIT, PARENT, NVTX_PROG):
        if not os.access(p, os.X_OK):
            pytest.fail(f"{p} not built; run make test-programs")


class Audit:
    """One `syncbench audit` run: its process, CSV rows, JSON report and CMD's JSON line."""

    def __init__(self, r, rows, report, truth):
        self.r, self.rows, self.report, self.truth = r, rows, report, truth

    def counts(self, pid=None):
        """{(class, range): count} summed over sites (and processes unless pid is given)."""
        out = {}
        for row in self.rows:
            if pid is not None and int(row["pid"]) != pid:
                continue
            k = (row["class"], row["range"])
            out[k] = out.get(k, 0) + int(row["count"])
        return out

    def rows_of(self, cls, rng):
        return [row for row in self.rows if (row["class"], row["range"]) == (cls, rng)]

    def range_info(self, name):
        hits = [x for x in self.report["ranges"] if x["name"] == name]
        assert len(hits) == 1, (name, self.report["ranges"])
        return hits[0]


def audit(tmp_path, *cmd, opts=(), name="a", timeout=600, expect_truth=True):
    """Runs `syncbench audit --csv F --json J OPTS -- CMD...`; CMD's stdout stays on stdout."""
    csv_path, json_path = tmp_path / f"{name}.csv", tmp_path / f"{name}.json"
    r = run("audit", "--csv", csv_path, "--json", json_path, *opts, "--", *cmd, timeout=timeout)
    rows, report = [], None
    if csv_path.exists():
        with open(csv_path, newline="") as f:
            reader = csv.DictReader(f)
            assert reader.fieldnames == CSV_COLUMNS, r.stderr
            rows = list(reader)
    if json_path.exists():
        report = json.loads(json_path.read_text())
    truth = None
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("{")]
    if expect_truth:
        assert lines, f"CMD printed no JSON line; stdout: {r.stdout!r}; stderr: {r.stderr}"
        truth = json.loads(lines[-1])
    return Audit(r, rows, report, truth)


# ---------------------------------------------------------------------------------------------
# audit_counts: every class, exact per range


@pytest.fixture(scope="module")
def counted(tmp_path_factory):
    d = tmp_path_factory.mktemp("counts")
    a = audit(d, COUNTS, N, opts=("--trace", d / "trace.json"))
    assert a.r.returncode == 0, a.r.stderr
    a.trace_path = d / "trace.json"
    return a


def expected_counts(truth):
    return {(cls, rng): n for cls, per in truth["counts"].items() for rng, n in per.items()}


def assert_exact_inside_ranges(a):
    want = expected_counts(a.truth)
    got = a.counts()
    for rng in ("phase_a", "phase_b", "phase_c"):
        w = {k: v for k, v in want.items() if k[1] == rng}
        g = {k: v for k, v in got.items() if k[1] == rng}
        assert g == w, f"range {rng}: audit {g}, program {w}"


def test_counts_exact_inside_ranges(counted):
    assert_exact_inside_ranges(counted)


@pytest.fixture(scope="module")
def default_mode(tmp_path_factory):
    """audit_counts audited without --trace or --gpu-activity."""
    a = audit(tmp_path_factory.mktemp("default"), COUNTS, N, name="default")
    assert a.r.returncode == 0, a.r.stderr
    return a


def test_counts_exact_in_the_default_mode(default_mode):
    """Without --trace or --gpu-activity no copy is recorded: an async copy's host memory is
    the driver's answer about its pointer, and the counts are the same."""
    assert_exact_inside_ranges(default_mode)
    assert default_mode.report["processes"][0]["gpu_activity"] is False


def test_bubbles_need_gpu_activity(default_mode, counted):
    """By default kernels are not recorded (a cost per launch): no bubble is claimed, no GPU
    busy figure, and the table says how to get them. With GPU activity (--trace implies it)
    every sync row has its bubble and the process its GPU busy share (the kernels ran)."""
    assert default_mode.rows
    assert all(row["bubble_total_us"] == "" for row in default_mode.rows), default_mode.rows
    assert default_mode.report["processes"][0]["gpu_busy_pct"] is None
    assert "--gpu-activity" in default_mode.r.stderr
    assert counted.report["processes"][0]["gpu_activity"] is True
    synced = [row for row in counted.rows if row["class"] != "poll"]
    assert synced and all(float(row["bubble_total_us"]) >= 0 for row in synced), synced
    assert 0 < counted.report["processes"][0]["gpu_busy_pct"] <= 100


def test_counts_outside_ranges_as_promised(counted):
    # the program makes exactly these outside any range; "waited" is the audit's judgement of
    # calls it does not promise anything about (setup), so it is left out
    want = expected_counts(counted.truth)
    got = counted.counts()
    for cls in CLASSES:
        if cls == "waited":
            continue
        assert got.get((cls, ""), 0) == want.get((cls, ""), 0), (cls, got)
    assert want[("free", "")] == N and want[("memset-sync", "")] == 1


def test_counts_json_report(counted):
    rep, truth = counted.report, counted.truth
    assert rep["tool"] == "syncbench audit" and rep["format"] == 1
    assert rep["gate"] is None
    assert isinstance(rep["environment"], dict)
    assert "audit_counts" in json.dumps(rep["command"])
    assert len(rep["processes"]) == 1
    p = rep["processes"][0]
    assert p["pid"] == truth["pid"]
    assert p["complete"] is True
    assert p["rank"] in (-1, None) and p["local_rank"] in (-1, None)  # RANK unset
    assert p["polls"] == truth["polls"] == N
    assert p["blocking_calls"] - p["counts"].get("waited", 0) == truth["blocking_total"]
    for cls in CLASSES:
        if cls == "waited":
            continue
        want = sum(truth["counts"].get(cls, {}).values())
        assert p["counts"].get(cls, 0) == want, cls
    assert 0 <= p["gpu_busy_pct"] <= 100 and 0 <= p["blocked_pct"] <= 100
    assert p["blocked_us"] > 0 and p["lifetime_s"] > 0
    for name, info in truth["ranges"].items():
        got = counted.range_info(name)
        assert got["instances"] == info["instances"], name
        assert got["max_blocking"] == info["max_blocking"], name
        assert got["total_blocking"] == info["total_blocking"], name
    assert len(rep["rows"]) == len(counted.rows)


def test_counts_rows_are_timed_and_sited(counted):
    for row in counted.rows:
        if row["range"] not in ("phase_a", "phase_b", "phase_c"):
            continue
        assert int(row["pid"]) == counted.truth["pid"]
        assert row["group"] == {"poll": "poll", "sync-device": "explicit",
                                "sync-stream": "explicit", "sync-event": "explicit"}.get(
                                    row["class"], "implicit"), row
        # the call site is in the program itself (its own code, or its static cudart)
        assert "audit_counts" in row["site"], row
        total, med, p95 = (float(row[k]) for k in ("blocked_total_us", "blocked_median_us",
                                                    "blocked_p95_us"))
        assert 0 <= med <= p95 <= total + 1e-6, row
        assert float(row["bubble_total_us"]) >= 0
    # one row per explicit kind in phase_a (how long each waited for its 200 us spin is
    # tests/validate/'s)
    for cls in ("sync-device", "sync-stream", "sync-event"):
        (row,) = counted.rows_of(cls, "phase_a")
        assert int(row["count"]) >= 1, row


@pytest.mark.parametrize("rng,limit", [("phase_b", 2), ("phase_c", N), ("phase_a", 3 * N)])
def test_gate_per_range_instance(tmp_path, rng, limit):
    ok = audit(tmp_path, COUNTS, N, opts=("--range", rng, "--max-syncs", limit), name="ok")
    assert ok.r.returncode == 0, ok.r.stderr
    assert ok.report["gate"] is not None
    bad = audit(tmp_path, COUNTS, N, opts=("--range", rng, "--max-syncs", limit - 1), name="bad")
    assert bad.r.returncode == 1, bad.r.stderr
    assert rng in bad.r.stderr
    assert bad.report["gate"] is not None


def test_gate_whole_run(tmp_path):
    total = 7 * N + 3  # what audit_counts promises; "waited" calls could only add to it
    bad = audit(tmp_path, COUNTS, N, opts=("--max-syncs", total - 1), name="bad")
    assert bad.r.returncode == 1, bad.r.stderr


def is_stream_track(tid, names):
    if isinstance(tid, str):
        return tid.startswith("stream ")
    return isinstance(tid, int) and tid >= 1000000 and names.get(tid, "").startswith("stream ")


def test_trace_and_timeline(counted, tmp_path):
    doc = json.loads(counted.trace_path.read_text())
    ev = doc["traceEvents"]
    xs = [e for e in ev if e.get("ph") == "X"]
    cats = {e.get("cat") for e in xs}
    assert {"kernel", "sync", "nvtx"} <= cats, cats
    thread_names = {e.get("tid"): e["args"]["name"] for e in ev
                    if e.get("ph") == "M" and e.get("name") == "thread_name"}
    assert any(e.get("name") == "process_name" for e in ev if e.get("ph") == "M")
    for e in xs:
        assert isinstance(e["ts"], (int, float)) and e["dur"] >= 0, e
        if e["cat"] in ("kernel", "gpu_memcpy", "gpu_memset"):
            assert is_stream_track(e["tid"], thread_names), e
    syncs = [e for e in xs if e["cat"] == "sync"]
    for e in syncs:
        assert {"class", "group", "site", "range", "bubble_us"} <= set(e["args"]), e
    in_b = [e for e in syncs if e["args"]["range"] == "phase_b"
            and e["args"]["group"] in ("explicit", "implicit")]
    assert len(in_b) == 2 * N
    nvtx = [e["name"] for e in xs if e["cat"] == "nvtx"]
    assert nvtx.count("phase_a") == 1 and nvtx.count("phase_b") == N
    assert nvtx.count("phase_c") == 1
    kernels = [e for e in xs if e["cat"] == "kernel"]
    assert len(kernels) >= 4 * N  # a spin before each sync of phase_a and phase_c, one per phase_b
    png = tmp_path / "timeline.png"
    r = subprocess.run([sys.executable, TIMELINE, str(counted.trace_path), "-o", str(png)],
                       capture_output=True, text=True)
    if r.returncode == 1 and "matplotlib" in r.stderr:
        pytest.skip("no matplotlib")
    assert r.returncode == 0, r.stderr
    assert png.stat().st_size > 1000


# ---------------------------------------------------------------------------------------------
# how CMD ends


@pytest.mark.parametrize("mode,status", [("exit7", 7), ("crash", 128 + 11), ("kill", 128 + 15)])
def test_exit_modes(tmp_path, mode, status):
    a = audit(tmp_path, EXIT, mode)
    assert a.r.returncode == status, a.r.stderr
    assert a.truth["mode"] == mode
    got = a.counts()
    assert got.get(("sync-device", ""), 0) == 3, (got, a.r.stderr)
    assert [p["pid"] for p in a.report["processes"]] == [a.truth["pid"]]
    assert a.report["processes"][0]["counts"]["sync-device"] == 3


def test_exit_nocuda(tmp_path):
    a = audit(tmp_path, EXIT, "nocuda")
    assert a.r.returncode == 0, a.r.stderr
    assert a.truth["counts"] == {}
    assert "never initiali" in a.r.stderr.lower(), a.r.stderr
    assert a.report["processes"] == []
    assert a.rows == []


# ---------------------------------------------------------------------------------------------
# a process tree


def test_parent_and_children(tmp_path):
    a = audit(tmp_path, PARENT)
    assert a.r.returncode == 0, a.r.stderr
    tree = a.truth
    procs = {p["pid"]: p for p in a.report["processes"]}
    kids = {c["pid"]: c for c in tree["children"]}
    assert set(procs) == set(kids), (procs.keys(), kids.keys())  # the parent never used CUDA
    for pid, c in kids.items():
        p = procs[pid]
        assert p["ppid"] == tree["parent"]
        assert p["counts"]["sync-stream"] == c["sync-stream"] == c["k"] + 2
        assert p["blocking_calls"] - p["counts"].get("waited", 0) == c["sync-stream"]
        assert "audit_parent" in p["cmd"]
        assert a.counts(pid).get(("sync-stream", ""), 0) == c["sync-stream"]
    assert sorted(c["sync-stream"] for c in kids.values()) == [3, 4]


# ---------------------------------------------------------------------------------------------
# PyTorch


@pytest.fixture(scope="module")
def torch_py():
    py = torch_python()
    if not py:
        pytest.skip("no Python with torch and CUDA (set TORCH_PYTHON)")
    return py


STEPS = 10


def test_torch_item_syncs_every_step(tmp_path, torch_py):
    a = audit(tmp_path, torch_py, TORCH_ITEM, "--mode", "item", "--steps", STEPS,
              opts=("--range", "train_step", "--max-syncs", 0))
    assert a.r.returncode == 1, a.r.stderr  # the gate: a sync in every step
    assert a.truth["train_step_syncs"] == STEPS
    # .item(): a 4-byte cudaMemcpyAsync into pinned memory (not blocking), then the sync
    assert a.counts().get(("sync-stream", "train_step"), 0) == STEPS, a.counts()
    info = a.range_info("train_step")
    assert info["instances"] == STEPS
    assert info["max_blocking"] >= 1
    assert "train_step" in a.r.stderr


def test_torch_free_has_no_sync_in_the_loop(tmp_path, torch_py):
    a = audit(tmp_path, torch_py, TORCH_ITEM, "--mode", "free", "--steps", STEPS,
              opts=("--range", "train_step", "--max-syncs", 0))
    assert a.r.returncode == 0, a.r.stderr
    assert a.truth["train_step_syncs"] == 0
    got = a.counts()
    assert not [k for k, v in got.items() if k[1] == "train_step" and k[0] in BLOCKING and v]
    info = a.range_info("train_step")
    assert info["instances"] == STEPS and info["total_blocking"] == 0


def test_torch_print_fails_the_gate(tmp_path, torch_py):
    a = audit(tmp_path, torch_py, TORCH_ITEM, "--mode", "print", "--steps", STEPS,
              opts=("--range", "train_step", "--max-syncs", 0))
    assert a.r.returncode == 1, a.r.stderr
    assert "tensor(" in a.r.stdout
    info = a.range_info("train_step")
    assert info["max_blocking"] >= 1 and info["total_blocking"] >= 1


# ---------------------------------------------------------------------------------------------
# syncbench's own scenarios, audited: the syncs they make are fixed by their code


def scenario(tmp_path, *args, iters=20, reps=3, name="s", opts=()):
    cmd = (BIN, *args, "--iters", iters, "--min-reps", reps, "--max-reps", reps,
           "--warmup", 1, "--warmup-time", 0, "-q")
    return audit(tmp_path, *cmd, name=name, expect_truth=False, opts=opts)


def test_scenario_sync_device(tmp_path):
    a = scenario(tmp_path, "--scenario", "small-gemm", "--variant", "sync-device")
    assert a.r.returncode == 0, a.r.stderr
    # sync-device's 20 x 3; its paired async repetitions in the same range make none
    assert a.counts().get(("sync-device", "measure"), 0) == 20 * 3, a.counts()


def test_scenario_async_does_not_grow_with_iters(tmp_path):
    blocking = {}
    for iters in (20, 80):
        a = scenario(tmp_path, "--scenario", "small-gemm", "--variant", "async", iters=iters,
                     name=f"i{iters}")
        assert a.r.returncode == 0, a.r.stderr
        got = a.counts()
        blocking[iters] = {c: got.get((c, "measure"), 0) for c in BLOCKING if c != "waited"}
        # per repetition: the end-of-loop cudaEventSynchronize and the kernel timer's
        assert blocking[iters]["sync-event"] == 2 * 3, got
        assert blocking[iters]["sync-device"] == blocking[iters]["sync-stream"] == 0
    assert blocking[20] == blocking[80]


def test_scenario_sync_readback(tmp_path):
    a = scenario(tmp_path, "--scenario", "small-gemm", "--variant", "sync-readback")
    assert a.r.returncode == 0, a.r.stderr
    # a blocking 4-byte cudaMemcpy into pageable memory per iteration (src/gpu/sync.h)
    assert a.counts().get(("copy-sync", "measure"), 0) == 20 * 3, a.counts()


PENDING_US = 2000


def test_scenario_idle_readback_waits_for_the_pending_work(tmp_path):
    # idle-pageable: cudaStreamSynchronize waits for pending_us of GPU work, then an idle
    # cudaMemcpy; no reference variant, so "measure" holds only its own repetitions
    a = scenario(tmp_path, "--scenario", "readback", "--variant", "idle-pageable",
                 "--set", f"pending_us={PENDING_US}", iters=5)
    assert a.r.returncode == 0, a.r.stderr
    got = a.counts()
    assert got.get(("sync-stream", "measure"), 0) == 5 * 3, got
    assert got.get(("copy-sync", "measure"), 0) == 5 * 3, got
    # one call site each (how long each blocked is tests/validate/'s)
    assert len(a.rows_of("sync-stream", "measure")) == 1
    assert len(a.rows_of("copy-sync", "measure")) == 1


def test_scenario_pending_readback_blocks_pending_us(tmp_path):
    # pending-pageable is measured paired with its reference idle-pageable, which the plan
    # also measures on its own first: 3 x 5 x 3 copies in "measure", 5 x 3 of them waiting
    # for pending_us
    a = scenario(tmp_path, "--scenario", "readback", "--variant", "pending-pageable",
                 "--set", f"pending_us={PENDING_US}", iters=5)
    assert a.r.returncode == 0, a.r.stderr
    got = a.counts()
    assert got.get(("copy-sync", "measure"), 0) == 3 * 5 * 3, got
    (copy,) = a.rows_of("copy-sync", "measure")  # one call site (its times: tests/validate/)
    assert int(copy["count"]) == 3 * 5 * 3, copy


# ---------------------------------------------------------------------------------------------
# audit_nvtx: registered strings, domains, start/end ranges ended on another thread, UTF-8 and
# wide names


def test_every_kind_of_nvtx_range_is_named(tmp_path):
    a = audit(tmp_path, NVTX_PROG)
    assert a.r.returncode == 0, a.r.stderr
    got = {x["name"]: x for x in a.report["ranges"]}
    for name, syncs in a.truth["ranges"].items():
        assert name in got, (name, sorted(got))
        assert got[name]["instances"] == 1 and got[name]["total_blocking"] == syncs, got[name]
    assert got["reg-range"]["domain"] == "sb-domain"
    assert "(registered)" not in got and "(unicode)" not in got
    # push/pop ranges are the rows' innermost range too; the start/end one counts by time
    assert a.counts()[("sync-stream", "reg-range")] == 2
    assert a.counts()[("sync-stream", "\u03bb-range")] == 1
    assert a.counts()[("sync-stream", "")] == a.truth["outside"]
    for name in a.truth["unseen"]:  # CUPTI makes no callback for nvtxRangePushW
        assert name not in got
    r = run("audit", "-q", "--range", "startend", "--max-syncs", "2", "--", NVTX_PROG)
    assert r.returncode == 1 and "1 of 1 instance of range 'startend'" in r.stderr, r.stderr
