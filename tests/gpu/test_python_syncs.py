"""The Python package on a GPU (issue 17): the suite tests/audit/sync_cases.py run under the
plugin in a plain pytest process (CUPTI attached at run time, no injection) with each test's
outcome held exactly; the report; the same suite inside `syncbench audit`; the functions beside
torch.cuda.set_sync_debug_mode("error"); threads, a forked child, the PyTorch profiler; that
10 000 blocks, each with a sync, keep memory flat and count every sync. What a block costs is
timed by tests/validate/ (`make validate`), with COST below.

SYNCBENCH_PY_OUT=DIR keeps the side-by-side (pyside.json)."""
import atexit
import json
import os
import pathlib
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET

import pytest

from conftest import BIN, ROOT, gpu_available, torch_python

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

CASES = ROOT / "tests" / "audit" / "sync_cases.py"
LIB = os.environ.get("SYNCBENCH_AUDIT_LIB", str(ROOT / "build" / "libsyncbench_audit.so"))
OUT = os.environ.get("SYNCBENCH_PY_OUT")

SYNCING = {"item", "cuda_synchronize", "event_synchronize", "driver_sync", "library_sync",
           "nonzero", "to_cpu"}
FREE = {"sync_free", "copy_non_blocking"}
EXPECTED = {f"test_marked[{f}]": "failed" for f in SYNCING}
EXPECTED.update({f"test_marked[{f}]": "passed" for f in FREE})
EXPECTED.update({
    "test_item_allowed_once": "passed",
    "test_item_twice_allowed_once": "failed",
    "test_another_threads_sync_is_not_this_threads": "passed",
    "test_another_threads_sync_with_all_threads": "failed",
    "test_the_fixture_counts_exactly": "passed",
    "test_count_syncs_exactly": "passed",
    "test_blocks_start_at_zero_and_nest": "passed",
    "test_the_error_names_the_line_the_operation_and_the_fix": "passed",
    "test_an_exception_inside_goes_on_unchanged": "passed",
})


@pytest.fixture(scope="module")
def py():
    p = torch_python()
    if not p:
        pytest.skip("no Python with torch and CUDA (set TORCH_PYTHON)")
    return p


# the package's sources alone on the path (no installation's metadata beside them, whose entry
# point would register the plugin a second time next to -p)
SRC = pathlib.Path(tempfile.mkdtemp(prefix="syncbench-pkg-"))
atexit.register(shutil.rmtree, SRC, True)
shutil.copytree(ROOT / "python" / "syncbench", SRC / "syncbench")


def env(**extra):
    e = dict(os.environ, PYTHONPATH=str(SRC), SYNCBENCH_AUDIT_LIB=LIB, PYTHONUNBUFFERED="1")
    e.pop("PYTEST_ADDOPTS", None)
    e.update(extra)
    return e


def outcomes(junit):
    out = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        kind = "passed"
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                kind = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
        out[tc.get("name")] = (kind, "".join(c.get("message", "") + (c.text or "") for c in tc))
    return out


def run_suite(py, tmp_path, *args, prefix=()):
    junit = tmp_path / "junit.xml"
    cmd = [*prefix, py, "-m", "pytest", str(CASES), "-p", "syncbench.pytest_plugin",
           "-p", "no:cacheprovider", f"--junitxml={junit}", "-q", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env(), cwd=tmp_path, timeout=600)
    assert junit.exists(), r.stdout + r.stderr
    return r, outcomes(junit)


def check_outcomes(got):
    expected = dict(EXPECTED)
    if got.get("test_marked[library_sync]", ("",))[0] == "skipped":  # no CuPy here
        expected["test_marked[library_sync]"] = "skipped"
    assert {k: v[0] for k, v in got.items()} == expected


def test_each_case_passes_or_fails_exactly(py, tmp_path):
    r, got = run_suite(py, tmp_path)
    check_outcomes(got)
    # a failure reads like a failed assertion and names the line, the operation, the fix
    msg = got["test_marked[item]"][1]
    assert "SyncError" in msg and "1 host-blocking CUDA call (allowed 0), on this thread:" in msg
    assert "sync_cases.py:" in msg and "in item: return (x @ x).sum().item()" in msg, msg
    assert "sync-stream x1" in msg and "fix: " in msg, msg
    msg = got["test_marked[cuda_synchronize]"][1]
    assert "sync-device x1" in msg and "torch.cuda.synchronize()" in msg, msg
    assert "2 host-blocking CUDA calls (allowed 1)" in got["test_item_twice_allowed_once"][1]
    assert "on every thread" in got["test_another_threads_sync_with_all_threads"][1]


def test_the_report_lists_each_tests_syncs(py, tmp_path):
    r, got = run_suite(py, tmp_path, "--syncbench-report", "-k", "marked or fixture")
    assert "syncbench: host-blocking CUDA calls per test" in r.stdout, r.stdout
    rows = {line.split()[0]: line for line in r.stdout.splitlines()
            if line.startswith("sync_cases.py::")}
    assert "sync-stream 1" in rows["sync_cases.py::test_marked[item]"]
    assert rows["sync_cases.py::test_marked[item]"].split()[1] == "1"
    assert rows["sync_cases.py::test_the_fixture_counts_exactly"].split()[1] == "3"
    # a poll is listed, apart: it does not block
    assert rows["sync_cases.py::test_marked[sync_free]"].split()[1:3] == ["0", "1"]
    assert "sync_cases.py::test_marked[sync_free]" in r.stdout
    # of the 10 tests, 2 made no blocking call (sync_free, copy_non_blocking)
    assert "2 of 10 tests made no host-blocking CUDA call" in r.stdout, r.stdout


def test_inside_syncbench_audit_both_see_the_syncs(py, tmp_path):
    """A process that syncbench audit started: the package uses the injected library (one
    CUPTI subscription) and the audit still records every sync."""
    report = tmp_path / "audit.json"
    r, got = run_suite(py, tmp_path, prefix=(BIN, "audit", "-q", "--json", str(report), "--"))
    check_outcomes(got)
    audit = json.loads(report.read_text())
    assert audit["total"]["blocking_calls"] >= 12, audit["total"]
    assert r.returncode == 1  # the suite's own failures (CMD's exit code), not the audit's


SIDE = """
import json, sys
sys.path.insert(0, %(cases_dir)r)
import torch, syncbench, pytest
import sync_cases as c
rows = []
for fn in c.FUNCTIONS:
    row = {"function": fn.__name__, "what": fn.__doc__}
    try:
        with syncbench.count_syncs() as s:
            fn()
        row["syncbench"] = s.blocking
        row["syncbench_classes"] = s.by_class
    except pytest.skip.Exception:
        continue
    torch.cuda.set_sync_debug_mode("error")
    try:
        fn()
        row["torch"] = "no error"
    except RuntimeError as e:
        row["torch"] = "error"
    finally:
        torch.cuda.set_sync_debug_mode(0)
    rows.append(row)
print(json.dumps(rows))
"""


def test_beside_torchs_sync_debug_mode(py, tmp_path):
    r = subprocess.run([py, "-c", SIDE % {"cases_dir": str(CASES.parent)}], capture_output=True,
                       text=True, env=env(), cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    rows = {x["function"]: x for x in json.loads(r.stdout.splitlines()[-1])}
    if OUT:
        pathlib.Path(OUT).mkdir(parents=True, exist_ok=True)
        (pathlib.Path(OUT) / "pyside.json").write_text(json.dumps(list(rows.values()), indent=1))
    for name, row in rows.items():
        if name in FREE:
            assert row["syncbench"] == 0, row
        else:
            assert row["syncbench"] >= 1, row
    # below torch's wrappers: its check cannot see these
    for name in ("driver_sync", "library_sync"):
        if name in rows:
            assert rows[name]["torch"] == "no error", rows[name]


# What a block costs (tests/validate/ runs it: a timing): an empty block entered and left, and a
# sync inside a block against the same .item() outside one. Prints one JSON line.
COST = """
import json, time, statistics, torch, syncbench
x = torch.randn(256, 256, device="cuda")
def item():
    return (x @ x).sum().item()
for _ in range(200):
    item()
with syncbench.count_syncs():
    pass
out = {}
# an empty block: enter and leave, in rounds of 10000; the median round
rounds = []
for _ in range(7):
    t0 = time.perf_counter()
    for _ in range(10000):
        with syncbench.no_syncs():
            pass
    rounds.append((time.perf_counter() - t0) / 10000 * 1e6)
out["empty_block_us"] = statistics.median(rounds)
rounds = []
for _ in range(7):
    t0 = time.perf_counter()
    for _ in range(10000):
        pass
    rounds.append((time.perf_counter() - t0) / 10000 * 1e6)
out["empty_loop_us"] = statistics.median(rounds)
# a sync inside a block and outside it, in turns: what recording one costs
inside, outside = [], []
for _ in range(9):
    t0 = time.perf_counter()
    for _ in range(500):
        item()
    outside.append((time.perf_counter() - t0) / 500 * 1e6)
    t0 = time.perf_counter()
    with syncbench.count_syncs() as s:
        for _ in range(500):
            item()
    inside.append((time.perf_counter() - t0) / 500 * 1e6)
    assert s.blocking == 500, s
out["item_outside_us"] = statistics.median(outside)
out["item_inside_us"] = statistics.median(inside)
out["per_sync_us"] = out["item_inside_us"] - out["item_outside_us"]
print(json.dumps(out))
"""

# 10 000 blocks each with a sync: every sync counted, and memory stays flat (its growth in
# bytes, one JSON line).
MEMORY = """
import json, os, torch, syncbench
x = torch.randn(256, 256, device="cuda")
def item():
    return (x @ x).sum().item()
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
for _ in range(1000):
    with syncbench.count_syncs():
        item()
before = rss()
for _ in range(10000):
    with syncbench.count_syncs() as s:
        item()
    assert s.blocking == 1, s.blocking
print(json.dumps({"rss_growth_bytes": rss() - before}))
"""


def test_ten_thousand_blocks_keep_memory_flat(py, tmp_path):
    r = subprocess.run([py, "-c", MEMORY], capture_output=True, text=True, env=env(),
                       cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stderr
    grew = json.loads(r.stdout.splitlines()[-1])["rss_growth_bytes"]
    assert grew < 2 << 20, grew  # 10000 blocks: under 2 MiB


FORK = """
import os, torch, syncbench
x = torch.ones(4, device="cuda")
with syncbench.count_syncs() as s:
    x.sum().item()
assert s.blocking == 1
pid = os.fork()
if pid == 0:
    try:
        with syncbench.no_syncs():
            pass
        os._exit(3)  # must not pass
    except syncbench.SyncbenchUnavailable as e:
        os._exit(0 if "forked from a CUDA process" in str(e) else 4)
_, status = os.waitpid(pid, 0)
print("child", os.waitstatus_to_exitcode(status))
with syncbench.count_syncs() as s:  # the parent goes on recording
    x.sum().item()
print("parent", s.blocking)
"""


def test_a_forked_child_raises_and_the_parent_goes_on(py, tmp_path):
    r = subprocess.run([py, "-c", FORK], capture_output=True, text=True, env=env(), cwd=tmp_path,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["child", "0", "parent", "1"], r.stdout


PROFILER = """
import torch, syncbench
x = torch.ones(4, device="cuda")
x.sum().item()
with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]):
    try:
        with syncbench.no_syncs():
            x.sum().item()
        print("passed")
    except syncbench.SyncbenchUnavailable as e:
        print("unavailable:", e)
    except syncbench.SyncError:
        print("caught")
"""


def test_beside_the_pytorch_profiler_never_a_silent_pass(py, tmp_path):
    """The profiler first: CUPTI allows one subscriber. Either the block raises naming it, or
    (the profiler did not take the callbacks) the block still catches the sync."""
    r = subprocess.run([py, "-c", PROFILER], capture_output=True, text=True, env=env(),
                       cwd=tmp_path, timeout=300)
    assert r.returncode == 0, r.stderr
    last = r.stdout.strip().splitlines()[-1]
    if OUT:
        (pathlib.Path(OUT) / "profiler.txt").write_text(last + "\n")
    assert last == "caught" or (last.startswith("unavailable:") and "another CUPTI subscriber"
                                in last), last
