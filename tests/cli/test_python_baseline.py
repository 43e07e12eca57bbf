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
                                         "tid": 1, "ctx": 1, "corr": n + 1, "start": 1000 * n,
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
    assert text.startswith("[syncbench]\nversion = 1\nper = run\nrange = \nskip_first = 0\n\n"
                           "[site.1]\nfile = test_inner.py\nfunction = helper\n"
                           "text = fakecuda.sync()\n"
                           "operation = explicit sync: stream (cudaStreamSynchronize)\n"
                           "library_line = \nline = 5\nbudget = 2\n"), text
    assert "[site.2]\nfile = test_inner.py\nfunction = test_known\n" in text, text
    assert "[site.3]" not in text, text  # the unmarked test's is not in it
    r = run_pytest(tree, TESTS.format(extra="pass"), "--syncbench-baseline", str(base))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "3 passed" in r.stdout
    # a note kept across an update; a site gone is dropped, a new one added
    base.write_text(text.replace("note = \n", "note = the helper's two reads: issue 12\n", 1))
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
    (("version = 1", "version = 2"), "[syncbench] version: must be 1, not '2'"),
    (("per = run", "per = epoch"), "[syncbench] per: must be step or run, not 'epoch'"),
    (("per = run", "per = step"), "[syncbench] per: step: a budget per step of a range, which "
                                  "a test has not; the pytest plugin checks per = run (each "
                                  "test a run)"),
    (("[site.1]", "[site.one]"), "[site.one]: unknown section ([syncbench], [site.N])"),
    (("budget = 1", "budget = 1\nbudget = 2"), "[site.1] budget: given twice (line 15)"),
    (("budget = 1", "budgte = 1"), "[site.1] budgte: unknown key (file, function, text, "
                                   "operation, library_line, line, budget, skip_first, thread, "
                                   "note)"),
    (("function = train_step\n", ""), None),  # no function: allowed (a native site)
    (("file = train.py\n", ""), "[site.1] file: missing or empty"),
    (("[syncbench]\n", ""), "line 1: a key before any [section]"),
    (("thread =", "thread = loader"), "[site.1] thread: 'loader': the pytest plugin counts the "
                                      "test's own thread (empty only)"),
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
