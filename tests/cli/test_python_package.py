"""The Python package (python/syncbench) and its pytest plugin on a machine where nothing can be
recorded (no GPU, or every GPU hidden): it imports, every block raises one clear error naming
the cause (never a silent pass), bad arguments are clear errors, the plugin registers (through
-p and through the installed entry point) and its marker and option parse. What it records on a
GPU: tests/gpu/test_python_syncs.py."""
import atexit
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap

import pytest

from conftest import ROOT

PKG = ROOT / "python"
LIB = os.environ.get("SYNCBENCH_AUDIT_LIB", str(ROOT / "build" / "libsyncbench_audit.so"))
# the package's sources alone on the path: not an installation's metadata left beside them (a
# pip install of an older tree left syncbench.egg-info there, whose entry point would register the
# plugin a second time next to -p)
SRC = pathlib.Path(tempfile.mkdtemp(prefix="syncbench-pkg-"))
atexit.register(shutil.rmtree, SRC, True)
shutil.copytree(PKG / "syncbench", SRC / "syncbench")
# every GPU hidden: a machine with a GPU answers as one without
NO_DEVICE = {"CUDA_VISIBLE_DEVICES": "", "PYTHONPATH": str(SRC), "SYNCBENCH_AUDIT_LIB": LIB}


def py(code, env=None, cwd=None):
    """Runs code in this Python with env over ours (a value None removes the variable)."""
    e = dict(os.environ)
    e.update(NO_DEVICE if env is None else env)
    e = {k: v for k, v in e.items() if v is not None}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, env=e, cwd=cwd, timeout=120)


def pytest_run(tmp_path, test_code, *args, env=None):
    (tmp_path / "test_inner.py").write_text(textwrap.dedent(test_code))
    e = dict(os.environ)
    e.update(NO_DEVICE if env is None else env)
    e.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "syncbench.pytest_plugin",
                           "-q", "-p", "no:cacheprovider", *args, str(tmp_path / "test_inner.py")],
                          capture_output=True, text=True, env=e, cwd=tmp_path, timeout=300)


def last_line(r):
    return (r.stderr.strip().splitlines() or [""])[-1]


@pytest.mark.parametrize("block", ["syncbench.no_syncs()", "syncbench.count_syncs()",
                                   "syncbench.no_syncs(allow=3, all_threads=True)"])
def test_a_block_without_a_device_raises_naming_the_cause(block):
    r = py(f"""
        import syncbench
        with {block}:
            print("inside")
    """)
    assert r.returncode == 1, r.stderr
    assert "inside" not in r.stdout  # the block never ran unchecked
    line = last_line(r)
    assert line.startswith("syncbench.SyncbenchUnavailable: syncbench: cannot record "
                           "CUDA calls: no "), line
    # without a driver: "no CUDA driver: libcuda.so.1 cannot be loaded"; with one and every GPU
    # hidden: "no usable CUDA device: cuInit: ..."
    assert "no CUDA driver: libcuda.so.1" in line or "no usable CUDA device: cuInit" in line, line


def test_the_decorator_checks_each_call():
    r = py("""
        import syncbench
        calls = []
        @syncbench.no_syncs()
        def f():
            calls.append(1)
        for _ in range(2):
            try:
                f()
            except syncbench.SyncbenchUnavailable:
                pass
        print(len(calls))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0"  # neither call ran unchecked


def test_the_library_not_found_is_named():
    env = dict(NO_DEVICE, SYNCBENCH_AUDIT_LIB="/nonexistent/libsyncbench_audit.so")
    r = py("""
        import syncbench
        with syncbench.no_syncs():
            pass
    """, env=env)
    assert r.returncode == 1
    assert ("libsyncbench_audit.so not found (build it with make, or set SYNCBENCH_AUDIT_LIB); "
            "looked at: /nonexistent/libsyncbench_audit.so (absent)") in last_line(r)


def foreign_library():
    """A shared library that loads but is not syncbench's: one of this Python's own extension
    modules."""
    import importlib
    for name in ("_ctypes", "_json", "_decimal", "select", "math"):
        try:
            path = getattr(importlib.import_module(name), "__file__", None)
        except ImportError:
            continue
        if path and path.endswith(".so"):
            return path
    pytest.skip("no extension module of this Python is a shared library")


def test_a_library_that_is_not_syncbenchs_is_named(tmp_path):
    """Issue 32 item 12: SYNCBENCH_AUDIT_LIB at a library without syncbench's API raised
    AttributeError (undefined symbol); it is SyncbenchUnavailable naming the library (escaped:
    its name holds ESC) and the symbol missing, at every block."""
    lib = tmp_path / "lib\x1b[2Jother.so"
    lib.symlink_to(foreign_library())
    r = py("""
        import syncbench
        for _ in range(2):
            try:
                with syncbench.no_syncs():
                    print("inside")
            except syncbench.SyncbenchUnavailable as e:
                print(e)
    """, env=dict(NO_DEVICE, SYNCBENCH_AUDIT_LIB=str(lib)))
    assert r.returncode == 0, r.stderr
    assert "inside" not in r.stdout
    want = (f"syncbench: {tmp_path}/lib\\x1b[2Jother.so is not syncbench's CUPTI library "
            f"(libsyncbench_audit.so): undefined symbol syncbench_attach (and 7 more of its API)")
    assert r.stdout.splitlines() == [want, want], r.stdout
    assert "\x1b" not in r.stdout


@pytest.mark.parametrize("call,where,value", [
    ("syncbench.no_syncs(all_threads='no')", "no_syncs", "'no'"),
    ("syncbench.no_syncs(allow=1, all_threads=0)", "no_syncs", "0"),
    ("syncbench.count_syncs(all_threads='yes')", "count_syncs", "'yes'"),
    ("syncbench.count_syncs(1)", "count_syncs", "1"),
    ("syncbench.Syncs(all_threads=None)", "Syncs", "None"),
    ("syncbench.no_syncs(all_threads=[])", "no_syncs", "[]"),
])
def test_flags_that_are_not_bool_are_refused(call, where, value):
    """Issue 32 item 12: all_threads='no' was taken as True; every flag of the API takes True or
    False only, refused otherwise as the pytest marker refuses it, before anything is recorded."""
    r = py(f"import syncbench\n{call}\nprint('accepted')")
    assert r.returncode == 1, r.stdout
    assert "accepted" not in r.stdout
    assert last_line(r) == (f"ValueError: syncbench.{where}: all_threads must be True or False, "
                            f"not {value}")


def test_bool_flags_are_taken():
    r = py("""
        import syncbench
        for cm in (syncbench.no_syncs(all_threads=True), syncbench.count_syncs(False),
                   syncbench.no_syncs(2, all_threads=False)):
            print(cm.all_threads)
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["True", "False", "False"]


def test_call_sites_are_shown_escaped():
    """Issue 32 item 8: a failed block's report names files, source lines and the analyzer's
    words from outside; they show escaped as syncbench's C side escapes them (one escaper in the
    package, syncbench._text), nothing a terminal obeys."""
    r = py("""
        import json
        from syncbench import _naming
        stream = "\\n".join(json.dumps(o) for o in [
            {"t": "pystack", "id": 1, "frames": [["tr\\u001b[2Jain.py", "st\\u009bep", 42]]},
            {"t": "call", "api": "cudaStream\\u0007Synchronize", "py": 1, "start": 0,
             "end": 5000}]).encode()
        site, = _naming._from_records(stream)
        print("\\n".join(site.lines()))
        s = _naming.Site(1, "sync\\x7f", "a.py:1 in f", "x = y\\x1b]0;t\\x07", "op\\r",
                         "fix\\tit")
        print("\\n".join(s.lines()))
    """)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "  tr\\x1b[2Jain.py:42 in st\\xc2\\x9bep",
        "      blocking x1: cudaStream\\x07Synchronize (blocked 0.005 ms)",
        "  a.py:1 in f: x = y\\x1b]0;t\\x07",
        "      sync\\x7f x1: op\\r (blocked 0.000 ms)",
        "      fix: fix\\tit"], r.stdout


def test_a_sync_inside_a_library_shows_both_lines(tmp_path):
    """Issue 35: a block's calls made inside an installed package are named under the user's
    line, each library line that made them below it, with the fix the analyzer gives (through
    `syncbench audit --from`); without the analyzer, from the records alone, the same two
    frames."""
    pkgs = tmp_path / "lib" / "python3.12" / "site-packages" / "transformers"
    (pkgs / "generation").mkdir(parents=True)
    (pkgs / "generation" / "utils.py").write_text("def f():\n    pass\n    elif this_peer_finished:\n")
    (pkgs / "masking_utils.py").write_text("def g():\n    if padding_mask.all():\n")
    (tmp_path / "train.py").write_text("import torch\nout = model.generate(ids)\n")
    user = [str(tmp_path / "train.py"), "main", 2]
    stop = [[str(pkgs / "generation" / "utils.py"), "_has_unfinished_sequences", 3], user]
    mask = [[str(pkgs / "masking_utils.py"), "_ignore_causal_mask_sdpa", 2], user]
    r = py(f"""
        import json
        from syncbench import _naming, _native
        _native._lib_path = {LIB!r}  # the analyzer beside it
        calls = [{{"t": "call", "api": "cudaStreamSynchronize", "dom": "rt", "tid": 1, "ctx": 1,
                   "corr": i + 1, "start": 1000 * i, "end": 1000 * i + 5000, "stack": 1,
                   "py": py}} for i, py in enumerate([1, 1, 2])]
        stream = "\\n".join(json.dumps(o) for o in [
            {{"t": "proc", "v": 1, "pid": 7, "ppid": 1, "rank": -1, "local_rank": -1, "cmd": "b",
             "clock_ns": 0, "mono_ns": 0, "mode": "count", "symsize": 1}},
            {{"t": "stack", "id": 1, "frames": [["/v/libtorch_cuda.so",
             "_ZN2at6native10is_nonzeroERKNS_6TensorE", 16, 0]]}},
            {{"t": "pystack", "id": 1, "frames": {stop!r}}},
            {{"t": "pystack", "id": 2, "frames": {mask!r}}}] + calls + [
            {{"t": "end", "clock_ns": 9000, "mono_ns": 9000, "why": "exit", "dropped": 0}}]).encode()
        print("\\n".join(_naming.report_lines(_naming.sites_of(stream))))
        print("--")
        print("\\n".join(_naming.report_lines(_naming._from_records(stream))))
    """.replace("'", '"'), cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    named, records = r.stdout.split("--\n")
    lines = named.splitlines()
    assert lines[0] == f"  {tmp_path}/train.py:2 in main: out = model.generate(ids)", named
    assert lines[1] == ("      via transformers/generation/utils.py:3 in _has_unfinished_sequences: "
                        "elif this_peer_finished:"), named
    assert lines[2].startswith("        sync-stream x2: inside transformers: generate()'s stopping "
                               "check after every token"), named
    assert lines[3].startswith("        fix: transformers' generate() reads on the host"), named
    assert lines[4] == ("      via transformers/masking_utils.py:2 in _ignore_causal_mask_sdpa: "
                        "if padding_mask.all():"), named
    assert lines[6].startswith("        fix: inside transformers (_ignore_causal_mask_sdpa): the "
                               "line differs from the one syncbench checked"), named
    assert len(lines) == 7, named
    lines = records.splitlines()
    assert lines[0] == f"  {tmp_path}/train.py:2 in main", records
    assert lines[1] == f"      via {pkgs}/generation/utils.py:3 in _has_unfinished_sequences", records


def test_the_library_is_found_in_the_source_tree():
    env = dict(NO_DEVICE, SYNCBENCH_AUDIT_LIB=None, CUDA_INJECTION64_PATH=None)
    env["PATH"] = "/usr/bin:/bin"  # no syncbench on PATH
    env["PYTHONPATH"] = str(PKG)  # the tree's own python/: its build/ is two folders up
    r = py("""
        from syncbench import _native
        _native._load()
        print(_native._lib_path)
    """, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == str(ROOT / "build" / "libsyncbench_audit.so")


@pytest.mark.parametrize("arg,message", [
    ("allow=-1", "allow must be a whole number >= 0, a list of sites or libraries, "
     "or a dict {site or library: count}, not -1"),
    ("allow=1.5", "allow must be a whole number >= 0, a list of sites or libraries, "
     "or a dict {site or library: count}, not 1.5"),
    ("allow=True", "allow must be a whole number >= 0, a list of sites or libraries, "
     "or a dict {site or library: count}, not True"),
    ("allow='2'", "allow must be a whole number >= 0, a list of sites or libraries, "
     "or a dict {site or library: count}, not '2'"),
])
def test_bad_arguments_are_clear_errors(arg, message):
    r = py(f"import syncbench\nsyncbench.no_syncs({arg})")
    assert r.returncode == 1
    assert last_line(r) == f"ValueError: syncbench.no_syncs: {message}"


def test_the_plugin_registers_its_marker_and_option(tmp_path):
    r = pytest_run(tmp_path, "def test_x(): pass\n", "--markers")
    assert r.returncode == 0, r.stderr
    assert "@pytest.mark.no_syncs(allow=0, all_threads=False): fail the test when its call makes " \
           "more than `allow` host-blocking CUDA calls (syncbench)" in r.stdout
    r = pytest_run(tmp_path, "def test_x(): pass\n", "--help")
    assert "--syncbench-report" in r.stdout


def test_a_marked_test_without_a_device_fails_with_the_cause(tmp_path):
    r = pytest_run(tmp_path, """
        import pytest
        ran = []
        @pytest.mark.no_syncs
        def test_marked():
            ran.append(1)
        def test_plain():
            pass
    """, "-rf", "--tb=short")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 1 passed" in r.stdout
    assert "FAILED test_inner.py::test_marked" in r.stdout
    # one line, no traceback (issue 48 item 7: tests/cli/test_python_nogpu.py)
    assert ("\n@pytest.mark.no_syncs: syncbench.SyncbenchUnavailable: syncbench: cannot record "
            "CUDA calls: no") in r.stdout
    assert "E   " not in r.stdout and "_native.py" not in r.stdout


def test_the_fixture_without_a_device_errors_with_the_cause(tmp_path):
    r = pytest_run(tmp_path, """
        def test_counts(syncbench_syncs):
            assert syncbench_syncs.blocking == 0
    """, "-rE")
    assert r.returncode == 1, r.stdout
    assert "1 error" in r.stdout
    assert "cannot record CUDA calls: no" in r.stdout


def test_the_report_without_a_device_says_why_and_tests_pass(tmp_path):
    r = pytest_run(tmp_path, "def test_a(): pass\ndef test_b(): pass\n", "--syncbench-report")
    assert r.returncode == 0, r.stdout
    assert "2 passed" in r.stdout
    assert "syncbench: host-blocking CUDA calls per test" in r.stdout
    assert "syncbench: cannot record CUDA calls: no" in r.stdout


@pytest.mark.parametrize("mark,message", [
    ("no_syncs(allow=-1)", "@pytest.mark.no_syncs: allow must be a whole number >= 0, a list of "
                           "sites or libraries, or a dict {site or library: count}, not -1"),
    ("no_syncs('x')", "@pytest.mark.no_syncs: allow must be a whole number >= 0, a list of "
                      "sites or libraries, or a dict {site or library: count}, not 'x'"),
    ("no_syncs(allow=['a.py:x y'])", "@pytest.mark.no_syncs: 'a.py:x y' is neither a site "
                                     "(FILE.py, FILE.py:LINE, FILE.py:FUNCTION, FILE.py:LINE in "
                                     "FUNCTION) nor a library (a package name)"),
    ("no_syncs(scope='loop')", "@pytest.mark.no_syncs: scope must be 'thread', 'process' or "
                               "'task', not 'loop'"),
    ("no_syncs(scope='task')", "@pytest.mark.no_syncs: scope='task' needs the block opened "
                               "inside the task: `with syncbench.no_syncs(scope='task'):` in the "
                               "coroutine"),
    ("no_syncs(baseline=3)", "@pytest.mark.no_syncs: baseline must be a file's path, not 3"),
    ("no_syncs(1, 2)", "@pytest.mark.no_syncs takes at most one positional argument (allow), "
                       "got 2"),
    ("no_syncs(alow=1)", "@pytest.mark.no_syncs: unknown argument alow (allow, all_threads, "
                        "scope, baseline, per, range, skip_first)"),
    ("no_syncs(all_threads=1)", "@pytest.mark.no_syncs: all_threads must be True or False, "
                                "not 1"),
])
def test_bad_markers_stop_the_session_before_any_test(tmp_path, mark, message):
    r = pytest_run(tmp_path, f"""
        import pytest
        @pytest.mark.{mark}
        def test_x():
            pass
    """)
    assert r.returncode == 4, r.stdout + r.stderr  # pytest's usage error
    assert f"test_inner.py::test_x: {message}" in r.stderr
    assert "passed" not in r.stdout


def install_package(tmp_path):
    """pip install --target: the package with its metadata, the pytest11 entry point included
    (setup.py, the package alone as make install builds it: SYNCBENCH_NATIVE=none), as an
    installation has it. The folder, or a skip without pip."""
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        pytest.skip("no pip for this Python")
    target, src = tmp_path / "site", tmp_path / "src"
    src.mkdir()  # pip builds in the folder it is given: not in the tree
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "VERSION", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(PKG / "syncbench", src / "python" / "syncbench")
    r = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                        "--no-build-isolation", "--no-index", "--target", str(target), str(src)],
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, SYNCBENCH_NATIVE="none"))
    if r.returncode and "setuptools" in (r.stderr + r.stdout):
        pytest.skip(f"pip cannot build here without setuptools: {r.stderr.strip()[-200:]}")
    assert r.returncode == 0, r.stderr
    return target


def installed_pytest(tmp_path, target, *args):
    env = dict(os.environ, PYTHONPATH=str(target), CUDA_VISIBLE_DEVICES="",
               SYNCBENCH_AUDIT_LIB=LIB)
    env.pop("PYTEST_ADDOPTS", None)
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)


def test_the_installed_package_registers_the_plugin_by_itself(tmp_path):
    """pip install of the package: pytest finds the plugin through the entry point, no -p
    needed."""
    target = install_package(tmp_path)
    (tmp_path / "test_inner.py").write_text("def test_x(): pass\n")
    r = installed_pytest(tmp_path, target, "--markers")
    assert r.returncode == 0, r.stderr
    assert "@pytest.mark.no_syncs(allow=0, all_threads=False)" in r.stdout
    # the entry point's name is the module's: -p no:syncbench.pytest_plugin turns it off, which
    # shows it came from the entry point
    r = installed_pytest(tmp_path, target, "--markers", "-p", "no:syncbench.pytest_plugin")
    assert r.returncode == 0, r.stderr
    assert "no_syncs" not in r.stdout


@pytest.mark.parametrize("how", ["-p", "conftest"])
def test_the_installed_package_with_the_plugin_named_too(tmp_path, how):
    """Issue 32 item 14: installed, and named as the README's command for one test file names
    it (`pytest FILE -p syncbench.pytest_plugin`), or by a conftest's pytest_plugins: one
    plugin, registered once (it stopped pytest: "Plugin already registered under a different
    name"), its marker at work."""
    target = install_package(tmp_path)
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""
        import pytest
        @pytest.mark.no_syncs
        def test_marked():
            pass
        def test_plain():
            pass
    """))
    args = ["-p", "syncbench.pytest_plugin"] if how == "-p" else []
    if how == "conftest":
        (tmp_path / "conftest.py").write_text('pytest_plugins = ["syncbench.pytest_plugin"]\n')
    r = installed_pytest(tmp_path, target, *args, "-rf", "--tb=short", "test_inner.py")
    assert "already registered" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert "ValueError" not in r.stdout + r.stderr, r.stdout + r.stderr
    assert r.returncode == 1, r.stdout + r.stderr  # the marked test fails: nothing recordable
    assert "1 failed, 1 passed" in r.stdout, r.stdout
    assert ("\n@pytest.mark.no_syncs: syncbench.SyncbenchUnavailable: syncbench: cannot record "
            "CUDA calls: no") in r.stdout
    r = installed_pytest(tmp_path, target, *args, "--syncbench-skip-unavailable", "test_inner.py")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed, 1 skipped" in r.stdout, r.stdout
    r = installed_pytest(tmp_path, target, *args, "--markers")
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("@pytest.mark.no_syncs(") == 1, r.stdout


def test_make_install_installs_the_package_beside_the_library(tmp_path):
    """make install: the package goes where pip puts it (under DESTDIR), and finds the library
    installed beside it (PREFIX/lib/syncbench/) with no variable set and no syncbench on PATH."""
    if subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode:
        pytest.skip("no pip for this Python")
    if sys.prefix != sys.base_prefix:
        pytest.skip("this Python is a virtual environment: pip puts the package in it, not "
                    "under PREFIX, and the package finds the library through PATH (issue 38)")
    dest = tmp_path / "dest"
    r = subprocess.run(["make", "-C", str(ROOT), "install", f"DESTDIR={dest}",
                        "PREFIX=/usr/local", f"PYTHON={sys.executable}"],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    inits = list(dest.glob("usr/local/lib/python3*/*-packages/syncbench/__init__.py"))
    assert len(inits) == 1, list(dest.rglob("__init__.py"))
    # the binary on PATH, not the wheel's console script in its place; no copy in the package
    assert (dest / "usr/local/bin/syncbench").read_bytes()[:4] == b"\x7fELF"
    assert not (inits[0].parent / "_bin").exists()
    site = inits[0].parent.parent
    env = {"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin", "CUDA_VISIBLE_DEVICES": "",
           "SYNCBENCH_AUDIT_LIB": None, "CUDA_INJECTION64_PATH": None}
    r = py("""
        from syncbench import _native
        _native._load()
        print(_native._lib_path)
    """, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split()[-1] == str(dest / "usr/local/lib/syncbench/libsyncbench_audit.so")
    (tmp_path / "test_inner.py").write_text("def test_x(): pass\n")
    env = {k: v for k, v in dict(os.environ, **env).items() if v is not None}
    r = subprocess.run([sys.executable, "-m", "pytest", "--markers", "-p", "no:cacheprovider"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert "@pytest.mark.no_syncs(allow=0, all_threads=False)" in r.stdout, r.stdout + r.stderr
