"""`syncbench audit --trace` (src/report/out_trace.c, written with jansson by
src/report/trace_events.c) loaded back and held, event by event, to the records it was made
from, without a GPU: every event's keys and their types, for each kind of event (the process and
thread names, host calls with their analysis, launch API records, kernels, copies, memsets, NVTX
ranges, the flows from each launch to its GPU work); each time in us to the ns; one event a line;
names with quotes, backslashes, control characters and Greek come back as they were."""
import json
import subprocess
import sys

import pytest

from conftest import ROOT, run

STREAM_TID = 1000000
CLOCK, MONO = 5_000, 1_005_000  # the proc record's clock pair: CLOCK_MONOTONIC = CUPTI + 1 ms
NAME = 'gemm<"q">\\\t\x01λ'  # a quote, a backslash, a tab, a control character, Greek
RANGE = "step\n1"


def records(folder, script):
    """folder/proc-100.jsonl: a step that launches a kernel (the runtime's and the driver's API
    records), copies with .item() (a pageable DtoH copy), memsets, and syncs the stream, in an
    NVTX range, at a Python line; a range left open, and a launch in it."""
    folder.mkdir()
    lines = [
        {"t": "proc", "v": 1, "pid": 100, "ppid": 1, "rank": 3, "local_rank": 0,
         "cmd": "python3 train.py", "clock_ns": CLOCK, "mono_ns": MONO, "mode": "count",
         "kernels": 1, "launches": 1, "symsize": 1},
        {"t": "stack", "id": 1, "frames": [["/usr/lib/libtorch_cuda.so",
                                            "at::native::_local_scalar_dense_cuda", 16, 0]]},
        {"t": "pystack", "id": 1, "frames": [[str(script), "step", 2], [str(script), "main", 4]]},
        {"t": "range", "tid": 1, "id": 1, "name": RANGE, "start": 10_000, "end": 90_000,
         "depth": 0},
        {"t": "range", "tid": 1, "id": 2, "name": "open", "start": 95_000, "end": -1, "depth": 0},
        {"t": "api", "api": "cudaLaunchKernel_v7000", "dom": "rt", "tid": 1, "corr": 11,
         "start": 20_000, "end": 22_500},
        {"t": "api", "api": "cuLaunchKernel", "dom": "drv", "tid": 1, "corr": 12,
         "start": 20_500, "end": 21_500},
        {"t": "kernel", "dev": 0, "ctx": 1, "stream": 7, "corr": 12, "start": 25_000,
         "end": 45_001, "name": NAME},
        {"t": "call", "api": "cudaMemcpyAsync_v3020", "dom": "rt", "tid": 1, "ctx": 1,
         "corr": 13, "start": 46_000, "end": 60_000, "ranges": [[1, RANGE]], "stack": 1,
         "py": 1, "copy": "DtoH", "host": "pageable"},
        {"t": "copy", "dev": 0, "ctx": 1, "stream": 7, "corr": 14, "rcorr": 13, "start": 50_000,
         "end": 51_000, "bytes": 4, "kind": "DtoH", "src": "device", "dst": "pageable"},
        {"t": "api", "api": "cudaMemsetAsync", "dom": "rt", "tid": 2, "corr": 15,
         "start": 61_000, "end": 62_000},
        {"t": "memset", "dev": 0, "ctx": 1, "stream": 8, "corr": 15, "start": 63_000,
         "end": 64_000, "bytes": 4096},
        {"t": "call", "api": "cudaStreamSynchronize_v3020", "dom": "rt", "tid": 1, "ctx": 1,
         "corr": 16, "start": 65_000, "end": 80_000, "ranges": [[1, RANGE]], "stack": 1,
         "py": 1},
        {"t": "api", "api": "cudaLaunchKernel_v7000", "dom": "rt", "tid": 1, "corr": 17,
         "start": 96_000, "end": 97_000},
    ]
    lines += [
        {"t": "kernel", "dev": 0, "ctx": 1, "stream": 7, "corr": 17, "start": 98_000,
         "end": 99_000},
        {"t": "end", "clock_ns": 100_000, "mono_ns": 1_100_000, "why": "exit", "dropped": 0}]
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines)
    (folder / "proc-100.jsonl").write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("trace")
    script = d / "train.py"
    script.write_text("def step(x):\n    return x.item()\ndef main():\n    step(1)\n")
    records(d / "recs", script)
    out = d / "t.json"
    r = run("audit", "-q", "--from", d / "recs", "--trace", out, timeout=120)
    assert r.returncode == 0, r.stderr
    raw = out.read_bytes()
    return json.loads(raw.decode("utf-8")), raw, script


# every event's keys, in their order, by (ph, cat); and args' keys, required and optional
KEYS = {
    ("M", None): ["ph", "pid", "tid", "name", "args"],
    ("X", None): ["ph", "pid", "tid", "name", "cat", "ts", "dur", "args"],
    ("s", "ac2g"): ["ph", "pid", "tid", "id", "ts", "cat", "name"],
    ("f", "ac2g"): ["ph", "pid", "tid", "id", "ts", "cat", "name", "bp"],
}
ARGS = {
    "kernel": ["device", "stream", "correlation"],
    "gpu_memcpy": ["device", "stream", "correlation", "bytes"],
    "gpu_memset": ["device", "stream", "correlation", "bytes"],
    "nvtx": ["id", "blocking_calls"],
}


def us(clock_ns):
    """A time of the process's CUPTI clock on the trace's, in us: ts 0 at the process's first
    moment (no launcher's time with --from), its proc record's clock."""
    return (clock_ns - CLOCK) / 1e3


def by(events, ph, cat=None, name=None):
    return [e for e in events if e["ph"] == ph and (cat is None or e.get("cat") == cat)
            and (name is None or e["name"] == name)]


def test_the_document_and_one_event_a_line(trace):
    doc, raw, _ = trace
    assert list(doc) == ["traceEvents", "displayTimeUnit"] and doc["displayTimeUnit"] == "ns"
    lines = raw.decode().split("\n")
    assert lines[0] == '{"traceEvents":[' and lines[-2:] == ['],"displayTimeUnit":"ns"}', ""]
    events = [json.loads(x.rstrip(",")) for x in lines[1:-2]]
    assert events == doc["traceEvents"]
    assert all(x.endswith(",") for x in lines[1:-3]) and not lines[-3].endswith(",")


def test_every_event_has_its_kinds_keys_and_types(trace):
    doc, _, _ = trace
    for e in doc["traceEvents"]:
        key = (e["ph"], None if e["ph"] in "MX" else e.get("cat"))
        assert list(e) == KEYS[key], e
        assert e["pid"] == 100 and isinstance(e["tid"], int), e
        if e["ph"] == "X":
            assert isinstance(e["ts"], float) and isinstance(e["dur"], float), e
            assert e["dur"] >= 0
            if e["cat"] in ARGS:
                assert list(e["args"]) == ARGS[e["cat"]], e
                assert all(isinstance(v, int) for v in e["args"].values()), e
        if e["ph"] in "sf":
            assert (e["cat"], e["name"], e.get("bp", "e")) == ("ac2g", "ac2g", "e")
            assert isinstance(e["id"], int) and isinstance(e["ts"], float), e


def test_names_of_the_process_its_threads_and_streams(trace):
    doc, _, _ = trace
    names = {(e["tid"], e["name"], e["args"]["name"]) for e in by(doc["traceEvents"], "M")}
    assert names == {(0, "process_name", "pid 100 rank 3: python3 train.py"),
                     (1, "thread_name", "host thread 1"), (2, "thread_name", "host thread 2"),
                     (STREAM_TID + 7, "thread_name", "stream 7"),
                     (STREAM_TID + 8, "thread_name", "stream 8")}


def test_gpu_work_at_its_times_on_its_stream(trace):
    doc, _, _ = trace
    ev = doc["traceEvents"]
    (k,) = by(ev, "X", "kernel", NAME)
    assert (k["tid"], k["ts"], k["dur"]) == (STREAM_TID + 7, us(25_000), 20.001)
    assert k["args"] == {"device": 0, "stream": 7, "correlation": 12}
    (unnamed,) = by(ev, "X", "kernel", "kernel")  # a count-mode kernel: no name recorded
    assert (unnamed["ts"], unnamed["dur"]) == (us(98_000), 1.0)
    (cp,) = by(ev, "X", "gpu_memcpy")
    assert cp["name"] == "Memcpy DtoH (device -> pageable)"
    assert (cp["ts"], cp["dur"], cp["args"]["bytes"], cp["args"]["correlation"]) == (
        us(50_000), 1.0, 4, 14)
    (ms,) = by(ev, "X", "gpu_memset")
    assert (ms["name"], ms["tid"], ms["args"]) == (
        "Memset (device)", STREAM_TID + 8,
        {"device": 0, "stream": 8, "correlation": 15, "bytes": 4096})


def test_host_calls_with_their_analysis_and_launches(trace):
    doc, _, script = trace
    ev = doc["traceEvents"]
    (sync,) = by(ev, "X", "sync", "cudaStreamSynchronize_v3020")
    assert (sync["tid"], sync["ts"], sync["dur"]) == (1, us(65_000), 15.0)
    a = sync["args"]
    assert (a["class"], a["group"], a["correlation"], a["range"]) == (
        "sync-stream", "explicit", 16, RANGE)
    assert a["python"] == [f"{script}:2 in step", f"{script}:4 in main"]
    assert a["site"].endswith("train.py:2 in step") and isinstance(a["operation"], str)
    assert isinstance(a["bubble_us"], float) and a["bubble_us"] >= 0
    (copy,) = by(ev, "X", None, "cudaMemcpyAsync_v3020")
    assert copy["cat"] == "sync" and copy["args"]["class"] == "copy-pageable"
    launches = by(ev, "X", "cuda_runtime", "cudaLaunchKernel_v7000")
    assert [(x["ts"], x["dur"], x["args"]) for x in launches] == [
        (us(20_000), 2.5, {"correlation": 11}), (us(96_000), 1.0, {"correlation": 17})]
    (drv,) = by(ev, "X", "cuda_driver", "cuLaunchKernel")
    assert (drv["ts"], drv["args"]) == (us(20_500), {"correlation": 12})


def test_ranges_and_one_left_open(trace):
    doc, _, _ = trace
    ev = doc["traceEvents"]
    (r,) = by(ev, "X", "nvtx", RANGE)
    assert (r["ts"], r["dur"], r["args"]) == (us(10_000), 80.0, {"id": 1, "blocking_calls": 2})
    (o,) = by(ev, "X", "nvtx", "open")
    assert o["ts"] == us(95_000) and o["dur"] > 0 and o["args"]["id"] == 2


def test_each_launch_flows_to_its_gpu_work(trace):
    """One "s" at the launch's start on its thread and one "f" at the work's start on its
    stream, per flow id: the kernel from the driver's launch (its correlation id), the copy
    from .item()'s call (the runtime's), the memset from its API record, the unnamed kernel
    from its runtime launch."""
    doc, _, _ = trace
    ev = doc["traceEvents"]
    s = {e["id"]: e for e in by(ev, "s")}
    f = {e["id"]: e for e in by(ev, "f")}
    assert len(s) == len(by(ev, "s")) and set(s) == set(f) and len(s) == 4
    pairs = {(s[i]["tid"], s[i]["ts"], f[i]["tid"], f[i]["ts"]) for i in s}
    assert pairs == {(1, us(20_500), STREAM_TID + 7, us(25_000)),
                     (1, us(46_000), STREAM_TID + 7, us(50_000)),
                     (2, us(61_000), STREAM_TID + 8, us(63_000)),
                     (1, us(96_000), STREAM_TID + 7, us(98_000))}


def test_a_big_trace_loads_and_every_flow_pairs_up(tmp_path):
    """The benchmark's generator (tests/bench/gen_audit_records.py), 300 steps with .item()'s
    copy and both APIs' launch records: every kernel and copy has its flow, ids unique."""
    d = tmp_path / "recs"
    subprocess.run([sys.executable, str(ROOT / "tests/bench/gen_audit_records.py"),
                    "--readback", "--launches", "both", "300", str(d)], check=True)
    r = run("audit", "-q", "--from", d, "--trace", tmp_path / "t.json", timeout=120)
    assert r.returncode == 0, r.stderr
    ev = json.loads((tmp_path / "t.json").read_text())["traceEvents"]
    work = [e for e in ev if e["ph"] == "X" and e["cat"] in ("kernel", "gpu_memcpy")]
    assert len(work) == 600
    ids = [e["id"] for e in ev if e["ph"] == "s"]
    assert len(ids) == len(set(ids)) == 600
    starts = {(e["tid"], e["ts"]) for e in work}
    assert {(e["tid"], e["ts"]) for e in ev if e["ph"] == "f"} == starts
    assert len(by(ev, "X", "sync", "cudaStreamSynchronize_v3020")) == 300
    # the pinned copy's call does not block: a runtime call, classed none
    copies = by(ev, "X", "cuda_runtime", "cudaMemcpyAsync_v3020")
    assert len(copies) == 300 and {c["args"]["class"] for c in copies} == {"none"}
