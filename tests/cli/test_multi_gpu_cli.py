"""collective and cross-device without a GPU: --list (with the note that they need 2 or more
GPUs), the plans they make, their bad input (exit 2, one line, before any CUDA call: the runs
hide every GPU, so touching CUDA first would be exit 3), a run with no GPU (exit 3, one line),
the multi-GPU suite, and the binary with NCCL hidden (it still starts, lists and plans).

What a machine with GPUs decides (skipping on one GPU, gpus=N above the count, NCCL failing,
GPUs that cannot reach each other) is in tests/gpu/test_multi_gpu.py and, without a GPU, in
tests/unit/test_multi_gpu.c and test_nccl_api.c."""
import pytest

from conftest import NO_GPU, ROOT, assert_usage_error, run
from hidden_libs import empty_file, run_hidden  # noqa: F401 (fixture)

SCENARIOS = {
    "collective": (["every-step", "every-n", "never"], ["gpus", "work_us", "straggler_us", "every"],
                   ["step_us", "saving_us", "saving_pct", "fast_wait_us", "straggler_wait_us",
                    "wait_gpu0_us", "wait_gpu7_us", "syncs_per_step"]),
    "cross-device": (["sync-each", "event-each", "wait-one", "copy-staged", "copy-p2p"],
                     ["gpus", "work_us", "bytes"],
                     ["step_us", "saving_us", "saving_pct", "wait_us", "GBps", "syncs_per_step"]),
}
NOTE = "  needs 2 or more GPUs: skipped, with a note, on a machine with fewer"


def block(out, scenario):
    return out.split(f"\n{scenario}\n", 1)[1].split("\n\n", 1)[0]


def plan(*args, cwd=None):
    """[(scenario, variant, params, iters)] of a --dry-run."""
    r = run(*args, "--dry-run", env=NO_GPU, cwd=cwd)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    rows = []
    for line in r.stdout.splitlines()[1:]:
        _, scenario, variant, params, iters = line.split()
        rows.append((scenario, variant, params, int(iters[len("iters="):])))
    return rows


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_list_shows_variants_params_metrics_and_the_note(scenario):
    r = run("--list", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    text = block(r.stdout, scenario)
    lines = text.splitlines()
    assert lines[1] == NOTE, lines[:3]  # right under the summary
    variants, params, metrics = SCENARIOS[scenario]
    for word in variants + params + metrics:
        assert word in text, (scenario, word)
    assert "all|2|3|4|5|6|7|8" in text


def test_only_the_multi_gpu_scenarios_carry_the_note():
    out = run("--list", env=NO_GPU).stdout
    assert out.count(NOTE) == 2
    assert NOTE not in block(out, "readback") and NOTE not in block(out, "busy-stream")


def test_default_plans():
    rows = plan("--scenario", "collective,cross-device")
    coll = [r for r in rows if r[0] == "collective"]
    assert [r[1] for r in coll] == ["every-step", "every-n", "never"] * 3
    assert [r[2] for r in coll[::3]] == [
        f"gpus=all;work_us=100;straggler_us={s};every=10" for s in (0, 100, 1000)]
    # whole intervals of every-n, at least two of them, the same steps for every variant
    for r in coll:
        assert r[3] % 10 == 0 and r[3] >= 20, r
    xdev = [r for r in rows if r[0] == "cross-device"]
    assert [r[1] for r in xdev] == ["sync-each", "event-each", "wait-one", "copy-staged",
                                    "copy-p2p"]
    assert {r[2] for r in xdev} == {"gpus=all;work_us=100;bytes=64MiB"}


@pytest.mark.parametrize("scenario,variant,reference", [
    ("collective", "never", "every-step"),
    ("collective", "every-n", "every-step"),
    ("cross-device", "wait-one", "sync-each"),
    ("cross-device", "event-each", "sync-each"),
    ("cross-device", "copy-p2p", "copy-staged"),
])
def test_a_variant_brings_its_reference(scenario, variant, reference):
    rows = plan("--scenario", scenario, "--variant", variant, "--set", "gpus=2",
                "--set", "straggler_us=0" if scenario == "collective" else "bytes=1MiB")
    assert [r[1] for r in rows] == [reference, variant]
    assert "gpus=2" in rows[0][2]


def test_sweeps_of_gpus_and_sizes():
    rows = plan("--scenario", "cross-device", "--variant", "copy-staged", "--set",
                "gpus=2,4,8", "--set", "bytes=4KiB,1GiB")
    assert len(rows) == 6
    assert rows[0][2] == "gpus=2;work_us=100;bytes=4KiB"
    assert rows[-1][2] == "gpus=8;work_us=100;bytes=1GiB"


def test_multi_gpu_suite_is_valid():
    rows = plan("--config", "configs/multi-gpu.ini", cwd=ROOT)
    assert {r[0] for r in rows} == {"collective", "cross-device"}
    assert {r[1] for r in rows if r[0] == "cross-device" and "bytes=4;" in r[2] + ";"} == {
        "sync-each", "event-each", "wait-one"}


@pytest.mark.parametrize("args,message", [
    (["--scenario", "collective", "--set", "gpus=0"],
     "collective: --set gpus=0: unknown value (one of: all, 2, 3, 4, 5, 6, 7, 8)"),
    (["--scenario", "collective", "--set", "gpus=1"], "--set gpus=1: unknown value"),
    (["--scenario", "collective", "--set", "gpus=9"], "--set gpus=9: unknown value"),
    (["--scenario", "cross-device", "--set", "gpus=16"], "--set gpus=16: unknown value"),
    (["--scenario", "collective", "--set", "straggler_us=1000001"],
     "collective: --set straggler_us=1000001: out of range (0 to 1000000)"),
    (["--scenario", "collective", "--set", "straggler_us=-5"], "straggler_us=-5: out of range"),
    (["--scenario", "collective", "--set", "straggler_us=1ms"], "straggler_us=1ms: not an integer"),
    (["--scenario", "collective", "--set", "work_us=-1"], "work_us=-1: out of range"),
    (["--scenario", "collective", "--set", "every=0"], "every=0: out of range (1 to 1000000)"),
    (["--scenario", "collective", "--variant", "every-stepp"],
     "unknown variant 'every-stepp'; did you mean 'every-step'?"),
    (["--scenario", "cross-device", "--variant", "p2p"], "unknown variant 'p2p'"),
    (["--scenario", "cross-device", "--set", "bytes=6"], "bytes=6 is not a multiple of 4"),
    (["--scenario", "cross-device", "--set", "bytes=0"], "bytes=0: out of range (4 to 4GiB)"),
    (["--scenario", "cross-device", "--set", "bytes=8GiB"], "bytes=8GiB: out of range"),
    (["--scenario", "cross-device", "--set", "straggler_us=10"],
     "--set straggler_us: unknown parameter for cross-device"),
    (["--scenario", "collective", "--set", "gpus=2,2"], "2 given twice in the list"),
], ids=lambda a: " ".join(a) if isinstance(a, list) else None)
def test_bad_input_is_exit_2_before_any_cuda_call(args, message, tmp_path):
    out = tmp_path / "out.csv"
    r = run(*args, "--csv", out, env=NO_GPU)
    assert_usage_error(r, message)
    assert not out.exists()


def test_bad_input_in_a_suite_names_file_and_line(tmp_path):
    ini = tmp_path / "multi.ini"
    ini.write_text("[small-h2d]\n\n[collective]\nstraggler_us = 0,100\ngpus = 1\n")
    r = run("--config", ini, env=NO_GPU)  # no --dry-run: still 2, not 3
    assert_usage_error(r, f"{ini}:5: [collective] gpus=1: unknown value")


@pytest.mark.parametrize("args", [
    ["--scenario", "collective"],
    ["--scenario", "cross-device", "--variant", "copy-p2p"],
    ["--scenario", "collective", "--set", "gpus=2", "--set", "straggler_us=100"],
    ["--config", "configs/multi-gpu.ini"],
], ids=lambda a: " ".join(a))
def test_no_gpu_is_exit_3_with_one_line(args, tmp_path):
    r = run(*args, "--csv", tmp_path / "out.csv", env=NO_GPU, cwd=ROOT)
    assert r.returncode == 3, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("syncbench: no usable CUDA device")
    assert list(tmp_path.iterdir()) == []


NCCL = ["libnccl.so*"]


@pytest.mark.parametrize("args", [
    ["--list"],
    ["--help"],
    ["--scenario", "collective", "--dry-run"],
    ["--config", "configs/multi-gpu.ini", "--dry-run"],
], ids=lambda a: " ".join(a))
def test_starts_without_nccl(empty_file, args):  # noqa: F811 (fixture)
    """NCCL is loaded when a run measures the collective scenario, never at start."""
    r = run_hidden(NCCL, empty_file, *args, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout and not r.stderr


def test_nccl_is_really_hidden(empty_file):  # noqa: F811 (fixture)
    """Guards test_starts_without_nccl against passing vacuously: inside the namespace the
    library cannot be loaded."""
    import sys
    from hidden_libs import hidden_command, library_files
    import subprocess
    libs = library_files(NCCL)
    if not libs:
        pytest.skip("no libnccl on this machine: nothing to hide")
    load = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"
    outside = subprocess.run([sys.executable, "-c", load, libs[0]], capture_output=True)
    assert outside.returncode == 0
    inside = subprocess.run(hidden_command(NCCL, empty_file, sys.executable, "-c", load, libs[0]),
                            capture_output=True, text=True)
    assert inside.returncode != 0, inside.stderr
