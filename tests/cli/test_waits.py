"""libsyncbench_waits.so (waits/) on the CPU: the hand-offs between threads it records under
LD_PRELOAD (tests/waits/waits_handoffs.c: a condition variable's wait of each kind, a broadcast,
a semaphore's wait of each kind, a futex wait and wake through syscall() as Abseil makes them,
each with what the waiter's probe answered on its own thread; and what is no hand-off, with no
probe asked: a wait before sbw_start, one that timed out with a signal inside it, a futex wait
that timed out, a semaphore that was available), C++'s std::condition_variable
(tests/waits/waits_cxx.cc), Python's (a queue.Queue hand-off is one "sem" wake; the GIL is none,
and the rule is what removes it), and the launcher that preloads it on tests/inject/fake_cuda
("wake" records with the right threads on CUPTI's clock, "waits" in the proc record, the user's
LD_PRELOAD kept, preloaded in the default mode too but not with --no-python alone, one line when
the library is missing)."""
import errno
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

from conftest import BIN, ROOT, require_built

PROGRAMS = pathlib.Path(os.environ.get("SYNCBENCH_TEST_PROGRAMS", ROOT / "build" / "tests"))
WAITS_LIB = os.environ.get("SYNCBENCH_WAITS_LIB",
                           str(pathlib.Path(BIN).parent / "libsyncbench_waits.so"))
# make test-asan runs the C test built with the sanitizers, ASan's runtime preloaded first
HANDOFFS = os.environ.get("SYNCBENCH_WAITS_TEST", str(PROGRAMS / "waits_handoffs"))
HANDOFFS_PRELOAD = os.environ.get("SYNCBENCH_WAITS_TEST_PRELOAD", WAITS_LIB)
PY_HANDOFFS = ROOT / "tests" / "waits" / "py_handoffs.py"
PY_WAITER = ROOT / "tests" / "waits" / "py_waiter.py"
CXX = str(PROGRAMS / "waits_cxx")
FAKE = str(PROGRAMS / "fake_cuda")
FAKE_CUPTI = PROGRAMS / "fake-cupti"
WORK_NS = 15_000_000  # the signallers work about 20 ms before they signal


@pytest.fixture(scope="module", autouse=True)
def built():
    require_built(WAITS_LIB, HANDOFFS, CXX, FAKE, FAKE_CUPTI / "libcupti.so.13", how="make all")


def ordered(w):
    return w["start"] <= w["at"] <= w["end"]


# ---- the library alone, in a C program ----

@pytest.fixture(scope="module")
def cases():
    env = dict(os.environ, LD_PRELOAD=HANDOFFS_PRELOAD)
    r = subprocess.run([HANDOFFS], env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    assert lines[-1] == {"lost": 0}, lines[-1]
    return {x["case"]: x for x in lines[:-1]}


@pytest.mark.parametrize("case", ["cond-wait", "cond-timedwait", "cond-clockwait", "sem-wait",
                                  "sem-timedwait", "sem-clockwait", "futex-wait",
                                  "futex-wait-bitset"])
def test_a_wait_ended_by_another_thread_is_one_handoff(cases, case):
    """One hand-off, whose py is the waiter's own probe answer: the probe ran once, on the
    waiter's thread, and the waiter's errno is as it was before its wait."""
    c = cases[case]
    assert c["rc"] == 0, c
    (w,) = c["wakes"]
    assert (w["tid"], w["by"]) == (c["waiters"][0], c["signaller"]), c
    assert w["obj"] == case.split("-")[0], c
    assert ordered(w) and w["end"] - w["start"] >= WORK_NS, c
    assert (w["py"], c["probed"], c["errno_kept"]) == (c["answers"][0], 1, 1), c


@pytest.mark.parametrize("case", ["cond-broadcast", "futex-wake-two"])
def test_a_broadcast_wakes_both_waiters(cases, case):
    """A broadcast, and a futex wake of two: each waiter's hand-off, with its own probe answer."""
    c = cases[case]
    assert sorted(w["tid"] for w in c["wakes"]) == sorted(c["waiters"]), c
    assert {w["by"] for w in c["wakes"]} == {c["signaller"]}, c
    assert len({w["at"] for w in c["wakes"]}) == 1, c  # the one broadcast
    assert all(ordered(w) and w["end"] - w["start"] >= WORK_NS for w in c["wakes"]), c
    answer = dict(zip(c["waiters"], c["answers"]))
    assert all(w["py"] == answer[w["tid"]] for w in c["wakes"]), c
    assert c["probed"] == 2 and c["errno_kept"] == 1, c


@pytest.mark.parametrize("case,rc", [
    ("before-start", 0),                # a hand-off before sbw_start
    ("cond-timeout", errno.ETIMEDOUT),  # timed out, another thread's signal inside the wait
    ("futex-timeout", errno.ETIMEDOUT), # a futex wait that ran out
    ("sem-available", 0),               # posted before: taken at once, no sleep
])
def test_waits_that_are_no_handoff(cases, case, rc):
    """No hand-off, and the probe never asked."""
    c = cases[case]
    assert c["rc"] == rc and c["wakes"] == [] and c["probed"] == 0, c


# ---- C++ ----

def test_std_condition_variable_is_a_cond_handoff():
    """libstdc++'s wait() (pthread_cond_wait) and wait_for() on the steady clock (inline:
    pthread_cond_clockwait), notified by notify_one() (pthread_cond_signal)."""
    r = subprocess.run([CXX], env=dict(os.environ, LD_PRELOAD=WAITS_LIB), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    cases = [json.loads(x) for x in r.stdout.splitlines()]
    assert [c["case"] for c in cases] == ["wait", "wait_for"], cases
    for c in cases:
        assert c["wakes"] == [{"tid": c["waiter"], "by": c["notifier"], "obj": "cond"}], c


# ---- Python ----

def interpreters():
    """This Python and the first python3 on PATH, when it is another (pyenv's holds the
    interpreter in libpython, Debian's in the executable: the GIL rule finds either)."""
    found = {}
    for py in (sys.executable, shutil.which("python3")):
        if not py:
            continue
        r = subprocess.run([py, "-c", "import sys; print(sys.executable)"],
                           capture_output=True, text=True)
        if r.returncode == 0:
            found.setdefault(os.path.realpath(r.stdout.strip()), py)
    return sorted(found)


def run_python(py, mode, keep_gil=False):
    env = dict(os.environ, LD_PRELOAD=WAITS_LIB)
    env.pop("SYNCBENCH_WAITS_KEEP_GIL", None)
    if keep_gil:
        env["SYNCBENCH_WAITS_KEEP_GIL"] = "1"
    r = subprocess.run([py, PY_HANDOFFS, mode], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize("py", interpreters())
def test_a_queue_get_woken_by_a_put_is_a_sem_handoff(py):
    out = run_python(py, "queue")
    # the get's wait for the put: no length asked of it, which a loaded host shortens (the get
    # may start late in the producer's work)
    handoff = (out["main"], out["producer"], "sem")
    sem = [w for w in out["wakes"] if (w["tid"], w["by"], w["obj"]) == handoff]
    assert sem, out
    assert ordered(max(sem, key=lambda w: w["end"] - w["start"])), out
    # whatever else the get waited for (the queue's lock), only the producer ended it
    assert {(x["tid"], x["by"], x["obj"]) for x in out["wakes"]} == \
        {(out["main"], out["producer"], "sem")}, out


@pytest.mark.parametrize("py", interpreters())
def test_the_gil_is_no_handoff(py):
    """Two busy threads hand the GIL to each other about every 5 ms: with the rule, no "cond"
    wake; with it off (SYNCBENCH_WAITS_KEEP_GIL=1), the same run shows them, so the rule is what
    removes them."""
    out = run_python(py, "gil")
    assert [w for w in out["wakes"] if w["obj"] == "cond"] == [], out
    kept = run_python(py, "gil", keep_gil=True)
    spinners = set(kept["spinners"])
    gil = [w for w in kept["wakes"] if w["obj"] == "cond" and w["tid"] in spinners]
    assert gil and all(ordered(w) for w in gil), kept


# ---- the launcher ----

def audit(*args, extra_env=None, binary=BIN):
    """`syncbench audit` on fake_cuda's CUPTI; LD_PRELOAD, SYNCBENCH_WAITS_KEEP_GIL and what
    extra_env names None left out."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    old = env.get("LD_LIBRARY_PATH")
    env["LD_LIBRARY_PATH"] = str(FAKE_CUPTI) + (":" + old if old else "")
    # no calibration: its run of a real CUDA under the stand-in CUPTI is slow on a busy GPU
    env["SYNCBENCH_ACTIVITY_CALIBRATE"] = "0"
    for k, v in (extra_env or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return subprocess.run([binary, "audit", *map(str, args)], capture_output=True, text=True,
                          env=env, timeout=120)


def records(keep):
    (path,) = keep.glob("proc-*.jsonl")
    return [json.loads(x) for x in path.read_text().splitlines()]


def printed(r):
    """(LD_PRELOAD as fake_cuda saw it or None, its main thread, its waiter)"""
    lines = r.stdout.splitlines()
    preload = next(x for x in lines if x.startswith("LD_PRELOAD"))
    main, waiter = next(x for x in lines if x.startswith("tids ")).split()[1:]
    return (preload[len("LD_PRELOAD="):] if "=" in preload else None), int(main), int(waiter)


@pytest.mark.parametrize("option", ["default", "--gpu-activity", "--trace", "--no-python-gpu"])
def test_the_handoff_is_recorded(tmp_path, option):
    """In the default mode (for the Python line a runtime's thread syncs for), with
    --gpu-activity and --trace, which implies it (for the replay), also with --no-python; the
    waiter runs no Python: no "py"."""
    keep = tmp_path / "recs"
    chosen = {"default": (), "--gpu-activity": (option,),
              "--trace": (option, tmp_path / "trace.json"),
              "--no-python-gpu": ("--no-python", "--gpu-activity")}[option]
    r = audit("-q", *chosen, "--keep", keep, "--", FAKE, "handoff", extra_env={})
    assert r.returncode == 0, r.stderr
    preload, main, waiter = printed(r)
    assert preload == os.path.realpath(WAITS_LIB), r.stdout
    recs = records(keep)
    proc, end = recs[0], recs[-1]
    assert proc["t"] == "proc" and proc["waits"] == 1, proc
    assert end["t"] == "end" and end["wakes_lost"] == 0, end
    (w,) = [x for x in recs if x["t"] == "wake"]
    assert (w["tid"], w["by"], w["obj"]) == (waiter, main, "cond"), w
    assert ordered(w) and w["end"] - w["start"] >= WORK_NS, w
    assert "py" not in w, w
    # on CUPTI's clock (the fake one reads CLOCK_MONOTONIC, not the library's CLOCK_REALTIME)
    assert proc["clock_ns"] <= w["start"] and w["end"] <= end["clock_ns"], (proc, w, end)


def test_no_python_alone_preloads_nothing(tmp_path):
    """The default mode with --no-python: no Python line to name, no replay: nothing preloaded."""
    keep = tmp_path / "recs"
    r = audit("-q", "--no-python", "--keep", keep, "--", FAKE, "handoff")
    assert r.returncode == 0, r.stderr
    assert printed(r)[0] is None, r.stdout
    recs = records(keep)
    assert recs[0]["waits"] == 0 and not [x for x in recs if x["t"] == "wake"], recs


def marked_line(path, marker):
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if marker in t)


def test_a_woken_python_threads_stack_is_its_wake_records_py(tmp_path):
    """tests/waits/py_waiter.py in the default mode: the main thread sleeps in sem_wait until a
    thread without Python posts, then in a futex wait until a Python thread wakes it; each wake
    record's "py" names a pystack record whose innermost frame is the line it slept at."""
    keep = tmp_path / "recs"
    r = audit("-q", "--keep", keep, "--", sys.executable, PY_WAITER)
    assert r.returncode == 0, r.stderr
    main = json.loads(r.stdout)["main"]
    recs = records(keep)
    stacks = {x["id"]: x["frames"] for x in recs if x["t"] == "pystack"}
    wakes = [x for x in recs if x["t"] == "wake" and x["tid"] == main and
             x["end"] - x["start"] >= WORK_NS]
    for obj, marker in (("sem", "# WAIT-SEM"), ("futex", "# WAIT-FUTEX")):
        (w,) = [x for x in wakes if x["obj"] == obj]
        assert w["by"] != main and ordered(w), w
        file, _, line = stacks[w["py"]][0]
        assert (file, line) == (str(PY_WAITER), marked_line(PY_WAITER, marker)), (w, stacks)
    # recorded before the wake that names it
    names = [x.get("id") if x["t"] == "pystack" else x.get("py") for x in recs]
    assert all(names.index(w["py"]) < recs.index(w) for w in wakes), recs


def test_a_woken_thread_is_never_named_by_the_writer(tmp_path):
    """The probe runs inside the wait that woke the thread (an allocator's futex lock among
    them): it reads the frames raw or names nothing, never through CPython's traceback writer
    (a pipe, allocations). With the raw reader off (SYNCBENCH_PY_WALK=0) the wakes carry no
    "py", while the writer still names the calls' stacks."""
    keep = tmp_path / "recs"
    r = audit("-q", "--keep", keep, "--", sys.executable, PY_WAITER,
              extra_env={"SYNCBENCH_PY_WALK": "0"})
    assert r.returncode == 0, r.stderr
    main = json.loads(r.stdout)["main"]
    wakes = [x for x in records(keep) if x["t"] == "wake" and x["tid"] == main]
    assert wakes and all("py" not in x for x in wakes), wakes


def test_the_users_ld_preload_is_kept(tmp_path):
    """The library goes first, the user's list after it, as given."""
    keep = tmp_path / "recs"
    mine = f"{FAKE_CUPTI}/libcupti.so.13"
    # the launcher has it too: a sanitized one (make test-asan) must let its runtime come second
    asan = ":".join(x for x in (os.environ.get("ASAN_OPTIONS"), "verify_asan_link_order=0") if x)
    r = audit("-q", "--gpu-activity", "--keep", keep, "--", FAKE, "handoff",
              extra_env={"LD_PRELOAD": mine, "ASAN_OPTIONS": asan})
    assert r.returncode == 0, r.stderr
    assert printed(r)[0] == f"{os.path.realpath(WAITS_LIB)}:{mine}", r.stdout
    assert [x for x in records(keep) if x["t"] == "wake"], r.stdout


@pytest.mark.parametrize("beside", [True, False])
def test_the_library_is_found_beside_the_injection_library(tmp_path, beside):
    """A copy of the binary and the injection library, with SYNCBENCH_WAITS_LIB unset: the
    waits library beside them is preloaded; missing, one line says so and the audit goes on
    without it."""
    lone = tmp_path / "bin"
    lone.mkdir()
    binary = lone / "syncbench"
    shutil.copy(BIN, binary)
    audit_lib = os.environ.get("SYNCBENCH_AUDIT_LIB", str(pathlib.Path(BIN).parent /
                                                          "libsyncbench_audit.so"))
    shutil.copy(audit_lib, lone / "libsyncbench_audit.so")
    if beside:
        shutil.copy(WAITS_LIB, lone / "libsyncbench_waits.so")
    keep = tmp_path / "recs"
    r = audit("-q", "--gpu-activity", "--keep", keep, "--", FAKE, "handoff", binary=binary,
              extra_env={"SYNCBENCH_WAITS_LIB": None, "SYNCBENCH_AUDIT_LIB": None})
    assert r.returncode == 0, r.stderr
    line = (f"syncbench: audit: libsyncbench_waits.so not found beside "
            f"{lone}/libsyncbench_audit.so: hand-offs between threads will not be recorded")
    assert (line in r.stderr.splitlines()) != beside, r.stderr
    preload = printed(r)[0]
    assert preload == (f"{lone}/libsyncbench_waits.so" if beside else None), r.stdout
    assert records(keep)[0]["waits"] == int(beside)


def test_a_waits_library_named_that_is_not_there_is_one_line(tmp_path):
    """Named and not there: one line and exit 3, as for the injection library, before the
    calibration and before CMD runs (nothing is kept)."""
    r = audit("-q", "--gpu-activity", "--keep", tmp_path / "recs", "--", FAKE, "handoff",
              extra_env={"SYNCBENCH_WAITS_LIB": str(tmp_path / "nowhere.so")})
    assert r.returncode == 3, r.stderr
    assert r.stderr.splitlines() == [
        f"syncbench: audit: waits library {tmp_path}/nowhere.so (SYNCBENCH_WAITS_LIB): No such "
        "file or directory"], r.stderr
    assert r.stdout == ""  # FAKE never ran
    assert not (tmp_path / "recs").exists()


def test_the_cost_program_runs():
    """tests/waits/waits_cost.c, whose figures docs/audit.md quotes: it runs and prints each
    call's time (no time is compared with anything)."""
    r = subprocess.run([str(PROGRAMS / "waits_cost")], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    rows = [json.loads(x) for x in r.stdout.splitlines()]
    assert {(x["mode"], x["call"]) for x in rows} == {
        (m, c) for m in ("plain", "inert", "recording")
        for c in ("signal", "post-wait", "syscall", "futex-wake")} | {
        (m, c) for m in ("inert", "recording") for c in ("syscall-added", "futex-wake-added")} | {
        ("recording", "wait-added")}
    assert all(x["ns"] > 0 for x in rows if not x["call"].endswith("-added")), rows
