"""The Python line of the thread that waits (src/analyze/waiter_site.c), through `syncbench audit
--from DIR` on synthetic records: a runtime's thread without Python (XLA's) makes the stream
sync while the Python thread sleeps in a futex wait that the runtime's thread ends afterwards.
The site is then the Python thread's line (its library line beside it), with the call's own
native frame, the row marked `site_from: "waiter"` with the waiter's thread; through a second
thread without Python too; and not when no Python thread waited, when the one woken fell asleep
only after the call, or when the signal came too long after it. The gate names the line."""
import csv
import io
import json

import pytest

from conftest import run

PY, XLA, CALLBACK, OTHER, HOST_CB = 10, 20, 30, 40, 50  # thread ids
MS = 1_000_000
PROGRAM = """\
import jax

def step(x):
    return float(x[0, 0])  # SYNC-LINE

for i in range(3):
    step(x)
jax.device_get(x)  # GET-LINE
"""
NATIVE = "SynchronizeStream"


def line_of(text, marker):
    return next(i for i, t in enumerate(text.splitlines(), 1) if marker in t)


class Records:
    """One process's record stream (docs/record-format.md), recorded in the default mode with
    the hand-offs: a program file whose lines the Python stacks name, the runtime's native
    stack, then what each test adds."""

    def __init__(self, tmp_path):
        self.dir = tmp_path / "recs"
        self.dir.mkdir()
        self.prog = tmp_path / "prog.py"
        self.prog.write_text(PROGRAM)
        self.lines = [
            '{"t":"proc","v":1,"pid":100,"ppid":1,"rank":-1,"local_rank":-1,"cmd":"python3 '
            'prog.py","clock_ns":0,"mono_ns":0,"mode":"count","kernels":0,"launches":0,'
            '"waits":1,"symsize":1}',
            '{"t":"stack","id":0,"frames":[["/opt/xla/xla_cuda_plugin.so","' + NATIVE +
            '",4096,0]]}',
            '{"t":"stack","id":1,"frames":[["/opt/app/libtrain.so","own_sync",64,0]]}']
        sync = line_of(PROGRAM, "SYNC-LINE")
        get = line_of(PROGRAM, "GET-LINE")
        array = "/usr/lib/python3/site-packages/jax/_src/array.py"
        self.pystack(0, [(array, "__float__", 300), (self.prog, "step", sync),
                         (self.prog, "<module>", 7)])
        self.pystack(1, [(array, "device_get", 400), (self.prog, "<module>", get)])

    def pystack(self, id, frames):
        self.lines.append(json.dumps({"t": "pystack", "id": id,
                                      "frames": [[str(f), fn, n] for f, fn, n in frames]}))

    def call(self, tid, start, end, stack=0, py=None, api="cudaStreamSynchronize_v3020",
             host=None):
        c = {"t": "call", "api": api, "dom": "rt", "tid": tid, "ctx": 1, "corr": len(self.lines),
             "start": start, "end": end, "ranges": [], "stack": stack}
        if host:
            c["host"] = host
        if py is not None:
            c["py"] = py
        self.lines.append(json.dumps(c))

    def wake(self, tid, start, end, by, at, py=None, obj="futex"):
        w = {"t": "wake", "tid": tid, "start": start, "end": end, "by": by, "at": at, "obj": obj}
        if py is not None:
            w["py"] = py
        self.lines.append(json.dumps(w))

    def audit(self, *args):
        end = max(json.loads(x).get("end", 0) for x in self.lines) + MS
        text = "\n".join(self.lines + [f'{{"t":"end","clock_ns":{end},"mono_ns":{end},'
                                       '"why":"exit","dropped":0}'])
        (self.dir / "proc-100.jsonl").write_text(text + "\n")
        out = self.dir.parent / "out"
        out.mkdir(exist_ok=True)
        r = run("audit", "--from", self.dir, "--json", out / "r.json", "--csv", out / "r.csv",
                *args)
        rows = json.loads((out / "r.json").read_text())["rows"] if r.returncode in (0, 1) else []
        csv_rows = list(csv.DictReader(io.StringIO((out / "r.csv").read_text()))) if rows else []
        return r, rows, csv_rows


def xla_sync_while_python_waits(rec, step, py=0, asleep_from=None, signal_after=50_000):
    """Step `step` of the loop: the Python thread sleeps from asleep_from (default: before the
    sync) until XLA's thread, done with its 1 ms sync, signals it signal_after ns later."""
    t = 10 * MS * (step + 1)
    rec.call(XLA, t, t + MS)
    start = t - MS // 2 if asleep_from is None else asleep_from
    at = t + MS + signal_after
    rec.wake(PY, start, at + 20_000, XLA, at, py=py)


def sync_line(rec):
    return f"{rec.prog}:{line_of(PROGRAM, 'SYNC-LINE')} in step"


def test_a_runtime_threads_sync_is_the_waiting_python_threads_line(tmp_path):
    rec = Records(tmp_path)
    for i in range(3):
        xla_sync_while_python_waits(rec, i)
    r, rows, csv_rows = rec.audit()
    assert r.returncode == 0, r.stderr
    (row,) = rows
    assert row["count"] == 3 and row["class"] == "sync-stream", row
    assert row["python"]["file"] == str(rec.prog), row
    assert row["python"]["line"] == line_of(PROGRAM, "SYNC-LINE"), row
    assert row["python"]["source"] == "return float(x[0, 0])  # SYNC-LINE", row
    # the line inside the library that made it, as for a call of the Python thread itself
    assert row["via"]["file"].endswith("jax/_src/array.py") and row["via"]["line"] == 300, row
    assert row["native_site"] == f"xla_cuda_plugin.so!{NATIVE}", row
    assert (row["site_from"], row["waiter_tid"]) == ("waiter", PY), row
    (c,) = csv_rows
    assert (c["site_from"], c["waiter_tid"], c["py_line"]) == (
        "waiter", str(PY), str(line_of(PROGRAM, "SYNC-LINE"))), c
    assert c["native_site"] == f"xla_cuda_plugin.so!{NATIVE}", c
    # the table: the line, its native frame, and whose thread made the calls
    assert sync_line(rec) in r.stderr, r.stderr
    assert f"native: xla_cuda_plugin.so!{NATIVE}" in r.stderr, r.stderr
    assert (f"on:     a thread of xla_cuda_plugin.so without Python, while this line (thread {PY}) "
            "waited for it") in \
        r.stderr, r.stderr


def test_two_lines_each_named_and_the_gate_names_them(tmp_path):
    """The loop's float() line and the device_get() line after it (the same native frame, other
    waiters' stacks): two rows, and --max-syncs 0 lists both lines."""
    rec = Records(tmp_path)
    for i in range(3):
        xla_sync_while_python_waits(rec, i)
    xla_sync_while_python_waits(rec, 5, py=1)
    r, rows, _ = rec.audit("--max-syncs", "0")
    assert r.returncode == 1, r.stderr
    lines = {(x["python"]["line"], x["count"]) for x in rows}
    assert lines == {(line_of(PROGRAM, "SYNC-LINE"), 3), (line_of(PROGRAM, "GET-LINE"), 1)}, rows
    assert all(x["site_from"] == "waiter" for x in rows), rows
    gate = r.stderr[r.stderr.index("audit gate: FAILED"):]
    assert f"3  sync-stream    {sync_line(rec)}" in gate, gate
    assert f"1  sync-stream    {rec.prog}:{line_of(PROGRAM, 'GET-LINE')} in <module>" in gate, gate
    assert NATIVE not in gate.split("top sites:")[1].split("\n")[1], gate


def test_through_a_second_thread_without_python(tmp_path):
    """XLA's thread hands the result to a callback thread (no Python), which wakes Python."""
    rec = Records(tmp_path)
    t = 10 * MS
    rec.call(XLA, t, t + MS)
    rec.wake(CALLBACK, 0, t + MS + 30_000, XLA, t + MS + 10_000)
    rec.wake(PY, t - MS, t + MS + 90_000, CALLBACK, t + MS + 60_000, py=0)
    r, rows, _ = rec.audit()
    (row,) = rows
    assert (row["site_from"], row["waiter_tid"]) == ("waiter", PY), row
    assert row["python"]["line"] == line_of(PROGRAM, "SYNC-LINE"), row


def test_no_chain_the_python_thread_asleep_across_the_call(tmp_path):
    """No chain of XLA's signals reaches Python (its copy's completion goes through CUDA's
    host-callback thread and three of XLA's, as on the H100): the Python thread asleep across
    the whole call whose sleep ends first after it, within 5 ms, is the waiter; one asleep
    across it but woken later is not taken, nor one that fell asleep during the call."""
    rec = Records(tmp_path)
    t = 10 * MS
    rec.call(XLA, t, t + MS)
    rec.wake(CALLBACK, 0, t + MS + 30_000, HOST_CB, t + MS + 10_000)
    rec.wake(OTHER, 0, t + MS + 60_000, CALLBACK, t + MS + 40_000)
    rec.wake(OTHER + 2, t + MS // 2, t + MS + 70_000, OTHER, t + MS + 65_000, py=1)  # mid-call
    rec.wake(OTHER + 1, t - 2 * MS, t + 3 * MS, OTHER, t + 3 * MS - 10_000, py=1)  # woken later
    rec.wake(PY, t - MS, t + MS + 120_000, OTHER, t + MS + 100_000, py=0)
    r, rows, _ = rec.audit()
    (row,) = rows
    assert (row["site_from"], row["waiter_tid"]) == ("waiter", PY), row
    assert row["python"]["line"] == line_of(PROGRAM, "SYNC-LINE"), row


def test_the_first_waiter_asleep_during_the_call_is_taken(tmp_path):
    """XLA's thread first wakes a Python thread that fell asleep after the call (not waiting
    for it), then one asleep since before: the second one's line."""
    rec = Records(tmp_path)
    t = 10 * MS
    rec.call(XLA, t, t + MS)
    rec.wake(OTHER, t + MS + 5_000, t + MS + 30_000, XLA, t + MS + 20_000, py=1)
    rec.wake(PY, t - MS, t + MS + 60_000, XLA, t + MS + 40_000, py=0)
    r, rows, _ = rec.audit()
    (row,) = rows
    assert (row["waiter_tid"], row["python"]["line"]) == (PY, line_of(PROGRAM, "SYNC-LINE")), row


@pytest.mark.parametrize("case", ["no-waiter", "asleep-after", "too-late", "signal-before",
                                  "no-python"])
def test_no_waiter_leaves_the_native_frame(tmp_path, case):
    rec = Records(tmp_path)
    t = 10 * MS
    rec.call(XLA, t, t + MS)
    if case == "asleep-after":   # the Python thread fell asleep after the call had ended
        rec.wake(PY, t + MS + 10_000, t + MS + 90_000, XLA, t + MS + 50_000, py=0)
    elif case == "too-late":     # signalled 6 ms after the call: not what it waited for
        rec.wake(PY, t - MS, t + 7 * MS + 90_000, XLA, t + 7 * MS, py=0)
    elif case == "signal-before":  # the signal came before the call ended
        rec.wake(PY, t - MS, t + MS // 2 + 10_000, XLA, t + MS // 2, py=0)
    elif case == "no-python":    # the waiter has no Python stack (--no-python)
        rec.wake(PY, t - MS, t + MS + 90_000, XLA, t + MS + 50_000)
    r, rows, csv_rows = rec.audit()
    assert r.returncode == 0, r.stderr
    (row,) = rows
    assert row["python"] is None and row["site"] == f"xla_cuda_plugin.so!{NATIVE}", row
    assert (row["site_from"], row["waiter_tid"]) == ("native", None), row
    assert (csv_rows[0]["site_from"], csv_rows[0]["waiter_tid"]) == ("native", ""), csv_rows
    assert "on:     a thread" not in r.stderr, r.stderr


def test_a_python_threads_own_call_keeps_its_own_line(tmp_path):
    """A call with its own Python stack is its thread's, whoever waited for it; a call of a
    thread without Python beside it is the waiter's: two rows, each marked."""
    rec = Records(tmp_path)
    t = 10 * MS
    rec.call(OTHER, t, t + MS, stack=1, py=1)
    rec.wake(PY, t - MS, t + MS + 60_000, OTHER, t + MS + 40_000, py=0)
    xla_sync_while_python_waits(rec, 3)
    r, rows, _ = rec.audit()
    got = {(x["site_from"], x["python"]["line"], x["waiter_tid"]) for x in rows}
    assert got == {("python", line_of(PROGRAM, "GET-LINE"), None),
                   ("waiter", line_of(PROGRAM, "SYNC-LINE"), PY)}, rows


def test_a_wake_whose_py_names_no_stack_is_no_python_waiter(tmp_path):
    """A wake's "py" that names no recorded pystack (a stack the writer's table had no room for)
    is no Python thread's: the sync stays at its native frame, as for a wake without "py"
    (older records, --no-python: above)."""
    rec = Records(tmp_path)
    t = 10 * MS
    rec.call(XLA, t, t + MS)
    rec.wake(PY, t - MS, t + MS + 90_000, XLA, t + MS + 50_000, py=7)  # no such stack
    r, rows, _ = rec.audit()
    (row,) = rows
    assert row["site_from"] == "native", row


READBACK = "cuMemcpyDtoHAsync_v2"


@pytest.mark.parametrize("asleep", ["before", "just-after"])
def test_a_pinned_readback_a_python_thread_waited_for_is_counted_at_its_line(tmp_path, asleep):
    """JAX's float(x): XLA's thread copies into a pinned buffer (an async call that does not
    block it, recorded without a stack) and the Python thread sleeps until CUDA's host callback
    hands the value over through threads of its own: a `waited` call at the Python line, one
    per step, whether the Python thread fell asleep before the copy or just after it (3 us on
    the H100: the value is asked for, then waited for)."""
    rec = Records(tmp_path)
    for i in range(4):
        t = 10 * MS * (i + 1)
        rec.call(XLA, t, t + 8_000, stack=-1, api=READBACK, host="pinned")
        start = t - 20_000 if asleep == "before" else t + 8_000 + 3_000
        rec.wake(PY, start, t + 130_000, OTHER, t + 120_000, py=0)
    r, rows, _ = rec.audit("--max-syncs", "0")
    assert r.returncode == 1, r.stderr
    (row,) = rows
    assert (row["class"], row["count"], row["site_from"]) == ("waited", 4, "waiter"), row
    assert row["python"]["line"] == line_of(PROGRAM, "SYNC-LINE"), row
    assert sync_line(rec) in r.stderr.split("audit gate")[1], r.stderr


@pytest.mark.parametrize("case", ["nobody-asleep", "asleep-long-after", "host-to-device",
                                  "woken-too-late"])
def test_a_pinned_copy_no_python_thread_waited_for_is_not_counted(tmp_path, case):
    """An async copy into pinned memory blocks nobody unless a Python thread slept for it: with
    no sleep, a sleep begun 1 ms after it, a copy to the device, or a wake 6 ms later, it is
    not a blocking call (no row; the gate passes)."""
    rec = Records(tmp_path)
    t = 10 * MS
    api = "cuMemcpyHtoDAsync_v2" if case == "host-to-device" else READBACK
    rec.call(XLA, t, t + 8_000, stack=-1, api=api, host="pinned")
    if case == "asleep-long-after":
        rec.wake(PY, t + MS, t + MS + 130_000, OTHER, t + MS + 120_000, py=0)
    elif case == "host-to-device":
        rec.wake(PY, t - 20_000, t + 130_000, OTHER, t + 120_000, py=0)
    elif case == "woken-too-late":
        rec.wake(PY, t - 20_000, t + 7 * MS, OTHER, t + 7 * MS - 10_000, py=0)
    r, rows, _ = rec.audit("--max-syncs", "0")
    assert r.returncode == 0 and rows == [], (r.stderr, rows)


def test_a_python_threads_own_pinned_copy_is_not_another_threads_wait(tmp_path):
    """An async copy into pinned memory gets no stack even on a Python thread (it cannot block
    it): a worker thread's non_blocking readback while the main thread sleeps in join() is not
    the main thread's wait. The worker is known to run Python by its other calls' stacks."""
    rec = Records(tmp_path)
    t = 10 * MS
    rec.call(OTHER, t - MS, t - MS + 5_000, stack=1, py=1)  # the worker's own, with its stack
    rec.call(OTHER, t, t + 8_000, stack=-1, api=READBACK, host="pinned")
    rec.wake(PY, t - 2 * MS, t + 130_000, OTHER, t + 120_000, py=0)  # main, in join()
    r, rows, _ = rec.audit()
    assert all(row["class"] != "waited" for row in rows), rows
    assert all(row["site_from"] != "waiter" for row in rows), rows
