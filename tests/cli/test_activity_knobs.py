"""The developer knobs of --gpu-activity (docs/dev/testing.md) without a GPU: tests/inject/
fake_cuda stands in for a CUDA program and tests/inject/fake_cupti.c for CUPTI, which logs each
activity the injection library asks for (FAKE_CUPTI_LOG). SYNCBENCH_ACTIVITY_OFF turns each
kind off (and only it), SYNCBENCH_ACTIVITY_BUFFER_MB and SYNCBENCH_ACTIVITY_FLUSH_MS set the
buffers and the flush period, a bad value is a "warn" record and the default, the "proc" record
says which kinds were recorded and which were turned off, the analyzer says a run with kinds off
is incomplete, and SYNCBENCH_ACTIVITY_CALIBRATE=0 skips the calibration, saying so."""
import json
import os

import pytest

from conftest import ROOT, require_built, run

FAKE = str(ROOT / "build" / "tests" / "fake_cuda")
FAKE_CUPTI = ROOT / "build" / "tests" / "fake-cupti"
KINDS = ["kernels", "memcpy", "memset", "rt-launches", "drv-launches", "events", "syncs",
         "streams", "waits"]
# what the fake CUPTI logs when each kind is asked for ("waits" is not CUPTI's: the proc record)
ASKED = {"kernels": "enable kernels", "memcpy": "enable memcpy", "memset": "enable memset",
         "rt-launches": "rt-api ", "drv-launches": "drv-api ", "events": "enable events",
         "syncs": "enable syncs", "streams": "enable streams"}


@pytest.fixture(scope="module", autouse=True)
def fake_built():
    require_built(FAKE, FAKE_CUPTI / "libcupti.so.13")


def audited(tmp_path, *opts, knobs=None, calibrate="0"):
    """(the audit's result, the proc record, every record, the fake CUPTI's log lines) of
    fake_cuda audited with opts and the knobs (SYNCBENCH_ACTIVITY_* less the prefix)."""
    log, keep = tmp_path / "cupti.log", tmp_path / "recs"
    old = os.environ.get("LD_LIBRARY_PATH")
    # no GPU for the calibration's own run either (a real CUDA under the stand-in CUPTI, beside
    # the GPU tests of make test, took minutes on the H200): it fails at once, as without a GPU
    env = {"LD_LIBRARY_PATH": str(FAKE_CUPTI) + (":" + old if old else ""),
           "FAKE_CUPTI_LOG": str(log), "SYNCBENCH_ACTIVITY_CALIBRATE": calibrate,
           "CUDA_VISIBLE_DEVICES": ""}
    env.update({f"SYNCBENCH_ACTIVITY_{k}": v for k, v in (knobs or {}).items()})
    r = run("audit", *opts, "--keep", keep, "--", FAKE, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    (f,) = [p for p in keep.iterdir() if p.name.startswith("proc-")]
    recs = [json.loads(x) for x in f.read_text().splitlines()]
    assert recs[0]["t"] == "proc" and recs[-1]["t"] == "end"
    lines = log.read_text().splitlines() if log.exists() else []
    return r, recs[0], recs, lines


def activity(lines):
    """The log's lines of the activity API (not the resource domain's callbacks)."""
    return [x for x in lines if not x.startswith("resource ")]


def asked(lines, kind):
    return any(x.startswith(ASKED[kind]) for x in lines)


def test_gpu_activity_asks_for_every_kind_by_default(tmp_path):
    r, proc, recs, lines = audited(tmp_path, "--gpu-activity", "--json", tmp_path / "r.json")
    assert proc["kinds"] == KINDS and "off" not in proc
    assert (proc["buffer_mb"], proc["flush_ms"], proc["waits"]) == (8, 500, 1)
    for kind in ASKED:
        assert asked(lines, kind), (kind, lines)
    assert f"buffer {8 << 20}" in lines and "flush-period 500" in lines
    assert "zeroed" not in proc and not [x for x in lines if x.startswith("attribute")]
    assert "recording incomplete" not in r.stderr
    assert json.loads((tmp_path / "r.json").read_text())["processes"][0]["activity_off"] is None


def test_a_contexts_going_is_asked_for_and_flushes_only_recorded_activity(tmp_path):
    """The context's going is asked for in every mode (the calls' context ids are kept until
    then); only a process that records GPU activity flushes it (at the exit here)."""
    (tmp_path / "default").mkdir()
    (tmp_path / "gpu").mkdir()
    _, _, _, lines = audited(tmp_path / "default")
    assert "resource context-destroy 1" in lines, lines
    assert "flush-all" not in lines, lines
    _, _, _, lines = audited(tmp_path / "gpu", "--gpu-activity")
    assert "resource context-destroy 1" in lines and "flush-all" in lines, lines


@pytest.mark.parametrize("kind", KINDS)
def test_activity_off_turns_that_kind_off_and_only_it(tmp_path, kind):
    r, proc, recs, lines = audited(tmp_path, "--gpu-activity", "--json", tmp_path / "r.json",
                                   knobs={"OFF": kind})
    assert proc["off"] == [kind] and proc["kinds"] == [k for k in KINDS if k != kind]
    for other in ASKED:
        assert asked(lines, other) == (other != kind), (other, lines)
    assert proc["waits"] == (kind != "waits")
    assert not [x for x in recs if x["t"] == "warn" and "SYNCBENCH_ACTIVITY" in x["msg"]]
    # the analyzer: the table and the JSON say the GPU figures are incomplete
    assert (f"recording incomplete: {kind} not recorded (SYNCBENCH_ACTIVITY_OFF"
            in r.stderr), r.stderr
    (p,) = json.loads((tmp_path / "r.json").read_text())["processes"]
    assert p["activity_off"] == kind


def test_trace_mode_turns_a_domain_of_api_records_off(tmp_path):
    _, proc, _, lines = audited(tmp_path, "--trace", tmp_path / "t.json",
                                knobs={"OFF": "rt-launches"})
    assert "enable driver" in lines and "enable runtime" not in lines
    assert proc["off"] == ["rt-launches"] and proc["mode"] == "trace"


def test_off_all_records_no_kind(tmp_path):
    r, proc, _, lines = audited(tmp_path, "--gpu-activity", knobs={"OFF": " all "})
    assert proc["kinds"] == [] and proc["off"] == KINDS and proc["waits"] == 0
    assert not [x for x in lines if x.startswith(("enable", "rt-api", "drv-api"))], lines
    assert ("recording incomplete: " + ",".join(KINDS)) in r.stderr


def test_bad_values_are_warnings_and_the_defaults(tmp_path):
    r, proc, recs, lines = audited(tmp_path, "--gpu-activity", knobs={
        "OFF": "kernels,,bogus\"name", "BUFFER_MB": "2x", "FLUSH_MS": "60001", "ZEROED": "2"})
    warns = [x["msg"] for x in recs if x["t"] == "warn" and "SYNCBENCH_ACTIVITY" in x["msg"]]
    assert warns == [
        'SYNCBENCH_ACTIVITY_OFF="bogus"name": no such kind (kernels, memcpy, memset, '
        "rt-launches, drv-launches, events, syncs, streams, waits, all): ignored",
        'SYNCBENCH_ACTIVITY_BUFFER_MB="2x": not a whole number from 1 to 1024; 8 used',
        'SYNCBENCH_ACTIVITY_FLUSH_MS="60001": not a whole number from 0 to 60000; 500 used',
        'SYNCBENCH_ACTIVITY_ZEROED="2": not a whole number from 0 to 1; 0 used']
    assert proc["off"] == ["kernels"] and (proc["buffer_mb"], proc["flush_ms"]) == (8, 500)
    assert f"buffer {8 << 20}" in lines and "flush-period 500" in lines
    assert not asked(lines, "kernels") and asked(lines, "memcpy")
    assert recs[-1]["why"] == "exit"


def test_buffer_flush_period_and_zeroed_buffers(tmp_path):
    r, proc, _, lines = audited(tmp_path, "--gpu-activity",
                                knobs={"BUFFER_MB": "3", "FLUSH_MS": "0", "ZEROED": "1"})
    assert f"buffer {3 << 20}" in lines and "flush-period 0" in lines
    assert (proc["buffer_mb"], proc["flush_ms"], proc["zeroed"]) == (3, 0, 1)
    assert "off" not in proc
    # CUPTI told the buffers come zeroed (CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER: 5)
    assert "attribute 5 1" in lines
    # the knobs change how the records come, not which: the run is whole
    assert "recording incomplete" not in r.stderr


def test_the_default_mode_records_the_hand_offs_and_no_activity(tmp_path):
    _, proc, recs, lines = audited(tmp_path, knobs={"OFF": "bogus", "BUFFER_MB": "x"})
    assert proc["kinds"] == ["waits"] and "off" not in proc and "buffer_mb" not in proc
    # the buffers' knobs do not apply; a bad kind is said as in every mode
    assert [x["msg"][:30] for x in recs if x["t"] == "warn"] == ['SYNCBENCH_ACTIVITY_OFF="bogus"']
    assert activity(lines) == []  # nothing asked of CUPTI's activity API
    assert proc["waits"] == 1


def test_the_default_mode_can_turn_the_hand_offs_off(tmp_path):
    r, proc, _, lines = audited(tmp_path, knobs={"OFF": "waits,kernels"})
    # only the mode's kinds are turned off: kernels are not the default mode's
    assert proc["kinds"] == [] and proc["off"] == ["waits"] and proc["waits"] == 0
    assert "recording incomplete: waits not recorded" in r.stderr and activity(lines) == []


def test_the_calibration_is_skipped_only_when_told(tmp_path):
    (tmp_path / "a").mkdir()
    r, _, _, _ = audited(tmp_path / "a", "--gpu-activity")
    assert "SYNCBENCH_ACTIVITY_CALIBRATE=0: no calibration" in r.stderr
    assert "could not measure" not in r.stderr  # the calibration did not run
    (tmp_path / "b").mkdir()
    r, _, _, _ = audited(tmp_path / "b", "--gpu-activity", calibrate="1")
    assert "SYNCBENCH_ACTIVITY_CALIBRATE=0" not in r.stderr  # not skipped: it ran, and
    assert "could not measure" in r.stderr, r.stderr  # failed, with no GPU to time


def test_the_analyzer_reads_the_kinds_turned_off_from_kept_records(tmp_path):
    keep = tmp_path / "k"
    keep.mkdir()
    proc = {"t": "proc", "v": 1, "pid": 7, "ppid": 1, "cmd": "x", "clock_ns": 0,
            "mono_ns": 0, "mode": "count", "kernels": 1, "launches": 1}
    end = {"t": "end", "clock_ns": 1000, "mono_ns": 1000, "why": "exit", "dropped": 0}
    for name, extra in (("proc-7.jsonl", {"off": ["events", "syncs"], "kinds": ["kernels"]}),
                        ("proc-8.jsonl", {})):
        (keep / name).write_text(json.dumps({**proc, "pid": int(name[5]), **extra}) + "\n" +
                                 json.dumps(end) + "\n")
    r = run("audit", "--from", keep, "--json", tmp_path / "r.json")
    assert r.returncode == 0, r.stderr
    assert ("pid 7: recording incomplete: events,syncs not recorded (SYNCBENCH_ACTIVITY_OFF, "
            "a developer's knob): its GPU figures, predicted savings and hand-offs are not the whole "
            "run's"
            in r.stderr), r.stderr
    assert "pid 8: recording incomplete" not in r.stderr
    by_pid = {p["pid"]: p for p in json.loads((tmp_path / "r.json").read_text())["processes"]}
    assert by_pid[7]["activity_off"] == "events,syncs" and by_pid[8]["activity_off"] is None
