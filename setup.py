"""syncbench's wheel and sdist (pyproject.toml holds the metadata).

The wheel holds the package of python/ and, in syncbench/_bin/, the binary, the audit's CUPTI
library and the waits library, in syncbench/share/ the suites and the man page, with a console
script (`syncbench = syncbench._cli:main`) that runs the binary. They come from SYNCBENCH_NATIVE:
  unset or "make"  `make wheel-natives` is run here (an sdist, or `pip install .` of the tree:
                   the CUDA toolkit and the build's Debian packages are needed; CUDA_ARCHS,
                   CUDA_HOME and DEPS_PREFIX pass through to make);
  a folder         the files are taken from it (`make wheel` builds them first);
  "none"           the package alone, no console script (`make install`, which installs the
                   binary and the libraries under PREFIX itself): a py3-none-any wheel.
A wheel with them is tagged py3-none-manylinux_2_X_ARCH: 2.X is the highest GLIBC_2.X version
their dynamic symbols need (objdump -T). libcupti is left out on purpose: the audit finds the
user's (the toolkit's or NVIDIA's wheel's) at run time, as the driver (libcuda) is.
SYNCBENCH_BUILD names the make build folder (build): setuptools builds in its py/ folder."""
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools 70.1 and later have their own; before, the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    from wheel.bdist_wheel import bdist_wheel

ROOT = Path(__file__).resolve().parent
NATIVES = ("syncbench", "libsyncbench_audit.so", "libsyncbench_waits.so")
MODE = os.environ.get("SYNCBENCH_NATIVE", "make") or "make"
BUILD = Path(os.environ.get("SYNCBENCH_BUILD") or "build")
PY_BUILD = (BUILD if BUILD.is_absolute() else ROOT / BUILD) / "py"


def fail(message):
    sys.stderr.write(f"syncbench setup.py: {message}\n")
    raise SystemExit(1)


def make_natives():
    """`make wheel-natives` in this tree: the folder the files are in."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    cmd = ["make", "-C", str(ROOT), f"-j{os.cpu_count() or 1}", f"BUILD={BUILD}", "DEPS_PY=0",
           "wheel-natives"]
    print("syncbench setup.py: " + " ".join(cmd), flush=True)
    if subprocess.run(cmd, env=env).returncode:
        fail("building the binary and the libraries failed (make wheel-natives, above): a build "
             "from source needs the CUDA 13 toolkit (CUDA_HOME, else /usr/local/cuda) and "
             "inih, jansson and libcsv (make deps names the Debian packages); or install a "
             "wheel built where they are")
    return (BUILD if BUILD.is_absolute() else ROOT / BUILD) / "wheel"


def glibc_tag(files):
    """manylinux_2_X_ARCH for the highest GLIBC_2.X the files' dynamic symbols need."""
    r = subprocess.run(["objdump", "-T", *map(str, files)], capture_output=True, text=True)
    if r.returncode:
        fail(f"objdump -T failed (binutils): {r.stderr.strip()}")
    versions = {(int(a), int(b)) for a, b in re.findall(r"\bGLIBC_(\d+)\.(\d+)", r.stdout)}
    if not versions:
        fail("objdump -T names no GLIBC_ version: cannot tag the wheel")
    major, minor = max(versions)
    return f"manylinux_{major}_{minor}_{platform.machine()}"


class BuildPy(build_py):
    """The package, then the binary and the libraries in syncbench/_bin/ (mode kept: the binary
    and the libraries executable), and beside _bin/ what PREFIX/share holds beside PREFIX/bin
    after make install: the suites in share/syncbench/configs/ (the binary's `--config NAME.ini`
    looks in ../share/syncbench/configs) and the man page in share/man/man1/."""

    def run(self):
        super().run()
        if MODE == "none":
            return
        src = make_natives() if MODE == "make" else Path(MODE)
        dest = Path(self.build_lib) / "syncbench" / "_bin"
        dest.mkdir(parents=True, exist_ok=True)
        for name in NATIVES:
            if not (src / name).is_file():
                fail(f"{src / name} is missing (SYNCBENCH_NATIVE={MODE})")
            shutil.copy2(src / name, dest / name)
        self.distribution.plat_tag = glibc_tag(dest / name for name in NATIVES)
        share = dest.parent / "share"
        if not (src / "syncbench.1").is_file():
            fail(f"{src / 'syncbench.1'} is missing (SYNCBENCH_NATIVE={MODE})")
        (share / "man" / "man1").mkdir(parents=True, exist_ok=True)
        shutil.copy2(src / "syncbench.1", share / "man" / "man1" / "syncbench.1")
        (share / "syncbench" / "configs").mkdir(parents=True, exist_ok=True)
        for ini in sorted((ROOT / "configs").glob("*.ini")):
            shutil.copy2(ini, share / "syncbench" / "configs" / ini.name)


class BdistWheel(bdist_wheel):
    """py3-none-manylinux_2_X_ARCH with the files of _bin/; py3-none-any without them."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = MODE == "none"

    def get_tag(self):
        if MODE == "none":
            return super().get_tag()
        return "py3", "none", self.distribution.plat_tag


class NativeDistribution(Distribution):
    """With the binary and the libraries the wheel is a platform's (its root platlib)."""

    def has_ext_modules(self):
        return MODE != "none"


# The entry point's name is the module's: pytest registers a plugin under the name it is loaded
# by, and `-p syncbench.pytest_plugin` (the README's command for one test file) then finds it
# registered already instead of registering the module a second time under another name (a
# ValueError that stopped pytest). Turned off with -p no:syncbench.pytest_plugin. The console
# script only where the binary is packaged: `make install` puts the binary itself on PATH.
ENTRY_POINTS = {"pytest11": ["syncbench.pytest_plugin = syncbench.pytest_plugin"]}
if MODE != "none":
    ENTRY_POINTS["console_scripts"] = ["syncbench = syncbench._cli:main"]

PY_BUILD.mkdir(parents=True, exist_ok=True)
setup(
    distclass=NativeDistribution,
    cmdclass={"build_py": BuildPy, "bdist_wheel": BdistWheel},
    entry_points=ENTRY_POINTS,
    options={"build": {"build_base": str(PY_BUILD)}, "egg_info": {"egg_base": str(PY_BUILD)}},
)
