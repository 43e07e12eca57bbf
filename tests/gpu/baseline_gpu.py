"""What the sync baseline's GPU tests share (tests/gpu/test_baseline_*.py, issue 46): the
program (tests/audit/baseline_loop.py) placed in a test's folder, with lines inserted above its
syncs or not; `syncbench audit` run on it or on its kept records; a pytest session of the
plugin run on it; the package's sources on PYTHONPATH; the lines of its `# SYNC:` markers.
Every run's folder is the program's, so that a site's file is `baseline_loop.py` in the
audit's report and in the plugin's.

SYNCBENCH_BASELINE_DRYRUN=DIR runs these tests without a GPU (tests/cli/test_baseline_dryrun.py):
DIR holds a stand-in torch and transformers that write the records the injection library would
(fakegpu.py), the program runs as a plain process and the audit reads its records with --from;
the plugin's sessions load fakegpu as a plugin, which stands in for the package's native
blocks. Only the tests' own logic is checked that way, never CUDA's."""
import atexit
import configparser
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

import pytest

from conftest import BIN, ROOT, gpu_available, torch_python

PROG = ROOT / "tests" / "audit" / "baseline_loop.py"
LIB = os.environ.get("SYNCBENCH_AUDIT_LIB", str(ROOT / "build" / "libsyncbench_audit.so"))
DRYRUN = os.environ.get("SYNCBENCH_BASELINE_DRYRUN")
GPU = bool(DRYRUN) or gpu_available()
PY = sys.executable if DRYRUN else (torch_python() if GPU else None)


def needs(module=None):
    """pytest marks: skipped without a GPU, torch with CUDA (and module, when named)."""
    marks = [pytest.mark.skipif(not GPU, reason="no NVIDIA GPU on this machine"),
             pytest.mark.skipif(GPU and not PY, reason="no Python with torch and CUDA (set "
                                                       "TORCH_PYTHON)")]
    if module and PY:
        missing = subprocess.run([PY, "-c", f"import {module}"], capture_output=True,
                                 env=env(ROOT)).returncode
        marks.append(pytest.mark.skipif(missing != 0, reason=f"no {module} for {PY}"))
    return marks


def has(module):
    """Does PY import module (with the tests' environment)?"""
    return bool(PY) and subprocess.run([PY, "-c", f"import {module}"], capture_output=True,
                                       env=env(ROOT)).returncode == 0


# the package's sources alone (no installation's metadata beside them, whose entry point would
# register the plugin a second time next to -p)
_SRC = None


def package():
    global _SRC
    if _SRC is None:
        _SRC = pathlib.Path(tempfile.mkdtemp(prefix="syncbench-pkg-"))
        atexit.register(shutil.rmtree, _SRC, True)
        shutil.copytree(ROOT / "python" / "syncbench", _SRC / "syncbench")
    return _SRC


def env(folder, with_package=True, github=False, **extra):
    """The audited program's environment: the package on PYTHONPATH (syncbench.step) or not
    (the program falls back on torch's NVTX range); under GitHub Actions with github."""
    e = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    e.pop("PYTEST_ADDOPTS", None)
    e.update(SYNCBENCH_AUDIT_LIB=LIB, PYTHONUNBUFFERED="1")
    path = [str(package())] if with_package else []
    if DRYRUN:
        path += [DRYRUN, str(pathlib.Path(DRYRUN) / "site-packages")]
    path.append(str(folder))
    e["PYTHONPATH"] = os.pathsep.join(path)
    if github:
        e.update(GITHUB_ACTIONS="true", GITHUB_WORKSPACE=str(folder),
                 GITHUB_STEP_SUMMARY=str(folder / "summary.md"))
    e.update(extra)
    return e


def place(folder, shift=0):
    """folder/baseline_loop.py: the program, with `shift` comment lines inserted at its
    `# SHIFT-HERE` line, above every sync. Its path."""
    text = PROG.read_text()
    assert "# SHIFT-HERE\n" in text
    text = text.replace("# SHIFT-HERE\n",
                        "# SHIFT-HERE\n" + "# a line inserted above every sync\n" * shift, 1)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "baseline_loop.py"
    path.write_text(text)
    return path


def variant(base, folder, shift=0, files=("syncs.ini",)):
    """folder: the program (shifted or not) and base's files, for a run of its own (a run
    reads its sources from its folder: base's records stay readable as they were)."""
    place(folder, shift)
    for name in files:
        shutil.copy(base / name, folder / name)
    return folder


def marks(path):
    """{marker: line} of the `# SYNC:<marker>` comments of path (each marker once)."""
    out = {}
    for i, text in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        m = re.search(r"# SYNC:(\w+)", text)
        if m:
            assert m.group(1) not in out, f"{path}: SYNC:{m.group(1)} twice"
            out[m.group(1)] = i
    return out


def _opt(opts, name):
    """The value of opts' option name, or None."""
    opts = list(opts)
    return opts[opts.index(name) + 1] if name in opts else None


def _dry(folder, j, opts, prog, env_kw):
    """Without a GPU: the program as a plain process writing its records (fakegpu), then the
    audit on them with --from; a completed process of the two's output."""
    opts = [str(o) for o in opts]
    keep = _opt(opts, "--keep")
    if keep is not None:
        i = opts.index("--keep")
        del opts[i:i + 2]
    recs = folder / (keep or f".records-{j.stem}")
    recs.mkdir(parents=True, exist_ok=False)
    e = env(folder, **env_kw)
    e["SYNCBENCH_AUDIT_DIR"] = str(recs.resolve())
    p = subprocess.run([PY, "baseline_loop.py", *map(str, prog)], capture_output=True,
                       text=True, cwd=folder, env=e, timeout=400)
    if p.returncode != 0:
        return p
    a = subprocess.run([BIN, "audit", "-q", "--json", str(j), "--from", str(recs), *opts],
                       capture_output=True, text=True, cwd=folder, env=e, timeout=400)
    return subprocess.CompletedProcess(a.args, a.returncode, p.stdout + a.stdout,
                                       p.stderr + a.stderr)


def audit(folder, *opts, prog=(), name="a", **env_kw):
    """`syncbench audit -q --json F OPTS [-- PY baseline_loop.py PROG...]` in folder:
    (the completed process, the JSON report or None)."""
    j = folder / f"{name}.json"
    if prog and DRYRUN:
        r = _dry(folder, j, opts, prog, env_kw)
    else:
        cmd = [BIN, "audit", "-q", "--json", str(j), *map(str, opts)]
        if prog:
            cmd += ["--", PY, "baseline_loop.py", *map(str, prog)]
        r = subprocess.run(cmd, capture_output=True, text=True, cwd=folder,
                           env=env(folder, **env_kw), timeout=400)
    report = json.loads(j.read_text()) if j.exists() else None
    return r, report


def program(folder, *prog, **env_kw):
    """PY baseline_loop.py PROG... in folder, not audited: (the completed process, its last
    line's JSON object or None)."""
    e = env(folder, **env_kw)
    r = subprocess.run([PY, "baseline_loop.py", *map(str, prog)], capture_output=True,
                       text=True, cwd=folder, env=e, timeout=400)
    lines = r.stdout.strip().splitlines()
    return r, (json.loads(lines[-1]) if r.returncode == 0 and lines else None)


def pytest_session(folder, test_file, *args, github=False):
    """A pytest session of the plugin on folder/test_file: (the completed process, {test name:
    (outcome, its failure's text)} from its JUnit XML)."""
    junit = folder / f"{pathlib.Path(test_file).stem}.xml"
    cmd = [PY, "-m", "pytest", "-p", "syncbench.pytest_plugin", "-p", "no:cacheprovider",
           "-q", "-rfE", f"--junitxml={junit}", *map(str, args), str(test_file)]
    if DRYRUN:
        cmd[3:3] = ["-p", "fakegpu"]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=folder,
                       env=env(folder, github=github), timeout=400)
    assert junit.exists(), r.stdout[-4000:] + r.stderr[-4000:]
    out = {}
    for tc in ET.parse(junit).getroot().iter("testcase"):
        kind, text = "passed", ""
        for child in tc:
            if child.tag in ("failure", "error", "skipped"):
                kind = {"failure": "failed", "error": "error", "skipped": "skipped"}[child.tag]
                text += child.get("message", "") + "\n" + (child.text or "")
        out[tc.get("name")] = (kind, text)
    return r, out


def annotations(r):
    return [x for x in r.stdout.splitlines() if x.startswith("::error")]


def detail(r, report=None):
    """What an assertion shows: the audit's stderr, stdout's end, the baseline's verdict."""
    b = (report or {}).get("baseline") or {}
    return (f"rc {r.returncode}\nstderr:\n{r.stderr[-4000:]}\nstdout:\n{r.stdout[-2000:]}\n"
            f"verdict: {b.get('verdict')}")


def lines_of(sites):
    return {s["line"] for s in sites}


def read_ini(path):
    """A baseline file as configparser reads it (keys as written)."""
    cp = configparser.ConfigParser(interpolation=None)
    cp.optionxform = str
    cp.read(path)
    return cp


def site_at(cp, line):
    """The name of the [site.N] section of cp whose line is line (one; else the test fails)."""
    found = [s for s in cp.sections() if s != "syncbench" and cp[s].get("line") == str(line)]
    assert len(found) == 1, (line, {s: dict(cp[s]) for s in cp.sections()})
    return found[0]


def write_ini(cp, path):
    with open(path, "w") as f:
        cp.write(f)

