"""collective and cross-device on real GPUs. With 2 or more: a wait per GPU and the syncs each
variant makes per step (exact), the sync-free variants priced against every-step, every way of
waiting and copying gives the right data (the runs pass their checks) and is priced, the checks
catch damaged results, NCCL missing is exit 3 before anything is measured, more GPUs asked than
present is exit 2. Fixed repetition counts, no timing: the straggler's extra time in the fast
GPUs' wait (within 10 %), what the sync-free variants save and P2P against staged copies are
tests/validate/'s (`make validate`). With 1 (any GPU machine; CUDA_VISIBLE_DEVICES=0 makes one
of a bigger one): a suite that names them runs the rest, notes the skip and succeeds, NCCL or
not.

GPUs: SYNCBENCH_TEST_GPUS if set, else nvidia-smi -L (narrowed by CUDA_VISIBLE_DEVICES). NCCL:
SYNCBENCH_NCCL_LIB if set, else where the loader finds libnccl.so.2, else the copy in PyTorch's
wheels (nvidia-nccl), else the tests that need it skip. NVLink multicast stays off
(NCCL_NVLS_ENABLE=0): on shared hosts it can put the GPUs out of service."""
import csv
import glob
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT, gpu_available, measure_rows, run, torch_python
from gpu_common import fixed

os.environ.setdefault("NCCL_NVLS_ENABLE", "0")


def gpu_count():
    if os.environ.get("SYNCBENCH_TEST_GPUS"):
        return int(os.environ["SYNCBENCH_TEST_GPUS"])
    if not gpu_available():
        return 0
    out = subprocess.run([shutil.which("nvidia-smi"), "-L"], capture_output=True, text=True).stdout
    n = sum(1 for line in out.splitlines() if line.startswith("GPU "))
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        n = min(n, len([d for d in visible.split(",") if d.strip()]))
    return n


GPUS = gpu_count()
two_gpus = pytest.mark.skipif(GPUS < 2, reason=f"needs 2 or more GPUs ({GPUS} here)")
one_gpu = pytest.mark.skipif(GPUS < 1, reason="no NVIDIA GPU on this machine")


def find_nccl():
    """A libnccl.so.2 the binary can load, or None; sets SYNCBENCH_NCCL_LIB when the loader
    would not find it by itself."""
    if os.environ.get("SYNCBENCH_NCCL_LIB"):
        return os.environ["SYNCBENCH_NCCL_LIB"]
    cuda = os.environ.get("CUDA_HOME", "/usr/local/cuda")
    found = glob.glob(f"{cuda}/lib64/libnccl.so.2*")
    ldconfig = subprocess.run(["sh", "-c", "ldconfig -p 2>/dev/null | grep -F libnccl.so.2"],
                              capture_output=True, text=True).stdout
    if found or ldconfig.strip():
        return found[0] if found else "libnccl.so.2"
    for py in {sys.executable, torch_python()} - {None}:
        r = subprocess.run([py, "-c", "import nvidia.nccl, os; print(os.path.join("
                            "list(nvidia.nccl.__path__)[0], 'lib', 'libnccl.so.2'))"],
                           capture_output=True, text=True)
        path = r.stdout.strip()
        if r.returncode == 0 and os.path.exists(path):
            os.environ["SYNCBENCH_NCCL_LIB"] = path
            return path
    return None


NCCL = find_nccl() if GPUS >= 2 else None
with_nccl = pytest.mark.skipif(GPUS >= 2 and NCCL is None,
                               reason="no NCCL found (set SYNCBENCH_NCCL_LIB)")
N = min(GPUS, 8)  # gpus=all drives at most 8
REPS = fixed(reps=5)


def one_line(r, code):
    assert r.returncode == code, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("syncbench: ")
    return lines[0]


# ---- collective: the straggler and the sync-free variants ----

STRAGGLERS = (0, 100, 1000)


def cparams(s):
    return f"gpus=all;work_us=100;straggler_us={s};every=10"


@pytest.fixture(scope="module")
def coll(tmp_path_factory):
    rows = measure_rows(tmp_path_factory.mktemp("coll"), "--scenario", "collective", "--set",
                        "straggler_us=0,100,1000", fast=REPS)
    return {k: float(r["median"]) for k, r in rows.items()}


@two_gpus
@with_nccl
@pytest.mark.parametrize("s", STRAGGLERS)
def test_a_wait_per_gpu_and_the_syncs(coll, s):
    p = cparams(s)
    for variant in ("every-step", "every-n", "never"):
        for g in range(8):
            assert ((variant, p, f"wait_gpu{g}_us") in coll) == (g < N), (variant, g)
        assert coll[(variant, p, "straggler_wait_us")] == coll[(variant, p, f"wait_gpu{N - 1}_us")]
    assert coll[("every-step", p, "syncs_per_step")] == 1
    assert coll[("every-n", p, "syncs_per_step")] == pytest.approx(0.1)
    assert coll[("never", p, "syncs_per_step")] < 0.1
    assert ("every-step", p, "saving_us") not in coll  # the reference
    for variant in ("every-n", "never"):  # priced against it
        assert (variant, p, "saving_us") in coll and (variant, p, "step_us") in coll


@two_gpus
@with_nccl
def test_collective_check_catches_a_wrong_sum():
    r = run("--scenario", "collective", "--set", "straggler_us=0", "--variant", "every-n",
            *fixed(reps=1, warmup=0), env={"SYNCBENCH_FAULT": "collective-sum"})
    line = one_line(r, 1)
    assert line.startswith("syncbench: validation failed in collective/"), line
    assert "summed loss" in line


@two_gpus
def test_nccl_missing_is_exit_3_before_anything_is_measured(tmp_path):
    """The suite's first section needs no NCCL: it is not measured either."""
    ini = tmp_path / "s.ini"
    ini.write_text("[small-h2d]\nmax_time = 0.1\n[collective]\nstraggler_us = 0\n")
    out = tmp_path / "out.csv"
    r = run("--config", ini, "--csv", out,
            env={"SYNCBENCH_NCCL_LIB": str(tmp_path / "no" / "libnccl.so.2")})
    line = one_line(r, 3)
    assert "cannot load NCCL (" in line and "libnccl.so.2" in line, line
    assert not out.exists()


@one_gpu
def test_more_gpus_asked_than_present_is_exit_2(tmp_path):
    if GPUS >= 8:
        pytest.skip("8 GPUs or more: gpus= cannot ask for more")
    out = tmp_path / "out.csv"
    for sc in ("collective", "cross-device"):
        r = run("--scenario", sc, "--set", f"gpus={GPUS + 1}", "--csv", out)
        line = one_line(r, 2)
        assert f"asks for {GPUS + 1} GPUs, this machine has {GPUS}" in line, line
        assert not out.exists()


# ---- cross-device: the waits and the copies ----

def xparams(nbytes):
    return f"gpus=all;work_us=100;bytes={nbytes}"


@pytest.fixture(scope="module")
def waits(tmp_path_factory):
    rows = measure_rows(tmp_path_factory.mktemp("waits"), "--scenario", "cross-device",
                        "--variant", "sync-each,event-each,wait-one", "--set", "bytes=4",
                        fast=REPS)
    return {k: float(r["median"]) for k, r in rows.items()}


@two_gpus
def test_every_way_of_waiting_is_priced(waits):
    """All three waited for every GPU (each step's marks are checked: the run passed); each is
    priced against a device sync on each GPU."""
    p = xparams(4)
    for variant in ("sync-each", "event-each", "wait-one"):
        assert (variant, p, "step_us") in waits and (variant, p, "wait_us") in waits, variant
    assert waits[("sync-each", p, "syncs_per_step")] == N
    assert waits[("event-each", p, "syncs_per_step")] == N
    assert waits[("wait-one", p, "syncs_per_step")] == 1
    for variant in ("event-each", "wait-one"):
        assert (variant, p, "saving_us") in waits


def run_copies(tmp_path, variants):
    out = tmp_path / "copies.csv"
    r = run("--scenario", "cross-device", "--variant", variants, "--set", "bytes=1MiB,64MiB",
            *REPS, "--csv", out)
    if r.returncode == 0:
        with open(out, newline="") as f:
            return r, {(row["variant"], row["params"], row["metric"]): float(row["median"])
                       for row in csv.DictReader(f)}
    return r, None


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    return run_copies(tmp_path_factory.mktemp("copies"), "copy-p2p")


@two_gpus
def test_copies_p2p_vs_staged_are_priced(copies, tmp_path):
    """Every receiver got its sender's data (checked on its GPU: the run passed), at both sizes,
    peer to peer priced against staged copies. On GPUs that cannot reach each other, asking for
    copy-p2p is exit 3 in one line before anything is measured, and staged runs alone."""
    r, rows = copies
    if rows is None:
        line = one_line(r, 3)
        assert "copy-p2p: GPU" in line and "cannot reach" in line, line
        r, rows = run_copies(tmp_path, "copy-staged")
        assert r.returncode == 0, r.stderr
        pytest.skip("these GPUs have no peer-to-peer path: staged copies priced alone")
    for nbytes in ("1MiB", "64MiB"):
        assert ("copy-p2p", xparams(nbytes), "saving_us") in rows
        for variant in ("copy-staged", "copy-p2p"):
            assert (variant, xparams(nbytes), "GBps") in rows
            assert rows[(variant, xparams(nbytes), "syncs_per_step")] == N


@two_gpus
@pytest.mark.parametrize("fault,variant,words", [
    ("cross-device-copy", "copy-staged", "words GPU"),
    ("cross-device-mark", "wait-one", "waits returned before"),
])
def test_cross_device_checks_catch_damage(fault, variant, words):
    r = run("--scenario", "cross-device", "--variant", variant, "--set", "bytes=1MiB",
            *fixed(reps=1, warmup=0), env={"SYNCBENCH_FAULT": fault})
    line = one_line(r, 1)
    assert line.startswith("syncbench: validation failed in cross-device/"), line
    assert words in line, line


# ---- one GPU: skipped with a note, the rest runs ----

ONE = {"CUDA_VISIBLE_DEVICES": "0",
       # the skip needs no NCCL: a machine with one GPU and no NCCL runs the suite too
       "SYNCBENCH_NCCL_LIB": "/nonexistent/libnccl.so.2"}
NOTE = ("syncbench: note: this machine has 1 GPU: skipped collective (needs 2 or more GPUs), "
        "cross-device (needs 2 or more GPUs)")


@one_gpu
def test_one_gpu_suite_runs_the_rest_and_notes_the_skip(tmp_path):
    ini = tmp_path / "s.ini"
    ini.write_text("[small-h2d]\nvariants = pageable\nmax_time = 0.2\n"
                   "[collective]\n[cross-device]\nvariants = copy-p2p\n")
    out = tmp_path / "out.csv"
    r = run("--config", ini, "--csv", out, "--quiet", env=ONE)
    assert r.returncode == 0, r.stderr
    assert r.stderr.splitlines() == [NOTE]
    with open(out, newline="") as f:
        scenarios = {row["scenario"] for row in csv.DictReader(f)}
    assert scenarios == {"small-h2d"}


@one_gpu
@pytest.mark.parametrize("args", [["--config", "configs/multi-gpu.ini"],
                                  ["--scenario", "collective"]], ids=lambda a: a[-1])
def test_one_gpu_with_only_multi_gpu_work_measures_nothing_and_succeeds(args, tmp_path):
    out = tmp_path / "out.csv"
    r = run(*args, "--csv", out, env=ONE, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("syncbench: note: this machine has 1 GPU: "
                                                   "skipped collective"), r.stderr
    assert not out.exists()  # nothing measured: no file replaces an earlier one


@one_gpu
def test_one_gpu_asked_by_number_is_exit_2():
    r = run("--scenario", "collective", "--set", "gpus=2", env=ONE)
    assert "asks for 2 GPUs, this machine has 1" in one_line(r, 2)


@two_gpus
@with_nccl
def test_two_gpus_run_without_a_note(tmp_path):
    out = tmp_path / "out.csv"
    r = run("--scenario", "collective,cross-device", "--set", "gpus=2", "--set", "straggler_us=0",
            "--set", "bytes=1MiB", "--variant", "never,copy-staged", *REPS, "--csv", out,
            "--quiet")
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    with open(out, newline="") as f:
        assert {(row["scenario"], row["variant"]) for row in csv.DictReader(f)} == {
            ("collective", "every-step"), ("collective", "never"),
            ("cross-device", "copy-staged")}
