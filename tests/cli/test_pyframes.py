"""The injection library's Python-frame reader (inject/pyframes.c) without a GPU:
build/tests/libpyframes_probe.so holds it alone; a Python program loads it with ctypes (which
releases the GIL around the call, as torch does inside .item()) and calls sbp_capture() where a
blocking CUDA call would be. Asserted: the exact file, function and line of every frame, from
the main thread, worker threads and a spawned child; deep stacks; non-ASCII file and function
names; one record per distinct stack; no descriptor or memory growth over many threads and
10 000 captures. The raw reader (inject/pywalk.c, inject/pyoffsets.c) on every CPython found here
(interpreters(): PYFRAMES_PYTHONS adds more), each version a test id, 3.9 to 3.14 and 3.14t
skipped by name where absent: the offsets CPython publishes read from 3.13 on, their damage
falling back to the table (3.13) or said (later), a newer version refused where its offsets
moved, and the proc record's "pyread" under syncbench audit."""
import glob
import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import BIN, ROOT, require_built, run

PROBE = str(ROOT / "build" / "tests" / "libpyframes_probe.so")

HEADER = textwrap.dedent("""\
    import ctypes, json, os, sys, threading
    lib = ctypes.CDLL(sys.argv[1])
    assert lib.sbp_open(sys.argv[2].encode()) == 0
    def flush_and_print(x):
        lib.sbp_flush()
        print(json.dumps(x))
    """)


@pytest.fixture(scope="module", autouse=True)
def probe_built():
    if not os.access(PROBE, os.R_OK):
        pytest.fail(f"{PROBE} not built; run make test-programs")


def run_py(tmp_path, body, name="prog.py", python=sys.executable, env=None, header=HEADER):
    """Runs header + body; returns (its last stdout line as JSON, {id: frames})."""
    prog = tmp_path / name
    prog.write_text(header + textwrap.dedent(body), encoding="utf-8")
    recs = tmp_path / "recs"
    recs.mkdir(exist_ok=True)
    r = subprocess.run([python, str(prog), PROBE, str(recs)], capture_output=True,
                       text=True, timeout=300, cwd=tmp_path, env=env)
    assert r.returncode == 0, r.stderr
    files = sorted(recs.glob("proc-*.jsonl"))
    # the pystack writer held to the record table (src/record/schema.c), as a writer must keep it
    if files:
        check = subprocess.run([BIN, "__record-schema", "--check", *map(str, files)],
                               capture_output=True, text=True, timeout=60)
        assert check.returncode == 0, check.stdout + check.stderr
    stacks = {}
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if rec["t"] == "pystack":
                stacks[(f.name, rec["id"])] = [tuple(fr) for fr in rec["frames"]]
    return json.loads(r.stdout.splitlines()[-1]), stacks, prog


def line_of(prog, marker):
    for i, text in enumerate(prog.read_text(encoding="utf-8").splitlines(), 1):
        if marker in text:
            return i
    raise AssertionError(marker)


def one_file(stacks):
    names = {k[0] for k in stacks}
    assert len(names) == 1, names
    return {k[1]: v for k, v in stacks.items()}


def test_main_thread_and_worker_thread_lines(tmp_path):
    out, stacks, prog = run_py(tmp_path, """\
        def inner():
            return lib.sbp_capture()  # CAPTURE
        def outer():
            return inner()  # OUTER
        ids = [outer()]  # MAIN
        t = threading.Thread(target=lambda: ids.append(outer()))  # WORKER
        t.start(); t.join()
        flush_and_print(ids)
        """)
    stacks = one_file(stacks)
    main, worker = out
    assert main >= 0 and worker >= 0 and main != worker
    p = str(prog)
    cap, outer, mline, wline = (line_of(prog, m) for m in ("# CAPTURE", "# OUTER", "# MAIN",
                                                           "# WORKER"))
    assert stacks[main] == [(p, "inner", cap), (p, "outer", outer), (p, "<module>", mline)]
    w = stacks[worker]
    assert w[:3] == [(p, "inner", cap), (p, "outer", outer), (p, "<lambda>", wline)]
    assert all("threading.py" in f[0] for f in w[3:]) and len(w) > 3, w


def test_one_record_per_distinct_stack(tmp_path):
    out, stacks, prog = run_py(tmp_path, """\
        def f():
            return lib.sbp_capture()
        ids = [f() for _ in range(100)] + [lib.sbp_capture()]
        flush_and_print(ids)
        """)
    stacks = one_file(stacks)
    assert len(set(out[:100])) == 1 and out[100] != out[0]
    assert len(stacks) == 2


def test_deep_stack_and_non_ascii_names(tmp_path):
    """200 frames deep (CPython's writer keeps the innermost 100); a file and a function named
    in Greek come back as UTF-8."""
    out, stacks, prog = run_py(tmp_path, """\
        def λόγος(n):
            if n == 0:
                return lib.sbp_capture()  # DEEP
            return λόγος(n - 1)
        sys.setrecursionlimit(1000)
        flush_and_print([λόγος(200)])
        """, name="πρόγραμμα.py")
    frames = one_file(stacks)[out[0]]
    assert len(frames) == 100
    assert frames[0] == (str(prog), "λόγος", line_of(prog, "# DEEP"))
    assert all(f[1] == "λόγος" for f in frames)


def test_spawned_child_records_its_own_stack(tmp_path):
    out, stacks, prog = run_py(tmp_path, """\
        import multiprocessing as mp
        def child(d):
            lib2 = ctypes.CDLL(sys.argv[1])
            assert lib2.sbp_open(d.encode()) == 0
            lib2.sbp_capture()  # CHILD
            lib2.sbp_flush()
        if __name__ == "__main__":
            p = mp.get_context("spawn").Process(target=child, args=(sys.argv[2],))
            p.start(); p.join()
            flush_and_print([p.exitcode, p.pid])
        """)
    code, pid = out
    assert code == 0
    child = [v for k, v in stacks.items() if k[0] == f"proc-{pid}.jsonl"]
    assert len(child) == 1
    assert child[0][0] == (str(prog), "child", line_of(prog, "# CHILD"))


def test_no_descriptor_or_memory_growth(tmp_path):
    """300 threads that each capture once and end: their pipes are closed (the last thread's two
    descriptors may still be open while it ends); 10 000 captures on one thread: the process
    does not grow (RSS within 2 MB)."""
    out, stacks, prog = run_py(tmp_path, """\
        def fds():
            return len(os.listdir("/proc/self/fd"))
        def rss_kb():
            with open("/proc/self/status") as f:
                return int([l for l in f if l.startswith("VmRSS")][0].split()[1])
        lib.sbp_capture()
        before = fds()
        for _ in range(300):
            t = threading.Thread(target=lib.sbp_capture)
            t.start(); t.join()
        after_threads = fds()
        for _ in range(1000):
            lib.sbp_capture()
        rss0 = rss_kb()
        for _ in range(10000):
            lib.sbp_capture()
        flush_and_print([before, after_threads, rss0, rss_kb()])
        """)
    before, after_threads, rss0, rss1 = out
    assert after_threads <= before + 2, out
    assert rss1 - rss0 < 2048, out


def test_descriptor_closed_by_the_program_is_made_anew(tmp_path):
    """A program that closes every descriptor it does not know (ours included) and opens a
    file that reuses the number: the capture must not write into that file."""
    out, stacks, prog = run_py(tmp_path, """\
        lib.sbp_capture()
        mine = sorted(int(x) for x in os.listdir("/proc/self/fd"))
        for fd in mine:
            try:
                if fd > 2 and os.readlink(f"/proc/self/fd/{fd}").startswith("/memfd:"):
                    os.close(fd)
            except FileNotFoundError:  # listdir's own descriptor
                pass
        with open("victim.txt", "w+") as f:
            f.write("keep")
            f.flush()
            i = lib.sbp_capture()
            f.seek(0)
            flush_and_print([i, f.read()])
        """)
    i, text = out
    assert text == "keep"
    assert i >= 0


# The versions the raw reader is held to (issue 48): each is a test of its own, skipped where
# no such Python is found here.
WANTED = [f"3.{m}" for m in range(9, 15)] + ["3.14t"]
PROBE_VERSION = ("import sys, sysconfig; ft = 't' if sysconfig.get_config_var('Py_GIL_DISABLED') "
                 "else ''; print('%d.%d.%d' % sys.version_info[:3] + ft)")


def interpreters():
    """Every CPython 3.9 or later found here, one per version ("3.13.0", "3.14.3t" for a
    free-threaded build): this one, pyenv's, python3.N and python3.Nt on the PATH, and those
    PYFRAMES_PYTHONS names (colon-separated; CI and a developer add theirs there).
    {version: path}."""
    found = {}
    extra = [p for p in os.environ.get("PYFRAMES_PYTHONS", "").split(":") if p]
    cands = [sys.executable] + extra + sorted(glob.glob(os.path.expanduser(
        "~/.pyenv/versions/3.*/bin/python3"))) + [shutil.which(f"python3.{m}{t}")
                                                  for m in range(9, 30) for t in ("", "t")]
    for c in cands:
        if not c or not os.access(c, os.X_OK):
            continue
        r = subprocess.run([c, "-c", PROBE_VERSION], capture_output=True, text=True)
        if r.returncode == 0 and tuple(map(int, r.stdout.split(".")[:2])) >= (3, 9):
            found.setdefault(r.stdout.strip(), c)
    return found


def minor_of(version):
    return int(version.rstrip("t").split(".")[1])


def free_threaded(version):
    return version.endswith("t")


PYTHONS = interpreters()


def versions(select=lambda v: True):
    """A test per Python found that select takes, and a skipped one per wanted version not
    found: the test ids list which ran."""
    params = [pytest.param(v, id=v) for v in sorted(PYTHONS, key=lambda v: (
        minor_of(v), v)) if select(v)]
    for want in WANTED:
        have = [v for v in PYTHONS if minor_of(v) == minor_of(want) and
                free_threaded(v) == free_threaded(want)]
        if not have and select(want):
            params.append(pytest.param(want, id=want, marks=pytest.mark.skip(
                reason=f"no CPython {want} here")))
    return params


GIL_BUILDS = versions(lambda v: not free_threaded(v))
WITH_OFFSETS = versions(lambda v: not free_threaded(v) and minor_of(v) >= 13)


@pytest.mark.parametrize("version", GIL_BUILDS)
def test_raw_reader_counts_frames_and_keys_sites(tmp_path, version):
    """The raw reader (inject/pywalk.c) with each version's layout: the frames it counts are
    those Python itself sees (through generators, a C function calling back into Python, a
    worker thread; the innermost 100 of a deeper stack, marked truncated), and its key tells
    the sites apart: one key for one site in a loop, another for another line, another for the
    same line reached from another caller."""
    out, _, _ = run_py(tmp_path, """\
        import traceback
        def walk():
            k = (ctypes.c_uint64 * 2)()
            n = lib.sbp_walk(k)
            return [n, len(traceback.extract_stack()), list(k)]
        def nest(d):
            return nest(d - 1) if d else walk()
        def gen():
            yield walk()
        loop = [walk() for _ in range(3)]
        other = walk()
        nested = nest(5)
        nested_other_caller = (lambda: nest(5))()
        in_gen = next(gen())
        via_c = sorted([1, 2], key=lambda x: walk()[0] if x == 1 else 0) and walk()
        via_map = list(map(lambda _: walk(), [0]))[0]
        sys.setrecursionlimit(1000)
        deep = nest(150)
        box = []
        t = threading.Thread(target=lambda: box.append(nest(3)))
        t.start(); t.join()
        print(json.dumps(dict(loop=loop, other=other, nested=nested,
                              nested_other_caller=nested_other_caller, in_gen=in_gen,
                              via_map=via_map, deep=deep, thread=box[0])))
        """, python=PYTHONS[version])
    for name in ("other", "nested", "nested_other_caller", "in_gen", "via_map", "thread"):
        n, seen, _ = out[name]
        assert n == seen, (name, out[name])
    assert all(n == seen for n, seen, _ in out["loop"]), out["loop"]
    n, seen, _ = out["deep"]
    assert n == 1000 + 100 and seen > 100, out["deep"]  # 100 kept, truncated
    keys = [tuple(k) for _, _, k in out["loop"]]
    assert len(set(keys)) == 1
    assert len({keys[0], tuple(out["other"][2]), tuple(out["nested"][2]),
                tuple(out["nested_other_caller"][2])}) == 4


PROGRAM = """\
    import traceback
    sys.setrecursionlimit(1000)
    truth = {}
    def cap():
        # the capture and Python's own view of the stack, on one line: one line number
        i, st = lib.sbp_capture(), traceback.extract_stack()
        truth[i] = [(f.filename, f.name, f.lineno) for f in reversed(st)][:100]
        return i
    def site_a():
        return cap()
    def site_b(n):
        return site_b(n - 1) if n else cap()
    def gen():
        yield cap()
    def λόγος():
        return cap()
    ids = [site_a() for _ in range(50)] + [site_b(3) for _ in range(50)]
    ids += [next(gen()), site_b(150), site_b(150), cap(), λόγος()]
    box = []
    t = threading.Thread(target=lambda: box.extend(site_b(2) for _ in range(10)))
    t.start(); t.join()
    flush_and_print([lib.sbp_walking(), ids + box, sorted(truth.items())])
    """


@pytest.mark.parametrize("version", GIL_BUILDS)
def test_raw_identity_names_the_lines_python_sees(tmp_path, version):
    """Stacks known by their raw identity are named with the file, function and line Python
    itself sees (traceback.extract_stack at the same line): in a loop, deeper than 100 frames,
    in a generator, on a thread, in Greek; where this Python exports CPython's traceback
    writer, with the same ids and records, frame for frame, as that writer run at every call
    (SYNCBENCH_PY_WALK=0), and where it exports none (3.13), named by the raw reader alone."""
    runs = []
    for walk in ("1", "0"):
        d = tmp_path / walk
        d.mkdir()
        out, stacks, prog = run_py(d, PROGRAM,
                                   python=PYTHONS[version],
                                   env=dict(os.environ, SYNCBENCH_PY_WALK=walk))
        here = str(d) + "/"  # the two programs' folders differ; nothing else may
        norm = lambda frames: [(f.replace(here, ""), fn, n) for f, fn, n in frames]
        out[2] = {i: norm(fr) for i, fr in out[2]}
        runs.append((out, {k[1]: norm(v) for k, v in stacks.items()}))
    (walking, ids, truth), recs = runs[0]
    assert walking == 1
    assert len(recs) == 7 and -1 not in ids  # the two 150-deep calls keep one innermost 100
    for i, frames in recs.items():
        assert frames == truth[i], (i, frames, truth[i])
    (walking_off, ids_off, _), recs_off = runs[1]
    if recs_off:  # this Python exports the writer
        assert walking_off == 0 and ids == ids_off and recs == recs_off


@pytest.mark.parametrize("version", GIL_BUILDS)
def test_a_stack_first_named_for_a_woken_thread_keeps_its_id(tmp_path, version):
    """A stack first named by the woken-thread path (the raw reader's own text) and then met in
    a CUDA call (the writer's, where this Python exports it) is one stack: one id, one record."""
    out, stacks, prog = run_py(tmp_path, """\
        def site(f):
            return f()  # SITE
        ids = [site(lib.sbp_capture_waiting), site(lib.sbp_capture)]
        flush_and_print(ids)
        """, python=PYTHONS[version])
    waiting, here = out
    assert waiting >= 0 and waiting == here, out
    assert len(one_file(stacks)) == 1, stacks


def records(tmp_path):
    return [json.loads(line) for f in sorted((tmp_path / "recs").glob("proc-*.jsonl"))
            for line in f.read_text(encoding="utf-8").splitlines()]


READER = ("lib.sbp_reader.restype = ctypes.c_char_p\n"
          "reader = lib.sbp_reader().decode()\n")


@pytest.mark.parametrize("version", GIL_BUILDS)
def test_the_offsets_cpython_publishes_are_read_from_3_13_on(tmp_path, version):
    """From 3.13 on the layout comes from the interpreter's own _Py_DebugOffsets, and the lines
    are right with it (test_raw_identity_names_the_lines_python_sees); before, from the table."""
    out, _, _ = run_py(tmp_path, READER + "flush_and_print([reader, lib.sbp_walking()])\n",
                       python=PYTHONS[version])
    assert out == ["offsets" if minor_of(version) >= 13 else "table", 1]
    assert not [r for r in records(tmp_path) if r["t"] == "warn"]


# _PyRuntime's debug offsets damaged before the library reads them: the cookie, or the version
# (one minor more than the interpreter's)
DAMAGED = HEADER.replace("assert lib.sbp_open", """\
rt = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
if os.environ["DAMAGE"] == "cookie":
    ctypes.memmove(rt, b"xdebugpX", 8)
else:
    ctypes.c_uint64.from_address(rt + 8).value += 1 << 16
assert lib.sbp_open""")


@pytest.mark.parametrize("damage, said", [("cookie", 'no "xdebugpy" cookie'),
                                          ("version", "are of version 0x")])
@pytest.mark.parametrize("version", WITH_OFFSETS)
def test_damaged_debug_offsets_fall_back_to_the_table_or_say_so(tmp_path, version, damage, said):
    """Debug offsets whose cookie or version is not the interpreter's are not used: 3.13 falls
    back to the table and still names the lines Python sees; a later version, which has no
    table, records no Python frames and its warn record says why."""
    env = dict(os.environ, DAMAGE=damage)
    out, recs, _ = run_py(tmp_path, READER + textwrap.dedent(PROGRAM).replace(
        "flush_and_print([", "flush_and_print([reader, "), python=PYTHONS[version], env=env,
                          header=DAMAGED)
    reader, walking, ids, truth = out
    warns = [r["msg"] for r in records(tmp_path) if r["t"] == "warn"]
    if minor_of(version) == 13:
        assert (reader, walking, warns) == ("table", 1, [])
        truth = {i: [tuple(f) for f in frames] for i, frames in truth}
        recs = one_file(recs)
        assert len(recs) == 7 and -1 not in ids
        for i, frames in recs.items():
            assert frames == truth[i], (i, frames, truth[i])
    else:
        assert (reader, walking, set(ids), recs) == ("none", 0, {-1}, {})
        assert len(warns) == 1 and said in warns[0], warns
        assert warns[0].startswith("Python frames cannot be recorded"), warns


@pytest.mark.parametrize("version", versions(lambda v: not free_threaded(v) and
                                             minor_of(v) >= 14))
def test_a_newer_minor_is_read_as_the_newest_known_only_where_its_types_agree(tmp_path,
                                                                              version):
    """A CPython newer than the positions the library knows is read by the newest known ones,
    and only where the offsets so read match the interpreter's own types. Each minor so far
    has moved them: 3.N read as 3.(N-1) must be refused (not read wrong), and said."""
    minor = minor_of(version)
    for newest, want in ((minor, "offsets"), (minor - 1, "none")):
        d = tmp_path / str(newest)
        d.mkdir()
        env = dict(os.environ, SYNCBENCH_PY_OFFSETS_NEWEST=str(newest))
        out, _, _ = run_py(d, READER + "flush_and_print([reader, lib.sbp_capture()])\n",
                           python=PYTHONS[version], env=env)
        warns = [r["msg"] for r in records(d) if r["t"] == "warn"]
        assert out[0] == want, (newest, out, warns)
        if want == "none":
            assert out[1] == -1
            assert warns == [f"Python frames cannot be recorded: this Python exports no "
                             f"_Py_DumpTraceback, and its frames cannot be read raw (the debug "
                             f"offsets of 3.{minor}, read as 3.{minor - 1}'s, do not match its "
                             f"types)"]
        else:
            assert out[1] >= 0 and not warns


@pytest.mark.parametrize("version", versions(free_threaded))
def test_a_free_threaded_build_is_not_read_raw_and_says_so(tmp_path, version):
    """A free-threaded build lays its objects out otherwise (PyObject, str's state, the
    thread-local bytecode): not read raw, and said."""
    out, _, _ = run_py(tmp_path, READER + "flush_and_print([reader, lib.sbp_capture()])\n",
                       python=PYTHONS[version])
    warns = [r["msg"] for r in records(tmp_path) if r["t"] == "warn"]
    assert out[0] in ("none", "writer"), out
    assert out[0] == "writer" or (out[1] == -1 and len(warns) == 1 and
                                  "free-threaded" in warns[0]), (out, warns)


FAKE_CUPTI = ROOT / "build" / "tests" / "fake-cupti"
# a Python program that initializes the injection library as the CUDA driver would (as
# tests/inject/fake_cuda.c does), under `syncbench audit`, with the fake CUPTI
INJECTED = """\
import ctypes, os, sys
rt = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, "_PyRuntime"))
if sys.argv[1] == "damaged":
    ctypes.memmove(rt, b"xdebugpX", 8)
lib = ctypes.CDLL(os.environ["CUDA_INJECTION64_PATH"], mode=os.RTLD_LOCAL)
lib.InitializeInjection()
"""


@pytest.mark.parametrize("damage", ["intact", "damaged"])
@pytest.mark.parametrize("version", GIL_BUILDS)
def test_the_proc_record_says_how_python_stacks_are_read(tmp_path, version, damage):
    """syncbench audit's proc record says how the process's Python stacks are read ("pyread"):
    the published offsets from 3.13 on, the table before; with the offsets' cookie damaged,
    3.13's table, and for a later version none, with the reason in a warn record after the
    proc record."""
    require_built(FAKE_CUPTI / "libcupti.so.13")
    if damage == "damaged" and minor_of(version) < 13:
        pytest.skip("no debug offsets before 3.13")
    prog, keep = tmp_path / "inj.py", tmp_path / "recs"
    prog.write_text(INJECTED)
    old = os.environ.get("LD_LIBRARY_PATH")
    env = {"LD_LIBRARY_PATH": str(FAKE_CUPTI) + (":" + old if old else "")}
    r = run("audit", "-q", "--keep", keep, "--", PYTHONS[version], prog, damage, env=env,
            timeout=120)
    assert r.returncode == 0, r.stderr
    (f,) = [p for p in keep.iterdir() if p.name.startswith("proc-")]
    recs = [json.loads(x) for x in f.read_text().splitlines()]
    assert recs[0]["t"] == "proc" and recs[-1]["t"] == "end", recs
    warns = [x["msg"] for x in recs if x["t"] == "warn"]
    if minor_of(version) < 13:
        want = "table"
    elif damage == "intact":
        want = "offsets"
    else:
        want = "table" if minor_of(version) == 13 else "none"
    assert recs[0].get("pyread") == want, recs[0]
    if want == "none":
        assert len(warns) == 1 and 'no "xdebugpy" cookie' in warns[0], warns
    else:
        assert not [w for w in warns if "Python" in w], warns
