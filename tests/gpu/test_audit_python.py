"""`syncbench audit` in a PyTorch user's terms, on a real GPU: every sync of
tests/audit/torch_patterns.py at the exact Python line its `# SYNC:<name>` marker is on, named
as the operation that made it, from the main thread, a worker thread, a spawned child and a
2-process torchrun job; every warning of torch.cuda.set_sync_debug_mode("warn") at a line the
audit names too; 8 threads x 1 000 .item() counted exactly; processes that exit or are killed
with syncs in flight. Counts and lines only, no timing (what a Python stack costs a sync is
tests/validate/'s). Skipped without a GPU or torch."""
import csv
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from conftest import ROOT, gpu_available, run

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")
torch_missing = subprocess.run([sys.executable, "-c", "import torch; assert torch.cuda.is_available()"],
                               capture_output=True).returncode != 0 if gpu_available() else True
pytestmark = [pytestmark, pytest.mark.skipif(torch_missing, reason="no torch with CUDA")]

PATTERNS = ROOT / "tests" / "audit" / "torch_patterns.py"
THREADS = ROOT / "tests" / "audit" / "torch_threads.py"

# pattern -> what the audit must call it (a substring of the operation)
OPERATIONS = {
    "item": "scalar read: .item()",
    "float": "scalar read: float(t)",
    "if_tensor": "Python branch on a GPU value",
    "print": "print(tensor)",
    "cpu": "copy to host: .cpu()",
    "numpy": "copy to host: .numpy()",
    "tolist": "copy to host: .tolist()",
    "nonzero": "data-dependent shape: nonzero",
    "mask": "data-dependent shape: boolean mask",
    "unique": "data-dependent shape: unique",
    "tensor_list": "tensor from host data",
    "any": "Python branch on a GPU value",
    "repeat_interleave": "repeat_interleave without output_size",
    "synchronize": "explicit sync: torch.cuda.synchronize()",
    "event": "explicit sync: event.synchronize()",
    "stream": "explicit sync: stream.synchronize()",
    "ctypes_sync": "explicit device sync from an extension",
    "empty_cache": "allocator: torch.cuda.empty_cache()",
    "linalg": "inside a library: torch.linalg's error check",
}


def markers(path):
    """{pattern: line} from the `# SYNC:<pattern>` comments."""
    out = {}
    for i, text in enumerate(path.read_text().splitlines(), 1):
        m = re.search(r"# SYNC:(\w+)", text)
        if m:
            out[m.group(1)] = i
    return out


def audit(tmp_path, *cmd, opts=(), name="a", timeout=600):
    c, j = tmp_path / f"{name}.csv", tmp_path / f"{name}.json"
    r = run("audit", "--csv", c, "--json", j, *opts, "--", *cmd, timeout=timeout, cwd=ROOT)
    rows = list(csv.DictReader(open(c, newline=""))) if c.exists() else []
    report = json.loads(j.read_text()) if j.exists() else None
    return r, rows, report


def check_patterns(rows, prefix, lines, rank=None):
    """Every row in the pattern ranges `prefix + name` is at the marker's line and named as the
    pattern's operation; every pattern has at least one; sync_free has none."""
    seen = set()
    for row in rows:
        if rank is not None and int(row["rank"]) != rank:
            continue
        rng = row["range"]
        if not rng.startswith(prefix):
            continue
        name = rng[len(prefix):]
        assert name != "sync_free", row
        if name not in lines:
            continue
        where = (row["py_file"], row["py_line"])
        assert where == (str(PATTERNS), str(lines[name])), (name, row)
        assert OPERATIONS[name] in row["operation"], (name, row["operation"])
        assert row["site"] == f"tests/audit/torch_patterns.py:{lines[name]} in {row['py_function']}"
        seen.add(name)
    assert seen == set(OPERATIONS), sorted(set(OPERATIONS) - seen)


def test_every_pattern_at_its_line_main_thread_worker_and_child(tmp_path):
    lines = markers(PATTERNS)
    r, rows, report = audit(tmp_path, sys.executable, str(PATTERNS), "--where", "all",
                            opts=("--top", "200"))
    assert r.returncode == 0, r.stderr
    assert len(report["processes"]) == 2  # the script and its spawned child
    check_patterns(rows, "", lines)
    check_patterns(rows, "thread:", lines)
    check_patterns(rows, "child:", lines)
    # the table shows the Python line, its source text and the fix
    assert "tests/audit/torch_patterns.py:" in r.stderr
    assert "| return x.sum().item()  # SYNC:item" in r.stderr, r.stderr
    assert "fix:" in r.stderr


def test_torchrun_two_processes(tmp_path):
    lines = markers(PATTERNS)
    r, rows, report = audit(tmp_path, sys.executable, "-m", "torch.distributed.run",
                            "--standalone", "--nproc_per_node=2", str(PATTERNS), "--where", "main")
    assert r.returncode == 0, r.stderr
    ranks = sorted(p["rank"] for p in report["processes"] if p["rank"] >= 0)
    assert ranks == [0, 1], report["processes"]
    for rank in (0, 1):
        check_patterns(rows, "", lines, rank=rank)


def test_every_torch_warning_is_a_line_the_audit_names(tmp_path):
    """set_sync_debug_mode("warn") in the same run: each warning's file and line (torch names
    the innermost Python frame) is among the audit's sites with --py-site innermost; and the
    audit finds syncs torch does not warn about (synchronize, the ctypes sync)."""
    warned = tmp_path / "warned.json"
    r, rows, report = audit(tmp_path, sys.executable, str(PATTERNS), "--where", "main",
                            "--debug-mode", "--out", str(warned), opts=("--py-site", "innermost"))
    assert r.returncode == 0, r.stderr
    warnings = json.loads(warned.read_text())["warnings"]
    assert len(warnings) >= 15, warnings
    named = {(row["py_file"], int(row["py_line"])) for row in rows if row["py_line"]}
    missing = [w for w in warnings if (w[0], w[1]) not in named]
    assert not missing, missing
    lines = markers(PATTERNS)
    warned_lines = {w[1] for w in warnings if w[0] == str(PATTERNS)}
    # what torch does not warn about: the extension's driver sync (named at its own line,
    # the innermost Python frame) and torch.cuda.synchronize() (inside torch/cuda)
    assert lines["ctypes_sync"] not in warned_lines
    assert (str(PATTERNS), lines["ctypes_sync"]) in named
    sync_rows = [row for row in rows if row["range"] == "synchronize"]
    assert sync_rows and all("torch.cuda.synchronize()" in row["operation"] for row in sync_rows)
    assert not any(w[0] == sync_rows[0]["py_file"] and w[1] == int(sync_rows[0]["py_line"])
                   for w in warnings), sync_rows


THREADS_N, ITEMS = 8, 1000


def test_eight_threads_a_thousand_items_each(tmp_path):
    """Every .item() of 8 threads at once counted, at its line: none lost, none twice."""
    r, rows, report = audit(tmp_path, sys.executable, str(THREADS), "--mode", "stress",
                            "--threads", THREADS_N, "--items", ITEMS, timeout=900)
    assert r.returncode == 0, r.stderr
    item_line = next(i for i, t in enumerate(THREADS.read_text().splitlines(), 1)
                     if t.rstrip().endswith(".item()  # ITEM"))
    at_line = sum(int(row["count"]) for row in rows
                  if row["py_line"] == str(item_line) and row["class"] == "sync-stream")
    assert at_line == THREADS_N * ITEMS, at_line


@pytest.mark.parametrize("mode", ["exit", "hardexit", "kill"])
def test_exit_or_kill_with_syncs_in_flight(tmp_path, mode):
    """8 threads in .item() loops when the process ends: no hang, the program's own exit
    status (torch 2.11 aborts by itself when the interpreter finalizes under them), and the
    syncs recorded up to the end."""
    plain = subprocess.run([sys.executable, str(THREADS), "--mode", mode], capture_output=True,
                           timeout=300)
    r, rows, report = audit(tmp_path, sys.executable, str(THREADS), "--mode", mode, timeout=300)
    want = plain.returncode if plain.returncode >= 0 else 128 - plain.returncode
    assert r.returncode == want, (plain.returncode, r.stderr)
    assert report and len(report["processes"]) == 1
    assert sum(int(row["count"]) for row in rows if row["class"] == "sync-stream") > 100


def test_a_program_without_python_records_no_python(tmp_path):
    keep = tmp_path / "recs"
    counts = pathlib.Path(os.environ.get("SYNCBENCH_TEST_PROGRAMS", ROOT / "build" / "tests")) / \
        "audit_counts"
    r = run("audit", "--keep", keep, "--", counts, "3", timeout=300)
    assert r.returncode == 0, r.stderr
    text = "".join(f.read_text() for f in keep.glob("proc-*.jsonl"))
    assert '"t":"call"' in text
    assert '"pystack"' not in text and '"py":' not in text
