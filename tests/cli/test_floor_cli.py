"""syncbench-floor's command line, with every GPU hidden: bad input is one line on stderr and
exit 2 before any CUDA call (a program that touched CUDA first would exit 3 here), --list and
--help need no GPU, and measuring without one is one line and exit 3."""
import os
import subprocess

import pytest

from conftest import FLOOR, NO_GPU, assert_usage_error

PROG = "syncbench-floor"


def floor(*args, env=None):
    return subprocess.run([FLOOR, *map(str, args)], capture_output=True, text=True, timeout=60,
                          env={**os.environ, **NO_GPU, **(env or {})})


@pytest.fixture(scope="module", autouse=True)
def built_floor():
    if not os.access(FLOOR, os.X_OK):
        pytest.fail(f"{FLOOR} not built; run make all")


@pytest.mark.parametrize("args, message", [
    (["--reps", "0"], "--reps '0': not a whole number from 1 to 1000000"),
    (["--reps", "1000001"], "--reps '1000001': not a whole number from 1 to 1000000"),
    (["--reps", "3x"], "--reps '3x': not a whole number"),
    (["--reps="], "--reps '': not a whole number"),
    (["--reps"], "--reps: needs a value"),
    (["--device", "-1"], "--device '-1': not a whole number from 0 to 1023"),
    (["--only", "launch,nope"], "--only: no loop or row named 'nope' (see --list)"),
    (["--only", "launch,"], "--only: no loop or row named '' (see --list)"),
    (["--only", "readback/idle"], "--only: no loop or row named 'readback/idle'"),
    (["--bogus"], "unknown option '--bogus' (see --help)"),
    (["-x"], "unknown option '-x' (see --help)"),
    (["--list=yes"], "unknown option '--list=yes' (see --help)"),
    (["launch"], "unexpected argument 'launch' (see --help)"),
    (["--csv", "/nonexistent-syncbench-floor/out.csv"], "no writable folder"),
    (["--csv", "."], "--csv .: is a folder"),
    (["--csv", ""], "--csv: an empty path"),
])
def test_bad_input_is_one_line_and_exit_2_before_any_gpu_work(args, message):
    assert_usage_error(floor(*args), message, prog=PROG)


def test_bad_input_after_good_options_is_still_caught_first(tmp_path):
    r = floor("--csv", tmp_path / "out.csv", "--reps", "5", "--only", "nope")
    assert_usage_error(r, "no loop or row named 'nope'", prog=PROG)
    assert not (tmp_path / "out.csv").exists()


def listed(*args):
    r = floor("--list", *args)
    assert r.returncode == 0 and r.stderr == "", r.stderr
    rows = []
    for line in r.stdout.splitlines():
        name, way, unit, iters, reps, definition = line.split(None, 5)
        rows.append((name, way, unit, int(iters), int(reps), definition))
    return rows


def test_list_names_every_row_with_no_gpu():
    rows = listed()
    names = [r[0] for r in rows]
    assert len(names) == len(set(names)) >= 20
    for name, way, unit, iters, reps, definition in rows:
        assert way in ("plain", "scenario") and unit in ("us", "GB/s"), name
        assert reps >= 1 and len(definition) > 20, name
        if way == "plain":  # one iteration a repetition, timed alone
            assert iters == 1 and "/" not in name, name
        else:  # scenario/variant/metric, the scenario's iterations
            assert iters > 1 and len(name.split("/")) == 3, name
    assert {"launch", "readback-pinned", "readback/idle-pinned/readback_us",
            "copy/h2d-pinned/GBps", "graph/launches/launch_us"} <= set(names)


def test_only_selects_loops_and_rows():
    # a loop by name: all its rows; a row by name: its loop's rows
    assert [r[0] for r in listed("--only", "graph/launches")] == \
        ["graph/launches/launch_us", "graph/launches/step_us"]
    assert [r[0] for r in listed("--only", "graph/launches/step_us,launch")] == \
        ["launch", "graph/launches/launch_us", "graph/launches/step_us"]
    assert {r[4] for r in listed("--reps", "7")} == {7}


def test_help_needs_no_gpu():
    r = floor("--help")
    assert r.returncode == 0 and r.stdout.startswith(f"usage: {PROG} ")
    for option in ("--only", "--reps", "--device", "--csv", "--list"):
        assert option in r.stdout


def test_measuring_without_a_gpu_is_one_line_and_exit_3(tmp_path):
    r = floor("--only", "launch", "--csv", tmp_path / "out.csv")
    assert r.returncode == 3, r.stderr
    assert len(r.stderr.splitlines()) == 1
    assert r.stderr.startswith(f"{PROG}: no usable CUDA device")
    assert r.stdout == "" and not (tmp_path / "out.csv").exists()
