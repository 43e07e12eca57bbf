"""The Makefile as a new user and CI drive it, read with `make -n` (nothing is built): what
`make run` and `make test` build, user CFLAGS, and what `make test-asan` covers."""
import subprocess

import pytest

from conftest import ROOT


def make_n(tmp_path, *args):
    r = subprocess.run(["make", "-n", f"BUILD={tmp_path}/b", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("target", ["test", "run"])
def test_make_builds_the_injection_library(tmp_path, target):
    """A fresh clone's `make run; make test`: both build libsyncbench_audit.so (17 audit tests
    failed when neither did)."""
    assert f"{tmp_path}/b/libsyncbench_audit.so" in make_n(tmp_path, target)


@pytest.mark.parametrize("target", ["all", "test", "validate", "install"])
def test_make_builds_the_waits_library(tmp_path, target):
    """The launcher preloads libsyncbench_waits.so from beside the injection library: what
    builds or installs that one builds or installs this one beside it."""
    out = make_n(tmp_path, target, f"DESTDIR={tmp_path}/d")
    assert f"{tmp_path}/b/libsyncbench_waits.so" in out
    if target == "install":
        assert f"{tmp_path}/d/usr/local/lib/syncbench/libsyncbench_waits.so" in out


def test_user_cflags_keep_what_the_code_needs(tmp_path):
    """`make CFLAGS=-O1`: the optimization is the user's, -std=c11 -D_GNU_SOURCE and the
    warnings stay (the build broke without _GNU_SOURCE)."""
    out = make_n(tmp_path, "V=1", "CFLAGS=-O1 -fsanitize=address", f"{tmp_path}/b/obj/src/main.o")
    line = next(ln for ln in out.splitlines() if "-c" in ln.split() and "src/main.c" in ln)
    for flag in ("-O1", "-fsanitize=address", "-std=c11", "-D_GNU_SOURCE", "-Werror"):
        assert flag in line.split(), (flag, line)


def test_test_asan_runs_the_cli_tests_on_a_sanitized_binary(tmp_path):
    out = make_n(tmp_path, "test-asan")
    assert f"{tmp_path}/b/asan-bin/syncbench" in out
    assert "-fsanitize=address,undefined" in out
    assert "pytest" in out and "tests/cli" in out


# make run and make fixes on a machine without a GPU (issue 48): the check comes before the
# build, and prints the binary's own line.
NO_DRIVER = ("syncbench: no usable CUDA device: the NVIDIA driver is not installed ({} not "
             "found); run on a machine with an NVIDIA GPU")
NO_DEVICE = ("syncbench: no usable CUDA device: no device found; check that an NVIDIA GPU and "
             "its driver are installed (nvidia-smi)")


def fake_machine(tmp_path, caps=None):
    """PATH with an nvidia-smi that lists GPUs of compute capabilities `caps` (None: fails, as
    one without a driver), and a folder holding a libcuda.so.1 that loads."""
    import os
    import shutil
    import textwrap
    bin_dir, lib_dir = tmp_path / "fakebin", tmp_path / "fakelib"
    bin_dir.mkdir()
    lib_dir.mkdir()
    gpus = "\n".join(f"GPU {i}: NVIDIA Fake (UUID: GPU-{i})" for i, _ in enumerate(caps or ()))
    smi = textwrap.dedent(f"""\
        #!/bin/sh
        {"exit 9" if caps is None else ""}
        case "$*" in
          *--query-gpu=compute_cap*) printf '%s\\n' {" ".join(caps or ())} ;;
          *-L*) printf '%s\\n' "{gpus}" ;;
        esac
        """)
    (bin_dir / "nvidia-smi").write_text(smi)
    (bin_dir / "nvidia-smi").chmod(0o755)
    cc = shutil.which("cc") or shutil.which("gcc")
    subprocess.run([cc, "-shared", "-fPIC", "-x", "c", "-", "-o", str(lib_dir / "libcuda.so.1")],
                   input="int cuInit(unsigned f) { return (int)f; }\n", text=True, check=True)
    env = dict(outer_make_cleared(), PATH=f"{bin_dir}:{os.environ['PATH']}",
               LD_LIBRARY_PATH=str(lib_dir))
    return env


def outer_make_cleared():
    """This environment less what an outer make (make test) hands down: its -j and its level,
    which would print make[1]'s "Entering directory" lines, and the variables set on its command
    line, which make exports (`make CUDA_ARCHS=90 test` would pin the architectures these tests
    expect make to choose)."""
    import os
    drop = ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "CUDA_ARCHS")
    return {k: v for k, v in os.environ.items() if k not in drop}


def driver_lib_absent():
    """The driver's name here, or a name no machine has where this one has the driver: the
    check looks for it as the binary looks for libcuda.so.1."""
    r = subprocess.run(["/bin/sh", "-c", "ldconfig -p | grep -q '[[:space:]]libcuda.so.1 '"])
    return "libcuda.so.1" if r.returncode else "libcuda-absent-for-the-test.so.1"


@pytest.mark.parametrize("target", ["run", "fixes"])
def test_make_run_without_a_driver_stops_before_building(tmp_path, target):
    """A fresh clone on a machine without a GPU: `make run` built for every architecture on one
    core for two minutes before the binary said there is no GPU. Now the one line, at once."""
    import os
    import time
    lib = driver_lib_absent()
    env = {k: v for k, v in outer_make_cleared().items() if k != "LD_LIBRARY_PATH"}
    start = time.monotonic()
    r = subprocess.run(["make", target, f"BUILD={tmp_path}/b", f"GPU_DRIVER_LIB={lib}"],
                       cwd=ROOT, capture_output=True, text=True, timeout=120, env=env)
    took = time.monotonic() - start
    assert took < 15, took
    assert r.returncode == 2, r.stdout + r.stderr  # make's own status for a failed recipe
    lines = r.stderr.splitlines()
    assert lines[0] == NO_DRIVER.format(lib), lines
    assert len(lines) == 2 and lines[1].endswith(f"{target}] Error 3"), lines
    assert r.stdout == "" and not (tmp_path / "b").exists(), r.stdout  # nothing compiled


def test_make_run_with_a_driver_but_no_gpu_says_so(tmp_path):
    import glob
    if glob.glob("/dev/nvidia[0-9]*"):
        pytest.skip("this machine has a GPU device node")
    env = fake_machine(tmp_path, caps=None)
    r = subprocess.run(["make", "run", f"BUILD={tmp_path}/b"], cwd=ROOT, capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 2 and r.stderr.splitlines()[0] == NO_DEVICE, r.stderr
    assert not (tmp_path / "b").exists()


def nvcc_archs(out):
    import re
    lines = [ln for ln in out.splitlines() if "/nvcc " in ln and " -c " in ln]
    assert lines, out
    return {frozenset(re.findall(r"code=sm_(\d+)", ln)) for ln in lines}


def test_make_run_builds_for_this_machines_gpus_on_every_core(tmp_path):
    env = fake_machine(tmp_path, caps=["9.0", "8.6", "9.0"])
    r = subprocess.run(["make", "-n", "run", f"BUILD={tmp_path}/b", "V=1"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert nvcc_archs(r.stdout) == {frozenset({"86", "90"})}
    assert "make --no-print-directory -j$(nproc) " in r.stdout, r.stdout
    # the user's -j and CUDA_ARCHS win
    r = subprocess.run(["make", "-n", "-j3", "run", f"BUILD={tmp_path}/b", "V=1",
                        "CUDA_ARCHS=75"], cwd=ROOT, capture_output=True, text=True,
                       timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert nvcc_archs(r.stdout) == {frozenset({"75"})}
    assert "-j$(nproc)" not in r.stdout


@pytest.mark.parametrize("target", ["wheel-natives", "all"])
def test_packaging_and_all_build_every_architecture(tmp_path, target):
    env = fake_machine(tmp_path, caps=["9.0"])
    r = subprocess.run(["make", "-n", target, f"BUILD={tmp_path}/b", "V=1"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert nvcc_archs(r.stdout) == {frozenset("75 80 86 87 88 89 90 100 103 110 120 121".split())}


def test_a_build_for_other_architectures_rebuilds_the_kernels(tmp_path):
    """make run builds for the local GPU alone; a later make wheel must not pack that build: the
    kernels depend on a stamp of the architectures, rewritten only when they change."""
    import time
    stamp = tmp_path / "b" / "obj" / "kernels" / "gencode"

    def make_stamp(archs):
        subprocess.run(["make", f"BUILD={tmp_path}/b", f"CUDA_ARCHS={archs}", str(stamp)],
                       cwd=ROOT, capture_output=True, check=True, timeout=120)
        return stamp.stat().st_mtime_ns, stamp.read_text()

    first, text = make_stamp("90")
    assert "sm_90" in text and "sm_75" not in text
    time.sleep(0.05)
    assert make_stamp("90") == (first, text)  # unchanged: nothing rebuilt
    later, text = make_stamp("75 90")
    assert "sm_75" in text and later > first


def system_site_entries(python):
    """The syncbench entries of the Python's own site-packages folders (and the user's), with
    their modification times."""
    import json
    code = ("import glob, json, os, site; dirs = site.getsitepackages() + "
            "[site.getusersitepackages()]; print(json.dumps({p: os.stat(p).st_mtime_ns for d in "
            "dirs for p in glob.glob(os.path.join(d, 'syncbench*'))}))")
    return json.loads(subprocess.run([python, "-c", code], capture_output=True, text=True,
                                     check=True).stdout)


def test_make_install_writes_nothing_outside_prefix_and_destdir(tmp_path):
    """make install PREFIX=$HOME/opt pip-installed the Python package into the system's Python
    (--break-system-packages), outside PREFIX, without a word (issue 48)."""
    import sys
    from pathlib import Path
    from conftest import BIN
    build = Path(BIN).parent if (Path(BIN).parent / "libsyncbench.a").exists() else ROOT / "build"
    prefix, dest = tmp_path / "opt", tmp_path / "dest"
    dry = make_n(tmp_path, "install", f"PREFIX={prefix}", f"DESTDIR={dest}")
    assert "--break-system-packages" not in dry and "pip uninstall" not in dry
    pips = [ln for ln in dry.splitlines() if " pip install " in ln]
    assert f"site={prefix}/lib/python$(" in dry, dry
    assert pips and all(f"--target {dest}$site" in ln.replace('"', "") for ln in pips), pips
    python = sys.executable
    before = system_site_entries(python)
    r = subprocess.run(["make", "install", f"BUILD={build}", f"PREFIX={prefix}",
                        f"DESTDIR={dest}", f"PYTHON={python}"], cwd=ROOT, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stdout + r.stderr
    assert system_site_entries(python) == before
    assert not prefix.exists()  # DESTDIR: everything under it
    root = dest / str(prefix).lstrip("/")
    ver = "%d.%d" % sys.version_info[:2]
    site = root / "lib" / f"python{ver}" / "site-packages"
    assert (site / "syncbench" / "__init__.py").is_file()
    assert f"export PYTHONPATH={prefix}/lib/python{ver}/site-packages" in r.stdout, r.stdout
    installed = {str(p.relative_to(root)).split("/")[0] for p in root.iterdir()}
    assert installed == {"bin", "lib", "share"}, installed
    r = subprocess.run([python, "-c", "import syncbench; print(syncbench.__file__)"],
                       capture_output=True, text=True, cwd=tmp_path,
                       env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"})
    assert r.returncode == 0 and r.stdout.startswith(str(site)), r.stderr
    r = subprocess.run(["make", "uninstall", f"PREFIX={prefix}", f"DESTDIR={dest}"], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert not [p for p in dest.rglob("*") if p.is_file()]
