"""The binary where no CUDA library can be loaded: cuBLAS, cudart, the driver's libcuda and
NVML are hidden in a private mount namespace (tests/hidden_libs.py). Everything that needs no
GPU works; a GEMM run is exit 3 with one line. Skipped where mount namespaces are not
permitted."""
import subprocess
import sys

import pytest

from conftest import ROOT
from hidden_libs import (ALL_CUDA, CUBLAS, empty_file, hidden_command,  # noqa: F401 (fixture)
                         library_files, run_hidden)

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux only")

LOAD = "import ctypes, sys; ctypes.CDLL(sys.argv[1])"


def test_the_libraries_are_really_hidden(empty_file):
    """Guards the tests below against passing vacuously: libcublas is there outside the
    namespace (an ELF file the loader loads) and an empty, unloadable file inside it."""
    libs = [f for f in library_files(CUBLAS) if "libcublas.so" in f]
    if not libs:
        pytest.skip("no libcublas on this machine: nothing to hide")
    lib = libs[0]
    with open(lib, "rb") as f:
        assert f.read(4) == b"\x7fELF", lib
    outside = subprocess.run([sys.executable, "-c", LOAD, lib], capture_output=True, text=True)
    assert outside.returncode == 0, outside.stderr
    check = f'test ! -s "{lib}" && ! head -c 4 "{lib}" | grep -q ELF'
    r = subprocess.run(hidden_command(ALL_CUDA, empty_file, "sh", "-c", check),
                       capture_output=True, text=True)
    assert r.returncode == 0, (lib, r.stderr)
    inside = subprocess.run(hidden_command(ALL_CUDA, empty_file, sys.executable, "-c", LOAD, lib),
                            capture_output=True, text=True)
    assert inside.returncode != 0
    assert "too short" in inside.stderr or "invalid ELF header" in inside.stderr, inside.stderr


@pytest.mark.parametrize("args", [
    ["--help"],
    ["--version"],
    ["--list"],
    ["--config", "configs/ci.ini", "--dry-run"],
    ["--scenario", "small-gemm", "--dry-run"],
], ids=lambda a: " ".join(a))
def test_runs_without_cuda_libraries(empty_file, args):
    r = run_hidden(ALL_CUDA, empty_file, *args, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout and not r.stderr


HEADER = ("run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,"
          "metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n")


def test_compare_without_cuda_libraries(empty_file, tmp_path):
    row = ("r,t,h,GPU,d,13.0,copy,h2d-pinned,bytes=64MiB,10,20,GBps,GB/s,higher,"
           "{m},{m},0.1,{m},{m},{m},{m},0.2,\n")
    a, b = tmp_path / "A.csv", tmp_path / "B.csv"
    a.write_text(HEADER + row.format(m=55.0))
    b.write_text(HEADER + row.format(m=54.9))
    r = run_hidden(ALL_CUDA, empty_file, "compare", a, b)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 REGRESSION" in r.stdout


def test_gemm_without_cuda_libraries_is_exit_3_with_one_line(empty_file):
    r = run_hidden(ALL_CUDA, empty_file, "--scenario", "small-gemm", "--iters", "10",
                   "--max-time", "0.2")
    assert r.returncode == 3, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("syncbench: ")


def test_audit_without_cupti_is_exit_3_with_one_line(empty_file):
    """The injection library links libcupti: where it cannot be loaded, audit says so in one
    line and exits 3 before it starts the command."""
    r = run_hidden(["libcupti.so*"], empty_file, "audit", "--", "sh", "-c", "echo ran")
    assert r.returncode == 3, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("syncbench: audit: cannot load CUPTI"), lines[0]
    assert "ran" not in r.stdout


def test_audit_of_a_program_without_cuda_needs_no_driver(empty_file):
    """CUPTI loads without the driver: a program that never touches CUDA audits clean where
    no CUDA library but CUPTI is there, with its own exit code."""
    r = run_hidden(ALL_CUDA, empty_file, "audit", "--", "sh", "-c", "exit 4")
    assert r.returncode == 4, r.stderr
    assert "never initialized CUDA" in r.stderr
