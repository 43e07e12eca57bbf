"""The wheel and the sdist (issue 38: `pip install` is all a PyTorch user needs): `make wheel`'s
contents, metadata, entry points and tag; the wheel installed in a virtual environment (the
console script runs the packaged binary, which finds CUPTI in that environment's wheels; the
package finds its own library); the sdist's contents and its build through make; the package
alone (SYNCBENCH_NATIVE=none, what make install installs)."""
import configparser
import email.parser
import os
import platform
import re
import shutil
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

from conftest import BIN, ROOT

VERSION = (ROOT / "VERSION").read_text().strip()
NATIVES = ("syncbench", "libsyncbench_audit.so", "libsyncbench_waits.so")
PACKAGE = sorted(p.name for p in (ROOT / "python" / "syncbench").glob("*.py"))
# Beside _bin/, what PREFIX/share holds after make install: the suites and the man page
SHARE = sorted([f"share/syncbench/configs/{p.name}" for p in (ROOT / "configs").glob("*.ini")] +
               ["share/man/man1/syncbench.1"])
FAKE = ROOT / "build" / "tests" / "fake_cuda"
FAKE_CUPTI = ROOT / "build" / "tests" / "fake-cupti" / "libcupti.so.13"
# The make build folder the binary under test comes from (its objects are relinked)
BUILD = Path(BIN).parent if (Path(BIN).parent / "libsyncbench.a").exists() else ROOT / "build"
STEERING = ("LD_LIBRARY_PATH", "CUDA_HOME", "SYNCBENCH_CUPTI", "SYNCBENCH_SITE_PACKAGES",
            "VIRTUAL_ENV", "CONDA_PREFIX", "SYNCBENCH_NO_TOOLKIT", "LD_PRELOAD", "PYTHONPATH",
            "SYNCBENCH_AUDIT_LIB", "SYNCBENCH_WAITS_LIB", "CUDA_INJECTION64_PATH")


def wheel_python():
    """The Python make wheel uses (setuptools and wheel), or a skip."""
    for py in ("python3", "/usr/bin/python3"):
        if shutil.which(py) and subprocess.run([py, "-c", "import setuptools, wheel"],
                                               capture_output=True).returncode == 0:
            return py
    pytest.skip("no Python with setuptools and wheel here to build the wheel")


def clean_env(**over):
    env = {k: v for k, v in os.environ.items() if k not in STEERING}
    env.update({k: str(v) for k, v in over.items()})
    return env


@pytest.fixture(scope="module")
def dist(tmp_path_factory):
    wheel_python()
    out = tmp_path_factory.mktemp("dist")
    r = subprocess.run(["make", "-C", str(ROOT), f"BUILD={BUILD}", f"DIST={out}", "wheel", "sdist"],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    return out


@pytest.fixture(scope="module")
def whl(dist):
    (path,) = dist.glob("syncbench-*.whl")
    return path


def dist_info(whl, name):
    with zipfile.ZipFile(whl) as z:
        return z.read(f"syncbench-{VERSION}.dist-info/{name}").decode()


def test_the_wheel_holds_the_package_the_libraries_and_the_binary(whl):
    with zipfile.ZipFile(whl) as z:
        names = sorted(z.namelist())
        modes = {i.filename: i.external_attr >> 16 for i in z.infolist()}
    info = f"syncbench-{VERSION}.dist-info/"
    assert names == sorted([f"syncbench/{p}" for p in PACKAGE] +
                           [f"syncbench/_bin/{n}" for n in NATIVES] +
                           [f"syncbench/{s}" for s in SHARE] +
                           [info + n for n in ("METADATA", "WHEEL", "entry_points.txt",
                                               "top_level.txt", "RECORD")]), names
    for n in NATIVES:  # pip keeps the mode: the binary runs, the libraries load
        assert modes[f"syncbench/_bin/{n}"] & 0o111 == 0o111, oct(modes[f"syncbench/_bin/{n}"])
    record = dist_info(whl, "RECORD")
    assert all(f"syncbench/_bin/{n},sha256=" in record for n in NATIVES), record


def test_the_wheels_metadata(whl):
    meta = email.parser.Parser().parsestr(dist_info(whl, "METADATA"))
    assert meta["Name"] == "syncbench"
    assert meta["Version"] == VERSION  # VERSION, the Makefile's too
    assert meta["Requires-Python"] == ">=3.9"
    assert meta["License"] == "MIT"
    assert meta.get_all("Provides-Extra") == ["pytest"]
    (req,) = meta.get_all("Requires-Dist")
    assert re.fullmatch(r"""pytest ?\(?>=7\)? ?; extra == ["']pytest["']""", req), req
    assert meta["Description-Content-Type"] == "text/markdown"
    assert meta.get_payload().strip() == (ROOT / "README.md").read_text().strip()
    assert meta["Summary"]


def test_the_wheels_entry_points(whl):
    eps = configparser.ConfigParser(delimiters=("=",))
    eps.optionxform = str
    eps.read_string(dist_info(whl, "entry_points.txt"))
    assert dict(eps["console_scripts"]) == {"syncbench": "syncbench._cli:main"}
    assert dict(eps["pytest11"]) == {"syncbench.pytest_plugin": "syncbench.pytest_plugin"}


def glibc_needed(files):
    """The highest GLIBC_2.X the files need, read by readelf (setup.py reads objdump)."""
    out = subprocess.run(["readelf", "-V", "--wide", *map(str, files)], capture_output=True,
                         text=True, check=True).stdout
    return max((int(a), int(b)) for a, b in re.findall(r"Name: GLIBC_(\d+)\.(\d+)", out))


def test_the_tag_is_the_glibc_the_files_need(whl, tmp_path):
    with zipfile.ZipFile(whl) as z:
        z.extractall(tmp_path)
    major, minor = glibc_needed(tmp_path / "syncbench" / "_bin" / n for n in NATIVES)
    tag = f"py3-none-manylinux_{major}_{minor}_{platform.machine()}"
    assert whl.name == f"syncbench-{VERSION}-{tag}.whl"
    wheel = dist_info(whl, "WHEEL")
    assert f"Tag: {tag}\n" in wheel and "Root-Is-Purelib: false\n" in wheel, wheel


def test_the_packaged_files_carry_no_path_of_this_machine(whl, tmp_path):
    """No rpath to the build's toolkit: CUPTI and cuBLAS are found where the user has them; the
    audit's library needs libcupti by soname."""
    with zipfile.ZipFile(whl) as z:
        z.extractall(tmp_path)
    for n in NATIVES:
        dyn = subprocess.run(["readelf", "-d", str(tmp_path / "syncbench" / "_bin" / n)],
                             capture_output=True, text=True, check=True).stdout
        assert "RPATH" not in dyn and "RUNPATH" not in dyn, (n, dyn)
        if n == "libsyncbench_audit.so":
            assert "Shared library: [libcupti.so.13]" in dyn, dyn
    binary = tmp_path / "syncbench" / "_bin" / "syncbench"
    binary.chmod(0o755)  # zipfile does not keep modes (pip does)
    r = subprocess.run([str(binary), "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.startswith(f"syncbench {VERSION} "), r.stdout


@pytest.fixture(scope="module")
def venv(whl, tmp_path_factory):
    """A virtual environment that sees this machine's packages (pytest), the wheel installed
    with pip --no-index."""
    where = tmp_path_factory.mktemp("venv") / "v"
    r = subprocess.run([wheel_python(), "-m", "venv", "--system-site-packages", str(where)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode:
        pytest.skip(f"no venv with pip here: {r.stderr.strip()[-200:]}")
    r = subprocess.run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--no-index",
                        str(whl)], capture_output=True, text=True, timeout=300, env=clean_env())
    assert r.returncode == 0, r.stdout + r.stderr
    site = subprocess.run([str(where / "bin" / "python"), "-c",
                           "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    return where, Path(site)


def test_the_console_script_runs_the_packaged_binary(venv):
    where, site = venv
    exe = where / "bin" / "syncbench"
    assert exe.read_bytes()[:2] == b"#!"  # pip's script, not the binary
    r = subprocess.run([str(exe), "--version"], capture_output=True, text=True, env=clean_env())
    binary = subprocess.run([str(site / "syncbench" / "_bin" / "syncbench"), "--version"],
                            capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout == binary.stdout, r.stderr
    r = subprocess.run([str(exe), "--iters", "0"], capture_output=True, text=True, env=clean_env())
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr  # the binary's own


def test_the_wheel_carries_the_suites_and_the_man_page(whl, tmp_path):
    """The wheel had neither: `--config configs/seeds.ini` worked only inside a checkout and
    there was no man page (issue 48). The man page is `syncbench __man`'s."""
    with zipfile.ZipFile(whl) as z:
        for ini in (ROOT / "configs").glob("*.ini"):
            assert z.read(f"syncbench/share/syncbench/configs/{ini.name}") == ini.read_bytes()
        page = z.read("syncbench/share/man/man1/syncbench.1").decode()
    r = subprocess.run([BIN, "__man"], capture_output=True, text=True)
    assert r.returncode == 0 and page == r.stdout


def test_the_console_script_finds_the_installed_suites_by_name(venv, tmp_path):
    where, site = venv
    r = subprocess.run([str(where / "bin" / "syncbench"), "--config", "seeds.ini", "--dry-run"],
                       capture_output=True, text=True, cwd=tmp_path,
                       env=clean_env(CUDA_VISIBLE_DEVICES=""))
    assert r.returncode == 0, r.stderr
    here = subprocess.run([BIN, "--config", str(ROOT / "configs" / "seeds.ini"), "--dry-run"],
                          capture_output=True, text=True, env=clean_env(CUDA_VISIBLE_DEVICES=""))
    assert r.stdout == here.stdout
    assert (site / "syncbench" / "share" / "man" / "man1" / "syncbench.1").is_file()


def test_the_audit_from_the_console_script_finds_cupti_in_the_environments_wheel(venv, tmp_path):
    """`syncbench audit` run from the environment's bin/ with no toolkit: CUPTI in the
    environment's nvidia/cu13/lib (a stand-in) is found, handed on, and watches the program."""
    where, site = venv
    wheel_lib = site / "nvidia" / "cu13" / "lib"
    wheel_lib.mkdir(parents=True, exist_ok=True)
    shutil.copy(FAKE_CUPTI, wheel_lib / "libcupti.so.13")
    try:
        r = subprocess.run([str(where / "bin" / "syncbench"), "audit", "-q", "--max-syncs", "0",
                            "--", "sh", "-c", f'echo "SP=$SYNCBENCH_SITE_PACKAGES"; '
                            f'echo "LLP=$LD_LIBRARY_PATH"; exec {FAKE}'],
                           capture_output=True, text=True, env=clean_env(SYNCBENCH_NO_TOOLKIT=1),
                           timeout=120)
    finally:
        shutil.rmtree(site / "nvidia")
    assert r.returncode == 0, r.stderr
    assert "audit gate: passed" in r.stderr, r.stderr
    lines = dict(x.split("=", 1) for x in r.stdout.splitlines() if "=" in x)
    assert str(site) in lines["SP"].split(":"), lines
    assert lines["LLP"] == str(wheel_lib), lines


def test_the_audit_without_cupti_in_the_environment_says_where_it_looked(venv, tmp_path):
    where, site = venv
    marker = tmp_path / "started"
    r = subprocess.run([str(where / "bin" / "syncbench"), "audit", "--", "touch", str(marker)],
                       capture_output=True, text=True, env=clean_env(SYNCBENCH_NO_TOOLKIT=1),
                       timeout=120)
    assert r.returncode == 3 and not marker.exists(), r.stderr
    (line,) = r.stderr.splitlines()
    assert line.startswith("syncbench: audit: CUPTI not found: libsyncbench_audit.so needs "
                           "libcupti.so.13; looked in "), line
    assert f"the wheels' nvidia/cu13/lib and nvidia/cuda_cupti/lib under {site}" in line, line


def test_the_installed_package_uses_its_own_library_and_the_wheels_cupti(venv):
    where, site = venv
    wheel_lib = site / "nvidia" / "cuda_cupti" / "lib"  # CUDA 12's layout, a CUDA 13 file
    wheel_lib.mkdir(parents=True, exist_ok=True)
    shutil.copy(FAKE_CUPTI, wheel_lib / "libcupti.so.13")
    try:
        r = subprocess.run([str(where / "bin" / "python"), "-c", textwrap.dedent("""
            from syncbench import _native
            _native._load()
            print(_native._lib_path); print(_native.cupti_path); print(_native.cupti_from)
            print(_native.analyzer())
        """)], capture_output=True, text=True, env=clean_env(SYNCBENCH_NO_TOOLKIT=1,
                                                             PATH="/usr/bin:/bin"), cwd="/")
    finally:
        shutil.rmtree(site / "nvidia")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [str(site / "syncbench" / "_bin" / "libsyncbench_audit.so"),
                                     str(wheel_lib / "libcupti.so.13"), "a wheel",
                                     str(site / "syncbench" / "_bin" / "syncbench")], r.stdout


def test_the_installed_plugin_registers(venv, tmp_path):
    where, _ = venv
    if subprocess.run([str(where / "bin" / "python"), "-c", "import pytest"]).returncode:
        pytest.skip("no pytest for this Python")
    (tmp_path / "test_x.py").write_text("def test_x(): pass\n")
    r = subprocess.run([str(where / "bin" / "python"), "-m", "pytest", "--markers", "-p",
                        "no:cacheprovider"], capture_output=True, text=True, cwd=tmp_path,
                       env=clean_env())
    assert r.returncode == 0, r.stderr
    assert "@pytest.mark.no_syncs(allow=0, all_threads=False)" in r.stdout


def test_the_sdist_holds_what_the_build_needs(dist):
    (sdist,) = dist.glob("syncbench-*.tar.gz")
    assert sdist.name == f"syncbench-{VERSION}.tar.gz"
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
        pkg_info = t.extractfile(f"syncbench-{VERSION}/PKG-INFO").read().decode()
    for need in ("Makefile", "VERSION", "setup.py", "pyproject.toml", "README.md", "src/main.c",
                 "src/cmd/cupti_find.c", "src/base/cudalib.c", "inject/inject.c",
                 "waits/waits.c", "kernels/kernels.h", "python/syncbench/_cli.py",
                 "python/syncbench/_cupti.py"):
        assert need in names, need
    assert f"Version: {VERSION}\n" in pkg_info


def test_building_the_sdist_runs_make(dist, tmp_path):
    """pip's build of the sdist calls `make wheel-natives` in the unpacked tree (here a stand-in
    for make that copies this build's files) and packs what it built."""
    (sdist,) = dist.glob("syncbench-*.tar.gz")
    fake = tmp_path / "bin"
    fake.mkdir()
    log = tmp_path / "make.log"
    (fake / "make").write_text(textwrap.dedent(f"""\
        #!/bin/sh
        echo "$@" >>{log}
        while [ "$1" != "-C" ]; do shift; done
        tree=$2
        mkdir -p "$tree/build/wheel"
        for f in {" ".join(NATIVES)} syncbench.1; do cp {BUILD}/wheel/$f "$tree/build/wheel/$f"; done
        echo built >"$tree/build/wheel/by-fake-make"
    """))
    (fake / "make").chmod(0o755)
    out = tmp_path / "out"
    r = subprocess.run([wheel_python(), "-m", "pip", "wheel", "-q", "--no-deps",
                        "--no-build-isolation", "--no-index", "-w", str(out), str(sdist)],
                       capture_output=True, text=True, timeout=600,
                       env=clean_env(PATH=f"{fake}:{os.environ['PATH']}"))
    assert r.returncode == 0, r.stdout + r.stderr
    (args,) = log.read_text().splitlines()
    assert args.split()[-1] == "wheel-natives" and "DEPS_PY=0" in args.split(), args
    (built,) = out.glob("*.whl")
    with zipfile.ZipFile(built) as z:
        assert {f"syncbench/_bin/{n}" for n in NATIVES} <= set(z.namelist())


def test_the_package_alone_is_a_pure_wheel_without_the_console_script(tmp_path):
    """SYNCBENCH_NATIVE=none (make install): no binary, no libraries, no console script (it
    would replace the binary make install puts on PATH)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "VERSION", "README.md"):
        shutil.copy(ROOT / name, src / name)
    shutil.copytree(ROOT / "python" / "syncbench", src / "python" / "syncbench")
    r = subprocess.run([wheel_python(), "-m", "pip", "wheel", "-q", "--no-deps",
                        "--no-build-isolation", "--no-index", "-w", str(tmp_path / "out"),
                        str(src)], capture_output=True, text=True, timeout=300,
                       env=clean_env(SYNCBENCH_NATIVE="none"))
    assert r.returncode == 0, r.stdout + r.stderr
    (built,) = (tmp_path / "out").glob("*.whl")
    assert built.name == f"syncbench-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(built) as z:
        assert not [n for n in z.namelist() if "_bin/" in n]
        eps = z.read(f"syncbench-{VERSION}.dist-info/entry_points.txt").decode()
    assert "console_scripts" not in eps and "[pytest11]" in eps, eps
