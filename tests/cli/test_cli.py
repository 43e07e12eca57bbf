"""The built binary without a GPU: help, list, every bad input (exit 2, one line, before any
CUDA call) and the no-GPU exit 3.

Bad-input runs hide every GPU (CUDA_VISIBLE_DEVICES=""): had the binary touched CUDA before
validating, it would exit 3, not 2."""
import pytest

from conftest import run

NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}


def test_help_lists_every_option():
    r = run("--help")
    assert r.returncode == 0
    assert r.stdout.startswith("usage: syncbench")
    for opt in ["--scenario", "--variant", "--list", "--iters", "--warmup", "--warmup-time",
                "--min-reps", "--max-reps", "--max-time", "--target-cv", "--set", "--device",
                "--csv", "--quiet", "--help", "--version"]:
        assert opt in r.stdout, opt


def test_version():
    r = run("--version")
    assert r.returncode == 0
    assert r.stdout.startswith("syncbench ")


def test_list_shows_scenarios_variants_params():
    r = run("--list", env=NO_GPU)
    assert r.returncode == 0
    for word in ["small-gemm", "big-gemm", "readback", "copy", "double-buffer",
                 "pending-pageable", "print-pending", "h2d-pinned", "double-buffered", "async", "sync-device", "sync-stream", "sync-event",
                 "sync-readback", "dtype", "fp16|bf16|fp32", "tf32", "wall_us_per_iter",
                 "TFLOPs"]:
        assert word in r.stdout, word


BAD = [
    (["--iters", "0"], "--iters 0: out of range"),
    (["--iters", "-5"], "--iters -5: out of range"),
    (["--iters", "abc"], "--iters abc: not a number"),
    (["--iters", "99999999999999999999"], "--iters 99999999999999999999: out of range"),
    (["--scenario", "smal-gemm"], "unknown scenario 'smal-gemm'; did you mean 'small-gemm'?"),
    (["--scenario", "nosuch"], "unknown scenario 'nosuch' (see --list)"),
    (["--variant", "sync-devise"], "unknown variant 'sync-devise'; did you mean 'sync-device'?"),
    (["--variant", "warp"], "unknown variant 'warp' (one of: async, sync-device"),
    (["--set", "szie=3"], "--set szie: unknown parameter for small-gemm, big-gemm"),
    (["--set", "m=abc"], "--set m=abc: not an integer"),
    (["--set", "m=0"], "--set m=0: out of range (1 to 262144)"),
    (["--set", "dtype=fp8"], "--set dtype=fp8: unknown value"),
    (["--set", "tf32=2"], "--set tf32=2: not a boolean"),
    (["--set", "tf32=1"], "tf32=1 applies to dtype=fp32 only"),
    (["--set", "m"], "--set m: expected KEY=VALUE"),
    (["--device", "-1"], "--device -1: out of range"),
    (["--device", "x"], "--device x: not a number"),
    (["--csv", "/nonexistent-dir/out.csv"], "folder '/nonexistent-dir' does not exist"),
    (["--frobnicate"], "unknown option '--frobnicate'"),
    (["--scenaro", "small-gemm"], "did you mean '--scenario'?"),
    (["--iters"], "option '--iters' needs a value"),
    (["--csv"], "option '--csv' needs a value"),
    (["--max-time", "-1"], "--max-time -1: out of range"),
    (["--target-cv", "0"], "--target-cv 0: out of range"),
    (["stray"], "unexpected argument 'stray'"),
    (["--scenario", "readback", "--set", "pending_us=0"], "--set pending_us=0: out of range"),
    (["--scenario", "readback", "--set", "pending_us=10000001"], "pending_us=10000001: out of range"),
    (["--scenario", "readback", "--set", "pending=sleep"], "--set pending=sleep: unknown value"),
    (["--scenario", "copy", "--set", "bytes=4097"], "bytes=4097 is not a multiple of 4"),
    (["--scenario", "copy", "--set", "bytes=12XB"], "--set bytes=12XB: not a size"),
    (["--scenario", "copy", "--set", "bytes=65GiB"], "--set bytes=65GiB: out of range"),
    (["--scenario", "copy", "--variant", "h2d-pinnd"], "did you mean 'h2d-pinned'?"),
    (["--scenario", "copy", "--variant", "sync-device"], "unknown variant 'sync-device'"),
    (["--scenario", "double-buffer", "--set", "chunks=7"], "does not divide into chunks=7"),
    (["--scenario", "double-buffer", "--set", "chunks=0"], "--set chunks=0: out of range"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_is_one_line_exit_2(args, message, tmp_path):
    r = run(*args, env=NO_GPU, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("syncbench: ")
    assert message in lines[0]
    assert r.stdout == ""
    assert list(tmp_path.iterdir()) == []  # nothing written


def test_bad_csv_leaves_no_file(tmp_path):
    target = tmp_path / "out.csv"
    r = run("--scenario", "nosuch", "--csv", target, env=NO_GPU)
    assert r.returncode == 2
    assert list(tmp_path.iterdir()) == []


def test_no_gpu_is_exit_3_one_line(tmp_path):
    r = run("--scenario", "small-gemm", "--csv", tmp_path / "out.csv", env=NO_GPU)
    assert r.returncode == 3
    lines = r.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("syncbench: no usable CUDA device")
    assert list(tmp_path.iterdir()) == []  # the CSV's temporary file is gone too
