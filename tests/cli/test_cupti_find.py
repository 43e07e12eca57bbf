"""Where CUPTI is found (issue 38): `syncbench audit`'s launcher (src/cmd/cupti_find.c) and the
Python package (python/syncbench/_cupti.py) look, in order, at SYNCBENCH_CUPTI, LD_LIBRARY_PATH,
the toolkit ($CUDA_HOME's extras/CUPTI/lib64, then lib64) and NVIDIA's wheels (nvidia/cu13/lib,
then nvidia/cuda_cupti/lib, under the site-packages folders). Each place holds a stand-in: a
copy of tests/inject/fake_cupti (a CUPTI that accepts the subscription), or a broken file. A
place must win over every later one (they hold broken files, which fail to load if taken) and
must not be skipped (broken there, with good files later, it is the one that fails). When none
holds it: one line, exit 3, the command not started; in Python one SyncbenchUnavailable."""
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import BIN, ROOT, require_built

PROGRAMS = ROOT / "build" / "tests"
FAKE = PROGRAMS / "fake_cuda"
FAKE_CUPTI = PROGRAMS / "fake-cupti" / "libcupti.so.13"
LIB = os.environ.get("SYNCBENCH_AUDIT_LIB", str(ROOT / "build" / "libsyncbench_audit.so"))
# What steers the search; each test sets its own.
STEERING = ("LD_LIBRARY_PATH", "CUDA_HOME", "SYNCBENCH_CUPTI", "SYNCBENCH_SITE_PACKAGES",
            "VIRTUAL_ENV", "CONDA_PREFIX", "SYNCBENCH_NO_TOOLKIT", "LD_PRELOAD")


@pytest.fixture(scope="module", autouse=True)
def built():
    require_built(FAKE, FAKE_CUPTI)


def env_with(**over):
    env = {k: v for k, v in os.environ.items() if k not in STEERING}
    env.update({k: str(v) for k, v in over.items()})
    return env


def put(folder, good=True, name="libcupti.so.13"):
    folder.mkdir(parents=True, exist_ok=True)
    if good:
        shutil.copy(FAKE_CUPTI, folder / name)
    else:
        (folder / name).write_bytes(b"not a shared library\n")
    return folder


# The places in the launcher's order: (name, folder under tmp, the environment that points at it)
LAUNCHER_PLACES = [
    ("SYNCBENCH_CUPTI", "named", lambda t: {"SYNCBENCH_CUPTI": t / "named" / "libcupti.so.13"}),
    ("LD_LIBRARY_PATH", "ldp", lambda t: {"LD_LIBRARY_PATH": t / "ldp"}),
    ("the toolkit", "cuda/extras/CUPTI/lib64", lambda t: {"CUDA_HOME": t / "cuda"}),
    ("the toolkit", "cuda/lib64", lambda t: {"CUDA_HOME": t / "cuda"}),
    ("a wheel", "site/nvidia/cu13/lib", lambda t: {"SYNCBENCH_SITE_PACKAGES": t / "site"}),
    ("a wheel", "site/nvidia/cuda_cupti/lib", lambda t: {"SYNCBENCH_SITE_PACKAGES": t / "site"}),
    ("a wheel", "venv/lib/python3.12/site-packages/nvidia/cu13/lib",
     lambda t: {"VIRTUAL_ENV": t / "venv"}),
]
FIRST_WHEEL = 4


def lay_out(tmp_path, places, winner, winner_good=True):
    """The winner's place holds a good (or broken) stand-in, every later place the other kind;
    the earlier places are empty. The environment that points at all of them; the toolkit is
    hidden (this machine's /usr/local/cuda too) where a wheel must win."""
    env = {}
    for i, (_, folder, point) in enumerate(places):
        if i < winner:
            continue
        put(tmp_path / folder, good=(i == winner) == winner_good)
        env.update(point(tmp_path))
    if winner >= FIRST_WHEEL:
        env["SYNCBENCH_NO_TOOLKIT"] = "1"
    return env


def audit_shows_ld_path(env, marker=None):
    """`syncbench audit` on sh -> fake_cuda: the gate (passes only where a fake CUPTI was taken)
    and LD_LIBRARY_PATH as the command saw it."""
    script = f'echo "LLP=$LD_LIBRARY_PATH"; exec {FAKE}'
    if marker:
        script = f"touch {marker}; " + script
    return subprocess.run([BIN, "audit", "-q", "--max-syncs", "0", "--", "sh", "-c", script],
                          capture_output=True, text=True, env=env, timeout=120)


def ld_path_seen(r):
    return next(x for x in r.stdout.splitlines() if x.startswith("LLP="))[4:]


@pytest.mark.parametrize("winner", range(len(LAUNCHER_PLACES)),
                         ids=[f"{p[0]}:{p[1]}" for p in LAUNCHER_PLACES])
def test_the_launcher_takes_each_place_before_the_later_ones(tmp_path, winner):
    env = env_with(**lay_out(tmp_path, LAUNCHER_PLACES, winner))
    r = audit_shows_ld_path(env)
    assert r.returncode == 0, r.stderr
    assert "audit gate: passed" in r.stderr, r.stderr  # the process was watched: a fake CUPTI
    folder = str(tmp_path / LAUNCHER_PLACES[winner][1])
    seen = ld_path_seen(r).split(":")
    if LAUNCHER_PLACES[winner][0] == "LD_LIBRARY_PATH":
        assert seen == [folder], seen  # found where the loader looks first: left as it was
    else:
        assert seen[0] == folder, seen  # handed on: its folder first
        assert seen[1:] == ([str(tmp_path / "ldp")] if winner == 0 else []), seen


@pytest.mark.parametrize("winner", range(len(LAUNCHER_PLACES)),
                         ids=[f"{p[0]}:{p[1]}" for p in LAUNCHER_PLACES])
def test_the_launcher_never_skips_a_place(tmp_path, winner):
    """Broken where it must be taken, good everywhere after: the broken one is loaded and
    named, exit 3, the command not started."""
    env = env_with(**lay_out(tmp_path, LAUNCHER_PLACES, winner, winner_good=False))
    marker = tmp_path / "started"
    r = audit_shows_ld_path(env, marker)
    assert r.returncode == 3, r.stdout + r.stderr
    assert not marker.exists()
    (line,) = r.stderr.splitlines()
    name, folder = LAUNCHER_PLACES[winner][:2]
    if name == "SYNCBENCH_CUPTI":  # named: refused before it is loaded
        assert line == (f"syncbench: audit: SYNCBENCH_CUPTI={tmp_path}/{folder}/libcupti.so.13 "
                        f"is no shared library with a soname, not the libcupti.so.13 that "
                        f"libsyncbench_audit.so needs"), line
    else:
        assert line.startswith(f"syncbench: audit: cannot load CUPTI (from {name}): "
                               f"{tmp_path}/{folder}/libcupti.so.13: "), line


def test_the_launcher_without_cupti_anywhere_names_where_it_looked(tmp_path):
    site = tmp_path / "site"
    put(site / "nvidia" / "cuda_cupti" / "lib", name="libcupti.so.12")  # CUDA 12's: not it
    marker = tmp_path / "started"
    r = audit_shows_ld_path(env_with(SYNCBENCH_NO_TOOLKIT=1, SYNCBENCH_SITE_PACKAGES=site),
                            marker)
    assert r.returncode == 3, r.stdout + r.stderr
    assert not marker.exists() and r.stdout == ""
    assert r.stderr.splitlines() == [
        f"syncbench: audit: CUPTI not found: libsyncbench_audit.so needs libcupti.so.13; looked "
        f"in LD_LIBRARY_PATH (unset); the toolkit (skipped: SYNCBENCH_NO_TOOLKIT=1); the wheels' "
        f"nvidia/cu13/lib and nvidia/cuda_cupti/lib under {site}; there: libcupti.so.12 in "
        f"{site}/nvidia/cuda_cupti/lib; the loader's own search (skipped: "
        f"SYNCBENCH_NO_TOOLKIT=1); set SYNCBENCH_CUPTI to a libcupti.so.13, or pip install "
        f"nvidia-cuda-cupti (or install the CUDA toolkit)"], r.stderr


@pytest.mark.parametrize("case", ["missing", "another-name"])
def test_syncbench_cupti_is_only_that_file(tmp_path, case):
    marker = tmp_path / "started"
    if case == "missing":
        named = tmp_path / "nowhere" / "libcupti.so.13"
        want = f"syncbench: audit: SYNCBENCH_CUPTI={named}: No such file or directory"
    else:  # the loader finds CUPTI by its soname: a copy by another name cannot be handed on
        named = put(tmp_path / "named", name="mycupti.so") / "mycupti.so"
        want = (f"syncbench: audit: SYNCBENCH_CUPTI={named}: its folder has no libcupti.so.13 "
                f"that is this file (the audited programs find CUPTI by that name): name that one")
    put(tmp_path / "ldp")  # a good one later: not taken
    r = audit_shows_ld_path(env_with(SYNCBENCH_CUPTI=named, LD_LIBRARY_PATH=tmp_path / "ldp"),
                            marker)
    assert r.returncode == 3 and not marker.exists(), r.stdout + r.stderr
    assert r.stderr.splitlines() == [want], r.stderr


# ---- the Python package ----

SRC = ROOT / "python"


def py_cupti(env, preload=None, no_site=False):
    """The package's library loaded in a fresh Python: (exit code, the CUPTI's path and where
    it came from, or the last line of the error). no_site: without this Python's own
    site-packages (-S), which may hold NVIDIA's CUPTI wheel (a machine with torch)."""
    code = textwrap.dedent(f"""
        import ctypes, os, syncbench
        from syncbench import _native
        if {str(preload)!r} != "None":
            ctypes.CDLL({str(preload)!r}, mode=os.RTLD_GLOBAL)
        _native._load()
        print(_native.cupti_path)
        print(_native.cupti_from)
    """)
    e = dict(env, PYTHONPATH=os.pathsep.join([str(SRC)] + env.get("PYTHONPATH", "").split(
        os.pathsep)).rstrip(os.pathsep), SYNCBENCH_AUDIT_LIB=LIB)
    r = subprocess.run([sys.executable] + (["-S"] if no_site else []) + ["-c", code],
                       capture_output=True, text=True, env=e, timeout=120)
    if r.returncode:
        return r.returncode, (r.stderr.strip().splitlines() or [""])[-1]
    return 0, tuple(r.stdout.splitlines()[-2:])


# The Python package's places: wheels on its own sys.path (here through PYTHONPATH)
PY_PLACES = [
    ("SYNCBENCH_CUPTI", "named", lambda t: {"SYNCBENCH_CUPTI": t / "named" / "libcupti.so.13"}),
    ("LD_LIBRARY_PATH", "ldp", lambda t: {"LD_LIBRARY_PATH": t / "ldp"}),
    ("the toolkit", "cuda/extras/CUPTI/lib64", lambda t: {"CUDA_HOME": t / "cuda"}),
    ("the toolkit", "cuda/lib64", lambda t: {"CUDA_HOME": t / "cuda"}),
    ("a wheel", "site/nvidia/cu13/lib", lambda t: {"PYTHONPATH": t / "site"}),
    ("a wheel", "site/nvidia/cuda_cupti/lib", lambda t: {"PYTHONPATH": t / "site"}),
]


@pytest.mark.parametrize("winner", range(len(PY_PLACES)),
                         ids=[f"{p[0]}:{p[1]}" for p in PY_PLACES])
def test_the_package_takes_each_place_before_the_later_ones(tmp_path, winner):
    rc, got = py_cupti(env_with(**lay_out(tmp_path, PY_PLACES, winner)))
    assert rc == 0, got
    name, folder = PY_PLACES[winner][:2]
    assert got == (f"{tmp_path}/{folder}/libcupti.so.13", name), got


@pytest.mark.parametrize("winner", range(1, len(PY_PLACES)),
                         ids=[f"{p[0]}:{p[1]}" for p in PY_PLACES[1:]])
def test_the_package_never_skips_a_place(tmp_path, winner):
    rc, line = py_cupti(env_with(**lay_out(tmp_path, PY_PLACES, winner, winner_good=False)))
    name, folder = PY_PLACES[winner][:2]
    assert rc == 1
    assert line.startswith(f"syncbench.SyncbenchUnavailable: syncbench: cannot load CUPTI "
                           f"(from {name}): {tmp_path}/{folder}/libcupti.so.13: "), line


def test_the_package_takes_the_cupti_already_loaded(tmp_path):
    """PyTorch loads its own CUPTI on import: the library takes that one, nothing else is
    loaded (a second copy of CUPTI in one process)."""
    loaded = put(tmp_path / "torchs") / "libcupti.so.13"
    put(tmp_path / "ldp", good=False)  # would fail if looked at
    rc, got = py_cupti(env_with(LD_LIBRARY_PATH=tmp_path / "ldp"), preload=loaded)
    assert rc == 0, got
    assert got == (str(loaded), "already loaded in this process"), got


@pytest.mark.parametrize("case", ["missing", "not-cupti"])
def test_the_package_refuses_a_syncbench_cupti_that_is_not_it(tmp_path, case):
    named = tmp_path / "nowhere.so" if case == "missing" else pytest.importorskip("_ctypes").__file__
    rc, line = py_cupti(env_with(SYNCBENCH_CUPTI=named))
    assert rc == 1
    if case == "missing":
        assert line == (f"syncbench.SyncbenchUnavailable: syncbench: SYNCBENCH_CUPTI={named}: no "
                        f"such readable file"), line
    else:
        assert line.startswith(f"syncbench.SyncbenchUnavailable: syncbench: SYNCBENCH_CUPTI="
                               f"{named} is "), line
        assert line.endswith(", not the libcupti.so.13 that libsyncbench_audit.so needs"), line


def test_the_package_without_cupti_anywhere_names_where_it_looked(tmp_path):
    site = tmp_path / "site-packages"
    put(site / "nvidia" / "cuda_cupti" / "lib", name="libcupti.so.12")
    rc, line = py_cupti(env_with(SYNCBENCH_NO_TOOLKIT=1, PYTHONPATH=site), no_site=True)
    assert rc == 1
    prefix = ("syncbench.SyncbenchUnavailable: syncbench: CUPTI not found: libsyncbench_audit.so "
              "needs libcupti.so.13; looked in LD_LIBRARY_PATH (unset); the toolkit (skipped: "
              f"SYNCBENCH_NO_TOOLKIT=1); the wheels' nvidia/cu13/lib and nvidia/cuda_cupti/lib "
              f"under {site}")
    # then the other site-packages folders of sys.path, if any (none: -S)
    assert line.startswith(prefix) and line[len(prefix)] in ",;", line
    assert line.endswith(f"; there: libcupti.so.12 in {site}/nvidia/cuda_cupti/lib; the "
                         f"loader's own search (skipped: SYNCBENCH_NO_TOOLKIT=1); set "
                         f"SYNCBENCH_CUPTI to a libcupti.so.13, or pip install nvidia-cuda-cupti "
                         f"(or install the CUDA toolkit)"), line


def site_cupti():
    """A CUPTI of NVIDIA's wheels on this Python's own sys.path (a machine with torch), or None."""
    for d in sys.path:
        for sub in ("nvidia/cu13/lib", "nvidia/cuda_cupti/lib"):
            f = os.path.join(d, sub, "libcupti.so.13")
            if os.path.exists(f):
                return f
    return None


def test_a_marked_test_without_cupti_fails_with_where_it_looked(tmp_path):
    """The pytest plugin: the marker's block cannot record, the test fails with that error."""
    if site_cupti():  # pytest itself comes from those site-packages: they cannot be left out
        pytest.skip(f"this Python's site-packages hold a CUPTI ({site_cupti()})")
    (tmp_path / "test_inner.py").write_text(textwrap.dedent("""
        import pytest
        @pytest.mark.no_syncs
        def test_marked():
            pass
        def test_plain():
            pass
    """))
    env = env_with(SYNCBENCH_NO_TOOLKIT=1, PYTHONPATH=SRC, SYNCBENCH_AUDIT_LIB=LIB)
    env.pop("PYTEST_ADDOPTS", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-p", "syncbench.pytest_plugin", "-q",
                        "-p", "no:cacheprovider", "-rf", "test_inner.py"], capture_output=True,
                       text=True, env=env, cwd=tmp_path, timeout=300)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 1 passed" in r.stdout, r.stdout
    assert ("SyncbenchUnavailable: syncbench: CUPTI not found: libsyncbench_audit.so needs "
            "libcupti.so.13; looked in") in r.stdout, r.stdout
