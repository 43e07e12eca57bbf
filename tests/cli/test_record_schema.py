"""The injection library's writers held to the record table (src/record/schema.c): they print
their lines by hand (no allocation on the hot path), so what they print is checked here. Real
record files, written on the CPU by tests/inject/fake_cuda under the launcher (the fake CUPTI
accepts the subscription, the real one on a machine without a driver refuses it) in each mode,
go through `syncbench __record-schema --check`: every line's "t" a kind of the table, each field
one that kind declares, of its declared type, every required field there. The call, stack and
pystack lines are checked in tests/unit/test_watch.c. And the checker itself fails on each
kind of fault."""
import json
import os

import pytest

from conftest import ROOT, require_built, run

FAKE = str(ROOT / "build" / "tests" / "fake_cuda")
FAKE_CUPTI = ROOT / "build" / "tests" / "fake-cupti"
GEN = ROOT / "tests" / "bench" / "gen_audit_records.py"


@pytest.fixture(scope="module", autouse=True)
def fake_built():
    require_built(FAKE, FAKE_CUPTI / "libcupti.so.13")


def keep_records(tmp_path, name, *opts, args=(), cupti="fake"):
    """The record files of fake_cuda ARGS audited with OPTS."""
    keep = tmp_path / name
    opts = [tmp_path / f"{name}.trace.json" if o == "TRACE" else o for o in opts]
    env = None
    if cupti == "fake":
        old = os.environ.get("LD_LIBRARY_PATH")
        # the calibration's records are not the process's, and its run of a real CUDA under the
        # stand-in CUPTI took minutes beside make test's GPU jobs on the H200
        env = {"LD_LIBRARY_PATH": str(FAKE_CUPTI) + (":" + old if old else ""),
               "SYNCBENCH_ACTIVITY_CALIBRATE": "0"}
    r = run("audit", *opts, "--keep", keep, "--", FAKE, *args, env=env, timeout=120)
    assert r.returncode in (0, 1), r.stderr
    files = sorted(keep.glob("proc-*.jsonl"))
    assert files, r.stderr
    return files


def kinds_in(files):
    return {json.loads(line)["t"] for f in files for line in f.read_text().splitlines() if line}


def check(*files):
    return run("__record-schema", "--check", *files, timeout=60)


MODES = {
    "count": ((), ()),
    "trace": (("--trace", "TRACE"), ()),
    "gpu-activity": (("--gpu-activity",), ()),
    "handoff": (("--gpu-activity",), ("handoff",)),
    "no-python": (("--no-python",), ()),
}


@pytest.mark.parametrize("mode", sorted(MODES))
def test_the_writers_lines_keep_to_the_record_table(tmp_path, mode):
    opts, args = MODES[mode]
    files = keep_records(tmp_path, mode, *opts, args=args)
    r = check(*files)
    assert r.returncode == 0, r.stdout + r.stderr
    kinds = kinds_in(files)
    assert {"proc", "end"} <= kinds, kinds
    if mode == "handoff":
        assert "wake" in kinds, kinds


def test_a_process_cupti_refused_keeps_to_the_record_table(tmp_path):
    """The real CUPTI of a machine without a driver refuses: the "unwatched" record."""
    files = keep_records(tmp_path, "refused", cupti="real")
    if "unwatched" not in kinds_in(files):
        pytest.skip("this machine's CUPTI subscribes")
    r = check(*files)
    assert r.returncode == 0, r.stdout + r.stderr


BAD_LINES = {
    "unknown kind": ({"t": "frobnicate"}, "no kind of the record table"),
    "undeclared field": ({"t": "pause", "tid": 1, "start": 1, "end": 2, "new": 1},
                         "no field \"new\""),
    "wrong type": ({"t": "call", "api": "cudaFree", "start": 1, "end": "2"},
                   "\"end\" is not a JSON integer"),
    "a real for an integer": ({"t": "pause", "tid": 1, "start": 1.5, "end": 2},
                              "not a JSON integer"),
    "required field missing": ({"t": "wake", "tid": 1, "start": 1, "end": 3, "by": 2},
                               "required \"at\""),
    "no t": ({"pid": 1}, "no \"t\""),
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_the_check_fails_on_a_line_the_table_does_not_allow(tmp_path, case):
    line, why = BAD_LINES[case]
    f = tmp_path / "proc-1.jsonl"
    good = {"t": "proc", "v": 1, "pid": 1}
    f.write_text(json.dumps(good) + "\n" + json.dumps(line) + "\n")
    r = check(f)
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"{f}:2: " in r.stdout and why in r.stdout, r.stdout
    assert f"{f}:1:" not in r.stdout, r.stdout
    assert "do not keep to the record table" in r.stderr, r.stderr
