"""CI that reads the verdicts, on a real GPU (issue 37, docs/ci.md): under GitHub Actions a
failing `syncbench audit` gate of a real PyTorch program annotates the line that synced
(tests/audit/torch_item.py's `loss.item()`), its JUnit case fails naming that line and the step
summary shows it; the sync-free twin passes with no annotation; a no_syncs test that fails under
the pytest plugin annotates its own line (tests/audit/sync_cases.py). Lines and counts only, no
timing. Skipped without a GPU or torch; without one, tests/cli/test_ci.py holds the same outputs
on kept records."""
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import BIN, ROOT, gpu_available, torch_python

sys.path.insert(0, str(ROOT / "tests" / "cli"))
from ci_records import check_junit  # noqa: E402

GPU = gpu_available()
PY = torch_python() if GPU else None  # a Python with torch and CUDA
pytestmark = [pytest.mark.skipif(not GPU, reason="no NVIDIA GPU on this machine"),
              pytest.mark.skipif(GPU and not PY, reason="no Python with torch and CUDA (set "
                                                        "TORCH_PYTHON)")]

TORCH_ITEM = ROOT / "tests" / "audit" / "torch_item.py"
CASES = ROOT / "tests" / "audit" / "sync_cases.py"
LIB = os.environ.get("SYNCBENCH_AUDIT_LIB", str(ROOT / "build" / "libsyncbench_audit.so"))


def line_of(path, text):
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def github(tmp_path):
    return dict(os.environ, GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(ROOT),
                GITHUB_STEP_SUMMARY=str(tmp_path / "summary.md"))


def audit_gate(tmp_path, mode):
    junit = tmp_path / f"{mode}.xml"
    r = subprocess.run([BIN, "audit", "-q", "--range", "train_step", "--max-syncs", "0",
                        "--junit", str(junit), "--", PY, str(TORCH_ITEM), "--mode", mode,
                        "--steps", "20"], capture_output=True, text=True, cwd=ROOT,
                       env=github(tmp_path), timeout=600)
    return r, junit


def test_a_gate_failure_annotates_the_line_that_synced(tmp_path):
    r, junit = audit_gate(tmp_path, "item")
    assert r.returncode == 1, r.stderr
    line = line_of(TORCH_ITEM, "logged += loss.item()")
    notes = [x for x in r.stdout.splitlines() if x.startswith("::")]
    assert notes and notes[0].startswith(
        f"::error file=tests/audit/torch_item.py,line={line},title=syncbench audit gate%3A "
        f"range train_step::20 blocking calls (sync-stream): scalar read: .item()%0Afix: "), \
        r.stdout
    assert len(notes) == 1, notes
    (outcome, failure), = check_junit(junit).values()
    assert outcome == "failed" and f"torch_item.py:{line} in main" in failure.text
    md = (tmp_path / "summary.md").read_text()
    assert md.startswith("### syncbench audit: FAILED") and f"torch_item.py:{line}" in md


def test_the_sync_free_twin_passes_without_an_annotation(tmp_path):
    r, junit = audit_gate(tmp_path, "free")
    assert r.returncode == 0, r.stderr
    assert "::" not in r.stdout, r.stdout
    assert [v[0] for v in check_junit(junit).values()] == ["passed"]


def test_a_failed_no_syncs_test_annotates_its_line(tmp_path):
    src = tmp_path / "pkg"
    shutil.copytree(ROOT / "python" / "syncbench", src / "syncbench")
    env = github(tmp_path)
    env.update(PYTHONPATH=str(src), SYNCBENCH_AUDIT_LIB=LIB, PYTHONUNBUFFERED="1",
               PATH=f"{pathlib.Path(BIN).resolve().parent}:{env.get('PATH', '')}")
    env.pop("PYTEST_ADDOPTS", None)
    r = subprocess.run([PY, "-m", "pytest", str(CASES), "-p", "syncbench.pytest_plugin",
                        "-p", "no:cacheprovider", "-q", "-k", "test_marked and item"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    line = line_of(CASES, "return (x @ x).sum().item()")
    assert any(x.startswith(f"::error file=tests/audit/sync_cases.py,line={line},title=syncbench "
                            "no_syncs%3A ") and "::1 blocking call (sync-stream): scalar read: "
               ".item()%0Afix: " in x for x in r.stdout.splitlines()), r.stdout
