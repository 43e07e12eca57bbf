"""Issue 46 part 3 on the CPU: no_syncs(allow=[sites or libraries]), the pytest plugin's sync
baseline (--syncbench-baseline, --syncbench-update-baseline, the marker's allow and baseline),
and blocks scoped to a thread or an asyncio task. No GPU records here: a stand-in for the
native library (fakecuda.py below, in place of syncbench._native's begin/counts/end) keeps
blocks as the library does (per thread, or every thread) and records each fake blocking call
with its real Python stack, in the library's record format; the real analyzer (`syncbench
audit --from`, beside build/libsyncbench_audit.so) names the sites, as on a GPU."""
import os
import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import ROOT

PKG = ROOT / "python"
LIB = os.environ.get("SYNCBENCH_AUDIT_LIB", str(ROOT / "build" / "libsyncbench_audit.so"))

FAKE = '''
"""Stands in for syncbench._native's blocks: per thread or every thread, as blocks.c."""
import json, os, sys, threading, traceback
from syncbench import _native

SITE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "python3.12",
                    "site-packages")
sys.path.insert(0, SITE)
_native._lib_path = LIB  # the analyzer beside it


class Classes:
    n, names, blocking = 3, ["none", "sync-stream", "poll"], [False, True, False]


_native.classes = lambda: Classes
_native.attach = lambda: None
_lock = threading.Lock()
_blocks, _next, _pystacks = {}, [0], {}
opened = []  # (all_threads) of each native block opened


def begin(all_threads):
    with _lock:
        _next[0] += 1
        _blocks[_next[0]] = {"all": all_threads, "tid": threading.get_ident(),
                             "counts": [0, 0, 0], "calls": []}
        opened.append(all_threads)
        return _next[0]


def _visible(b):
    blk = _blocks.get(b)
    if blk is None or not (blk["all"] or blk["tid"] == threading.get_ident()):
        raise AssertionError("a block closed, or of another thread")
    return blk


def counts(b):
    return list(_visible(b)["counts"])


def end(b):
    blk = _visible(b)
    del _blocks[b]
    lines = [{"t": "proc", "v": 1, "pid": os.getpid(), "ppid": 1, "rank": -1, "local_rank": -1,
              "cmd": "(a syncbench block)", "clock_ns": 0, "mono_ns": 0, "mode": "count",
              "symsize": 1}]
    ids = sorted({c["py"] for c in blk["calls"]})
    lines += [{"t": "pystack", "id": i, "frames": _pystacks[i]} for i in ids]
    lines += blk["calls"]
    lines.append({"t": "end", "clock_ns": 10**9, "mono_ns": 10**9, "why": "exit", "dropped": 0})
    stream = None
    if blk["calls"]:
        stream = ("\\n".join(json.dumps(o, separators=(",", ":")) for o in lines) + "\\n").encode()
    return blk["counts"][1], list(blk["counts"]), stream


_native.begin, _native.counts, _native.end = begin, counts, end


def tid():
    """The calling thread's id in the records: 1 for the main thread, 100 + N for a thread
    named worker-N (fixed, so that a baseline may name them), else the native id."""
    name = threading.current_thread().name
    if name == "MainThread":
        return 1
    if name.startswith("worker-"):
        return 100 + int(name.split("-")[1])
    return threading.get_native_id()


def sync(poll=False):
    """One blocking call (a poll with poll=True) made by the caller's line."""
    frames = [[f.filename, f.name, f.lineno] for f in reversed(traceback.extract_stack()[:-1])]
    with _lock:
        key = json.dumps(frames)
        py = _pystacks.setdefault(key, len(_pystacks) + 1)
        _pystacks[py] = frames
        me = threading.get_ident()
        for blk in _blocks.values():
            if blk["all"] or blk["tid"] == me:
                blk["counts"][2 if poll else 1] += 1
                if not poll:
                    n = len(blk["calls"])
                    blk["calls"].append({"t": "call", "api": "cudaStreamSynchronize", "dom": "rt",
                                         "tid": tid(), "ctx": 1,
                                         "corr": n + 1, "start": 1000 * n,
                                         "end": 1000 * n + 500, "py": py})
'''

LIBRARY = '''
import fakecuda


def has_unfinished():
    fakecuda.sync()
'''


@pytest.fixture
def tree(tmp_path):
    """A folder with the package's sources, fakecuda.py, a library `transformers` under
    lib/python3.12/site-packages, and a conftest that loads fakecuda."""
    shutil.copytree(PKG / "syncbench", tmp_path / "pkg" / "syncbench")
    (tmp_path / "fakecuda.py").write_text(FAKE.replace("LIB  #", f"{LIB!r}  #"))
    lib = tmp_path / "lib" / "python3.12" / "site-packages" / "transformers" / "generation"
    lib.mkdir(parents=True)
    (lib.parent / "__init__.py").write_text("")
    (lib / "__init__.py").write_text("")
    (lib / "utils.py").write_text(LIBRARY)
    (tmp_path / "conftest.py").write_text("import fakecuda\n")
    return tmp_path


def env_of(tree):
    e = dict(os.environ, PYTHONPATH=f"{tree / 'pkg'}:{tree}", SYNCBENCH_AUDIT_LIB=LIB)
    e.pop("PYTEST_ADDOPTS", None)
    e.pop("GITHUB_ACTIONS", None)
    return e


def run_py(tree, code):
    (tree / "main.py").write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, "main.py"], capture_output=True, text=True,
                          env=env_of(tree), cwd=tree, timeout=120)


def run_pytest(tree, code, *args):
    (tree / "test_inner.py").write_text(textwrap.dedent(code))
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "syncbench.pytest_plugin", "-q",
                           "-p", "no:cacheprovider", "-rf", "--tb=short", *args, "test_inner.py"],
                          capture_output=True, text=True, env=env_of(tree), cwd=tree,
                          timeout=300)


def needs_analyzer():
    if not (pathlib.Path(LIB).parent / "syncbench").is_file():
        pytest.skip("no syncbench binary beside the library: build with make")


# ---- (a) allow=[sites or libraries] ----

def test_allow_by_site_passes_a_known_sync_and_fails_a_new_one(tree):
    needs_analyzer()
    r = run_py(tree, """
        import fakecuda, syncbench

        def step():
            fakecuda.sync()  # the known one

        def other():
            fakecuda.sync()  # a new one

        for allow in (["main.py:step"], ["main.py:5 in step"], ["main.py:5"], ["main.py"],
                      {"main.py:step": 2}):
            with syncbench.no_syncs(allow=allow):
                step()
                step()
            print("passed", allow)
        try:
            with syncbench.no_syncs(allow=["main.py:step"]):
                step()
                other()
        except syncbench.SyncError as e:
            print("failed:", e)
            print([(s.where, n) for s, n in e.disallowed])
        try:
            with syncbench.no_syncs(allow={"main.py:step": 1}):
                step()
                step()
        except syncbench.SyncError as e:
            print("over:", str(e).splitlines()[0])
    """)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.count("passed") == 5, out
    here = str(tree / "main.py")
    assert ("failed: 1 of 2 host-blocking CUDA calls not allowed (allowed main.py:step), on "
            "this thread:") in out, out
    assert f"  {here}:8 in other: fakecuda.sync()  # a new one" in out, out
    assert "in step" not in out.split("failed:")[1].split("over:")[0].split("\n[")[0], out
    assert f"[('{here}:8 in other', 1)]" in out, out
    assert ("over: 1 of 2 host-blocking CUDA calls not allowed (allowed main.py:step x1), on "
            "this thread:") in out, out


def test_allow_by_library_and_by_library_line(tree):
    needs_analyzer()
    r = run_py(tree, """
        import fakecuda, syncbench
        from transformers.generation import utils

        for allow in (["transformers"], ["transformers.generation"],
                      ["transformers/generation/utils.py"],
                      ["transformers/generation/utils.py:has_unfinished"], {"transformers": 1}):
            with syncbench.no_syncs(allow=allow):
                utils.has_unfinished()
            print("passed", allow)
        for allow in (["torch"], ["transformers/generation/other.py"], {"transformers": 0}):
            try:
                with syncbench.no_syncs(allow=allow):
                    utils.has_unfinished()
                print("passed?", allow)
            except syncbench.SyncError as e:
                print("failed", allow, e.disallowed[0][0].library)
        try:
            with syncbench.no_syncs(allow=["transformers"]):
                utils.has_unfinished()
                fakecuda.sync()
        except syncbench.SyncError as e:
            print("own:", [s.where.split("/")[-1] for s, n in e.disallowed])
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("passed ") == 5, r.stdout
    assert "passed?" not in r.stdout, r.stdout
    assert r.stdout.count("failed") == 3, r.stdout
    assert "failed ['torch'] transformers" in r.stdout, r.stdout
    assert "own: ['main.py:21 in <module>']" in r.stdout, r.stdout


@pytest.mark.parametrize("allow,message", [
    ("['']", "an allowed site or library must be a non-empty string, not ''"),
    ("[3]", "an allowed site or library must be a non-empty string, not 3"),
    ("{'a.py': -1}", "the count allowed for 'a.py' must be a whole number >= 0, not -1"),
    ("{'a.py': True}", "the count allowed for 'a.py' must be a whole number >= 0, not True"),
    ("['a.py:x y']", "'a.py:x y' is neither a site (FILE.py, FILE.py:LINE, FILE.py:FUNCTION, "
                     "FILE.py:LINE in FUNCTION) nor a library (a package name)"),
    ("'transformers'", "allow must be a whole number >= 0, a list of sites or libraries, or a "
                       "dict {site or library: count}, not 'transformers'"),
])
def test_bad_allow_entries_are_clear_errors(tree, allow, message):
    r = run_py(tree, f"import syncbench\nsyncbench.no_syncs(allow={allow})\n")
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == f"ValueError: syncbench.no_syncs: {message}"


# ---- (c) scope ----

def test_two_threads_are_counted_apart_with_scope_thread(tree):
    r = run_py(tree, """
        import threading, fakecuda, syncbench

        got = {}
        barrier = threading.Barrier(2)

        def work(name, n):
            with syncbench.count_syncs(scope="thread") as s:
                barrier.wait()
                for _ in range(n):
                    fakecuda.sync()
                barrier.wait()
            got[name] = s.blocking

        ts = [threading.Thread(target=work, args=(k, n)) for k, n in (("a", 1), ("b", 3))]
        with syncbench.count_syncs(scope="process") as every:
            [t.start() for t in ts]
            [t.join() for t in ts]
        print(got["a"], got["b"], every.blocking, every.scope, fakecuda.opened)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "3", "4", "process", "[True,", "False,", "False]"], r.stdout


def test_two_asyncio_tasks_are_counted_apart_with_scope_task(tree):
    r = run_py(tree, """
        import asyncio, fakecuda, syncbench

        async def work(n, other):
            with syncbench.count_syncs(scope="task") as s:
                for _ in range(n):
                    fakecuda.sync()
                    await asyncio.sleep(0)  # the other task runs and syncs here
                print("live", n, s.blocking)
            return s.blocking

        async def noisy():
            for _ in range(10):
                fakecuda.sync()
                await asyncio.sleep(0)

        async def main():
            with syncbench.count_syncs(scope="thread") as thread:
                got = await asyncio.gather(work(2, 0), work(5, 0), noisy())
            print(got[:2], thread.blocking)
            try:
                with syncbench.no_syncs(scope="task"):
                    await asyncio.gather(noisy())  # another task's calls: not this one's
                print("passed")
            except syncbench.SyncError as e:
                print("failed", e)

        asyncio.run(main())
        try:
            syncbench.count_syncs(scope="task").__enter__()
        except RuntimeError as e:
            print(e)
    """)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert "live 2 2" in lines and "live 5 5" in lines, r.stdout
    assert "[2, 5] 17" in lines, r.stdout
    assert "passed" in lines, r.stdout
    assert lines[-1] == ("syncbench.Syncs: scope='task' needs a running asyncio task (open the "
                         "block inside a coroutine)"), r.stdout


def test_a_task_blocks_sites_are_named(tree):
    needs_analyzer()
    r = run_py(tree, """
        import asyncio, fakecuda, syncbench

        async def work():
            with syncbench.no_syncs(scope="task"):
                fakecuda.sync()
                await asyncio.sleep(0)
                fakecuda.sync()

        try:
            asyncio.run(work())
        except syncbench.SyncError as e:
            print(e)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("2 host-blocking CUDA calls (allowed 0), in this task:\n"), r.stdout
    assert f"{tree}/main.py:6 in work: fakecuda.sync()" in r.stdout, r.stdout
    assert f"{tree}/main.py:8 in work: fakecuda.sync()" in r.stdout, r.stdout


@pytest.mark.parametrize("call,message", [
    ("syncbench.no_syncs(scope='loop')", "scope must be 'thread', 'process' or 'task', not "
                                         "'loop'"),
    ("syncbench.no_syncs(scope='thread', all_threads=True)",
     "all_threads=True counts every thread: it cannot go with scope='thread'"),
])
def test_bad_scopes_are_clear_errors(tree, call, message):
    r = run_py(tree, f"import syncbench\n{call}\n")
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == f"ValueError: syncbench.no_syncs: {message}"


# ---- (b) the plugin's baseline ----

TESTS = """
import pytest, fakecuda

def helper():
    fakecuda.sync()

@pytest.mark.no_syncs
def test_known():
    fakecuda.sync()
    {extra}

@pytest.mark.no_syncs
def test_twice():
    helper()
    helper()

def test_unmarked():
    fakecuda.sync()
"""


def test_update_writes_a_baseline_that_then_passes_and_keeps_notes(tree):
    needs_analyzer()
    base = tree / "syncs.ini"
    r = run_pytest(tree, TESTS.format(extra="pass"), "--syncbench-baseline", str(base))
    assert r.returncode == 4, r.stdout + r.stderr
    assert f"syncbench: baseline {base}: not found (write it with " \
           f"--syncbench-update-baseline)" in r.stderr
    r = run_pytest(tree, TESTS.format(extra="pass"), "--syncbench-baseline", str(base),
                   "--syncbench-update-baseline")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"syncbench: wrote the baseline {base}: 2 sites" in r.stdout, r.stdout
    text = base.read_text()
    assert text.startswith("# syncbench sync baseline: written by the pytest plugin "
                           "(--syncbench-update-baseline); edit by hand\n"
                           "[syncbench]\nversion = 1\nper = run\n"
                           "syncs_per_step = 1.5\nblocked_us_per_step = 0.8\n\n"
                           "[site.1]\nfile = test_inner.py\nfunction = helper\n"
                           "text = fakecuda.sync()\n"
                           "operation = explicit sync: stream (cudaStreamSynchronize)\n"
                           "library_line =\nline = 5\nbudget = 2\n\n"), text
    assert "[site.2]\nfile = test_inner.py\nfunction = test_known\n" in text, text
    assert "[site.3]" not in text, text  # the unmarked test's is not in it
    r = run_pytest(tree, TESTS.format(extra="pass"), "--syncbench-baseline", str(base))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 passed" in r.stdout
    # a note kept across an update; a site gone is dropped, a new one added
    base.write_text(text.replace("budget = 2\n", "budget = 2\nnote = the helper's two reads: "
                                 "issue 12\n", 1))
    r = run_pytest(tree, TESTS.format(extra="fakecuda.sync()  # new"), "--syncbench-baseline",
                   str(base), "--syncbench-update-baseline")
    assert r.returncode == 0, r.stdout + r.stderr
    text = base.read_text()
    assert "note = the helper's two reads: issue 12\n" in text, text
    assert "text = fakecuda.sync()  # new" in text and "[site.3]" in text, text
    assert not list(tree.glob(".syncbench-baseline-*")), "a temporary file was left"


def test_the_baseline_passes_known_and_fails_new_or_over_budget(tree):
    needs_analyzer()
    base = tree / "syncs.ini"
    run_pytest(tree, TESTS.format(extra="pass"), "--syncbench-baseline", str(base),
               "--syncbench-update-baseline")
    # the lines moved: keyed without the line number, it still passes
    moved = "\n\n\n" + TESTS.format(extra="pass")
    r = run_pytest(tree, moved, "--syncbench-baseline", str(base))
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_pytest(tree, TESTS.format(extra="fakecuda.sync()  # new"), "--syncbench-baseline",
                   str(base))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 2 passed" in r.stdout, r.stdout
    assert "FAILED test_inner.py::test_known" in r.stdout, r.stdout
    assert (f"1 of 2 host-blocking CUDA calls not allowed (allowed the baseline {base}), on "
            f"this thread:") in r.stdout, r.stdout
    assert "fakecuda.sync()  # new" in r.stdout, r.stdout
    # over budget: the helper's budget is 2 a test
    r = run_pytest(tree, TESTS.format(extra="helper(); helper(); helper()"),
                   "--syncbench-baseline", str(base))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "FAILED test_inner.py::test_known" in r.stdout, r.stdout
    assert "(1 of its 3 over what is allowed)" in r.stdout, r.stdout
    # the marker's own allow adds to the baseline
    r = run_pytest(tree, TESTS.format(extra="fakecuda.sync()  # new").replace(
        "@pytest.mark.no_syncs\ndef test_known", "@pytest.mark.no_syncs(allow=['test_inner.py:10'])"
        "\ndef test_known"), "--syncbench-baseline", str(base))
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_markers_baseline_and_allow(tree):
    needs_analyzer()
    (tree / "b").mkdir()
    (tree / "b" / "mine.ini").write_text(textwrap.dedent("""\
        [syncbench]
        version = 1
        per = run
        range =
        skip_first = 0

        [site.1]
        file = test_inner.py
        function = test_one
        text = fakecuda.sync()
        operation = explicit sync: stream (cudaStreamSynchronize)
        library_line =
        line = 99
        budget = 1
        skip_first = 0
        thread =
        note = read once
    """))
    r = run_pytest(tree, """
        import pytest, fakecuda
        from transformers.generation import utils

        @pytest.mark.no_syncs(baseline="b/mine.ini")
        def test_one():
            fakecuda.sync()

        @pytest.mark.no_syncs(allow=["transformers"])
        def test_library():
            utils.has_unfinished()

        @pytest.mark.no_syncs(allow={"test_inner.py:test_two": 1})
        def test_two():
            fakecuda.sync()
            fakecuda.sync()
    """)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 2 passed" in r.stdout, r.stdout
    assert "FAILED test_inner.py::test_two" in r.stdout, r.stdout


BASE = """\
[syncbench]
version = 1
per = run
range =
skip_first = 0

[site.1]
file = train.py
function = train_step
text = loss.item()
operation = scalar read: .item()
library_line =
line = 42
budget = 1
skip_first = 0
thread =
note = ...
"""


@pytest.mark.parametrize("change,message", [
    (("budget = 1", "budget = x"), "[site.1] budget: must be a whole number >= 0, not 'x'"),
    (("version = 1", "version = 2"), "[syncbench] version: 2: newer than this syncbench reads "
                                     "(1); update syncbench"),
    (("version = 1", "version = 0"), "[syncbench] version: must be a whole number >= 1, not "
                                     "'0'"),
    (("per = run", "per = epoch"), "[syncbench] per: must be step or run, not 'epoch'"),
    (("per = run", "per = step"), "[syncbench] range: per = step needs a range (the range a "
                                  "step is)"),
    (("[site.1]", "[site.one]"), "[site.one]: unknown section ([syncbench], [site.N])"),
    (("budget = 1", "budget = 1\nbudget = 2"), "[site.1] budget: given twice (line 15)"),
    (("budget = 1", "budgte = 1"), "[site.1] budgte: unknown key (file, function, text, "
                                   "operation, library_line, line, budget, skip_first, thread, "
                                   "note)"),
    (("function = train_step\n", ""), "[site.1] function: missing"),
    (("function = train_step\n", "function =\n"), None),  # empty: a native site
    (("file = train.py\n", ""), "[site.1] file: missing"),
    (("file = train.py\n", "file =\n"), "[site.1] file: empty"),
    (("operation = scalar read: .item()\n", "operation =\n"), "[site.1] operation: empty"),
    (("[syncbench]\n", ""), "line 1: a key before any [section]"),
    (("thread =", "thread = loader"), "[site.1] thread: 'loader': not a thread id (the records "
                                      "name threads by tid)"),
    (("thread =", "thread = 4242"), None),
    (("skip_first = 0\nthread", "skip_first = -1\nthread"),
     "[site.1] skip_first: must be a whole number >= 0, not '-1'"),
    (("per = run\nrange =", "per = step\nrange = train_step"), None),
    (("skip_first = 0\n\n", "skip_first = 2\nsyncs_per_step = 2.5\n\n"), None),
    (("skip_first = 0\n\n", "syncs_per_step = many\n\n"),
     "[syncbench] syncs_per_step: must be a number >= 0, not 'many'"),
    (("note = ...", "note = " + "x" * 200), "line 17: longer than 199 bytes"),
    (("note = ...", "note = a\rb"), "line 17: a carriage return inside a line"),
    (("[site.1]", "[site.0]"), None),
])
def test_a_malformed_baseline_is_a_usage_error(tree, change, message):
    base = tree / "syncs.ini"
    base.write_text(BASE.replace(*change))
    r = run_pytest(tree, "def test_x(): pass\n", "--syncbench-baseline", str(base))
    if message is None:
        assert r.returncode == 0, r.stdout + r.stderr
        return
    assert r.returncode == 4, r.stdout + r.stderr
    assert "passed" not in r.stdout
    lines = [l for l in r.stderr.splitlines() if "syncbench" in l]
    assert lines == [f"ERROR: syncbench: baseline {base}: {message}"], r.stderr


def test_a_markers_malformed_baseline_names_the_test(tree):
    (tree / "bad.ini").write_text(BASE.replace("budget = 1", "budget = -1"))
    r = run_pytest(tree, """
        import pytest
        @pytest.mark.no_syncs(baseline="bad.ini")
        def test_x():
            pass
    """)
    assert r.returncode == 4, r.stdout + r.stderr
    assert (f"test_inner.py::test_x: syncbench: baseline {tree}/bad.ini: [site.1] budget: must "
            f"be a whole number >= 0, not '-1'") in r.stderr, r.stderr


def test_update_needs_the_file(tree):
    r = run_pytest(tree, "def test_x(): pass\n", "--syncbench-update-baseline")
    assert r.returncode == 4
    assert "--syncbench-update-baseline needs --syncbench-baseline FILE" in r.stderr


# ---- (d) the plugin per step of a range, warm-up steps left out, per thread ----

STEPS = """
import pytest, fakecuda, syncbench

def train_step(i, reads):
    {shift}for _ in range(reads):
        fakecuda.sync()  # the loss we log
    if i < 2:
        fakecuda.sync()  # warm-up: only in the first two steps
    {extra}

@pytest.mark.no_syncs({args})
def test_loop():
    fakecuda.sync()  # before the loop: outside every step
    for i in range(6):
        with syncbench.step("train_step"):
            train_step(i, {reads})
"""


def steps_test(args='range="train_step", skip_first=2', reads="1", extra="pass", shift=""):
    return STEPS.format(args=args, reads=reads, extra=extra, shift=shift)


def test_per_step_update_writes_a_file_its_run_passes(tree):
    needs_analyzer()
    base = tree / "syncs.ini"
    r = run_pytest(tree, steps_test(), "--syncbench-baseline", str(base),
                   "--syncbench-update-baseline")
    assert r.returncode == 0, r.stdout + r.stderr
    text = base.read_text()
    # 4 counted steps of one call each: the warm-up's and the loop's outside are left out
    assert ("[syncbench]\nversion = 1\nper = step\nrange = train_step\nskip_first = 2\n"
            "syncs_per_step = 1\n") in text, text
    assert "text = fakecuda.sync()  # the loss we log\n" in text, text
    assert "budget = 1\n" in text and "warm-up" not in text and "[site.2]" not in text, text
    r = run_pytest(tree, steps_test(), "--syncbench-baseline", str(base))
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    # the marker's range and skip_first come from the file when the marker leaves them out
    r = run_pytest(tree, steps_test(args=""), "--syncbench-baseline", str(base))
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr
    # a line inserted above the syncs: the site moved, not new
    r = run_pytest(tree, steps_test(shift="pass\n    "), "--syncbench-baseline", str(base))
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


def test_per_step_a_new_sync_fails_with_its_line(tree):
    needs_analyzer()
    base = tree / "syncs.ini"
    run_pytest(tree, steps_test(), "--syncbench-baseline", str(base),
               "--syncbench-update-baseline")
    r = run_pytest(tree, steps_test(extra="if i == 4: fakecuda.sync()  # new"),
                   "--syncbench-baseline", str(base))
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout
    assert (f"1 step of 'train_step' made host-blocking CUDA calls not allowed (allowed the "
            f"baseline {base}), on this thread; 1 -> 1.25 per step; 4 steps counted, the first "
            f"2 left out:") in out, out
    assert "in train_step: if i == 4: fakecuda.sync()  # new" in out, out
    assert "(not in the baseline: 1 a step, in 1 step)" in out, out
    assert "the loss we log" not in out.split("steps counted")[1], out


def test_per_step_one_to_two_a_step_fails(tree):
    needs_analyzer()
    base = tree / "syncs.ini"
    run_pytest(tree, steps_test(), "--syncbench-baseline", str(base),
               "--syncbench-update-baseline")
    r = run_pytest(tree, steps_test(reads="2 if i == 3 else 1"), "--syncbench-baseline",
                   str(base))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 step of 'train_step' made" in r.stdout, r.stdout
    assert "(over its budget: 2 a step, budget 1, in 1 step)" in r.stdout, r.stdout
    # twice in a warm-up step only: left out
    r = run_pytest(tree, steps_test(reads="2 if i == 1 else 1"), "--syncbench-baseline",
                   str(base))
    assert r.returncode == 0, r.stdout + r.stderr


def test_per_step_warm_up_steps_are_left_out(tree):
    needs_analyzer()
    base = tree / "syncs.ini"
    run_pytest(tree, steps_test(), "--syncbench-baseline", str(base),
               "--syncbench-update-baseline")
    r = run_pytest(tree, steps_test(args="skip_first=0"), "--syncbench-baseline", str(base))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "2 steps of 'train_step' made" in r.stdout and "6 steps counted" in r.stdout, r.stdout
    assert "fakecuda.sync()  # warm-up: only in the first two steps" in r.stdout, r.stdout
    assert "(not in the baseline: 1 a step, in 2 steps)" in r.stdout, r.stdout
    # a site's own skip_first: the warm-up line known, counted from step 0
    warm = ("\n[site.9]\nfile = test_inner.py\nfunction = train_step\n"
            "text = fakecuda.sync()  # warm-up: only in the first two steps\n"
            "operation = explicit sync: stream (cudaStreamSynchronize)\n"
            "budget = {}\nskip_first = 0\nnote = the first steps' check\n")
    text = base.read_text()
    base.write_text(text + warm.format(1))
    r = run_pytest(tree, steps_test(args="skip_first=0"), "--syncbench-baseline", str(base))
    assert r.returncode == 0, r.stdout + r.stderr
    # ... its budget 0: its calls in the two warm-up steps count, though the file skips 2
    base.write_text(text + warm.format(0))
    r = run_pytest(tree, steps_test(), "--syncbench-baseline", str(base))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "2 steps of 'train_step' made" in r.stdout, r.stdout
    assert "(over its budget: 1 a step, budget 0, in 2 steps)" in r.stdout, r.stdout


def test_per_step_no_step_entered_fails(tree):
    needs_analyzer()
    r = run_pytest(tree, """
        import pytest, fakecuda

        @pytest.mark.no_syncs(range="train_step")
        def test_loop():
            fakecuda.sync()
    """)
    assert r.returncode == 1, r.stdout + r.stderr
    assert ("no step of 'train_step' was entered (syncbench.step('train_step') around each "
            "step), on this thread: nothing was checked") in r.stdout, r.stdout


def test_per_step_without_a_baseline_allows_a_count_a_step(tree):
    needs_analyzer()
    code = steps_test(args='allow=1, range="train_step", skip_first=2')
    r = run_pytest(tree, code)
    assert r.returncode == 0, r.stdout + r.stderr
    r = run_pytest(tree, steps_test(args='allow=1, range="train_step", skip_first=2',
                                    reads="2 if i == 5 else 1"))
    assert r.returncode == 1 and "1 step of 'train_step' made" in r.stdout, r.stdout
    assert "(allowed 1)" in r.stdout and "(2 a step, in 1 step)" in r.stdout, r.stdout


def test_per_step_failure_annotates_only_the_new_line(tree):
    needs_analyzer()
    base = tree / "syncs.ini"
    run_pytest(tree, steps_test(), "--syncbench-baseline", str(base),
               "--syncbench-update-baseline")
    code = steps_test(extra="if i == 4: fakecuda.sync()  # new")
    (tree / "test_inner.py").write_text(textwrap.dedent(code))
    env = dict(env_of(tree), GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(tree))
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "syncbench.pytest_plugin", "-q",
                        "-p", "no:cacheprovider", "--syncbench-baseline", str(base),
                        "test_inner.py"], capture_output=True, text=True, env=env, cwd=tree,
                       timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    line = next(i for i, t in enumerate(code.splitlines(), 1) if "# new" in t)
    notes = [x for x in r.stdout.splitlines() if x.startswith("::error")]
    assert len(notes) == 1, r.stdout
    assert notes[0].startswith(f"::error file=test_inner.py,line={line},title=syncbench "
                               f"no_syncs%3A test_inner.py%3A%3Atest_loop::1 blocking call "
                               f"(sync-stream)"), notes


def test_per_thread_sites_count_their_threads_calls(tree):
    needs_analyzer()
    site = ("[site.{n}]\nfile = test_inner.py\nfunction = read\ntext = fakecuda.sync()\n"
            "operation = explicit sync: stream (cudaStreamSynchronize)\nbudget = {budget}\n"
            "{thread}")
    code = """
        import threading, pytest, fakecuda

        def read():
            fakecuda.sync()

        def work():
            read()
            read()

        @pytest.mark.no_syncs(scope="process", baseline="t.ini")
        def test_threads():
            read()
            t = threading.Thread(target=work, name="worker-1")
            t.start()
            t.join()
    """

    def gate(*sites):
        text = "[syncbench]\nversion = 1\nper = run\n"
        for n, (thread, budget) in enumerate(sites, 1):
            text += "\n" + site.format(n=n, budget=budget,
                                       thread=f"thread = {thread}\n" if thread else "")
        (tree / "t.ini").write_text(text)
        return run_pytest(tree, code)

    assert gate(("", 3)).returncode == 0
    r = gate(("", 2))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 of 3 host-blocking CUDA calls not allowed" in r.stdout, r.stdout
    # the calls of several threads are named by thread: thread 1's took the budget first
    assert "sync-stream x2 on thread 101: " in r.stdout, r.stdout
    assert "(1 of its 2 over what is allowed)" in r.stdout, r.stdout
    r = gate(("1", 1), ("101", 2))
    assert r.returncode == 0, r.stdout + r.stderr
    r = gate(("1", 2), ("101", 1))
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 of 3 host-blocking CUDA calls not allowed" in r.stdout, r.stdout
    assert "(1 of its 2 over what is allowed)" in r.stdout, r.stdout
    # a thread's own site takes its calls; the site of every thread takes the others'
    r = gate(("101", 2), ("", 1))
    assert r.returncode == 0, r.stdout + r.stderr
    r = gate(("101", 1), ("", 2))
    assert r.returncode == 1, r.stdout + r.stderr


def test_per_step_in_two_threads_each_step_apart(tree):
    needs_analyzer()
    code = """
        import threading, pytest, fakecuda, syncbench

        def step(n):
            with syncbench.step("s"):
                for _ in range(n):
                    fakecuda.sync()

        def work(n):
            for _ in range(3):
                step(n)

        @pytest.mark.no_syncs(allow=2, range="s", scope="{scope}")
        def test_threads():
            ts = [threading.Thread(target=work, args=(n,), name=f"worker-{{n}}")
                  for n in (1, 2)]
            [t.start() for t in ts]
            [t.join() for t in ts]
            work(1)
    """
    r = run_pytest(tree, code.format(scope="process"))
    assert r.returncode == 0, r.stdout + r.stderr  # at most 2 in any one step
    r = run_pytest(tree, code.format(scope="process").replace("(1, 2)", "(1, 3)"))
    assert r.returncode == 1 and "3 steps of 's' made" in r.stdout, r.stdout
    assert "9 steps counted" in r.stdout, r.stdout
    # scope thread: the test's own steps only (the workers' are not its thread's)
    r = run_pytest(tree, code.format(scope="thread").replace("(1, 2)", "(1, 3)"))
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("args,message", [
    ("per='loop'", "per must be 'run' or 'step', not 'loop'"),
    ("range=3", "range must be a step's name (a non-empty string), not 3"),
    ("range='s', skip_first=-1", "skip_first must be a whole number >= 0, not -1"),
    ("range='s', skip_first=True", "skip_first must be a whole number >= 0, not True"),
    ("per='run', range='s'", "per='run' counts the whole test: range= is for per='step'"),
    ("per='step'", "per='step' needs a range: the marker's range=NAME, or a baseline with "
                   "per = step"),
])
def test_bad_step_arguments_are_usage_errors(tree, args, message):
    r = run_pytest(tree, f"""
        import pytest
        @pytest.mark.no_syncs({args})
        def test_x():
            pass
    """)
    assert r.returncode == 4, r.stdout + r.stderr
    assert f"test_inner.py::test_x: @pytest.mark.no_syncs: {message}" in r.stderr, r.stderr


def test_one_file_holds_one_way_of_counting(tree):
    r = run_pytest(tree, """
        import pytest
        @pytest.mark.no_syncs(range="s")
        def test_a():
            pass
        @pytest.mark.no_syncs
        def test_b():
            pass
    """, "--syncbench-baseline", str(tree / "s.ini"), "--syncbench-update-baseline")
    assert r.returncode == 4, r.stdout + r.stderr
    assert (f"--syncbench-update-baseline: {tree}/s.ini holds one way of counting: "
            f"test_inner.py::test_a counts per step of 's' (skip_first 0), test_inner.py::test_b "
            f"per run (give one of them a baseline=FILE of its own)") in r.stderr, r.stderr
    assert not (tree / "s.ini").exists()


def test_update_keeps_threads_notes_and_skips_and_writes_marker_files(tree):
    needs_analyzer()
    (tree / "b").mkdir()
    mine = tree / "b" / "mine.ini"
    mine.write_text("[syncbench]\nversion = 1\nper = step\nrange = train_step\nskip_first = 2\n"
                    "\n[site.1]\nfile = test_inner.py\nfunction = train_step\n"
                    "text = fakecuda.sync()  # the loss we log\n"
                    "operation = explicit sync: stream (cudaStreamSynchronize)\nbudget = 5\n"
                    "skip_first = 3\nthread = 1\nnote = the loss, main thread\n"
                    "\n[site.2]\nfile = gone.py\nfunction = f\ntext = x\noperation = y\n"
                    "budget = 1\n")
    session = tree / "s.ini"
    r = run_pytest(tree, steps_test(args='baseline="b/mine.ini"'), "--syncbench-baseline",
                   str(session), "--syncbench-update-baseline")
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"syncbench: wrote the baseline {mine}: 1 site" in r.stdout, r.stdout
    text = mine.read_text()
    assert "per = step\nrange = train_step\nskip_first = 2\n" in text, text
    assert ("budget = 1\nskip_first = 3\nthread = 1\nnote = the loss, main thread\n") in text, text
    assert "gone.py" not in text and "[site.2]" not in text, text
    # the session's file: no marked test writes to it, so it holds no site
    assert "[site." not in session.read_text()
