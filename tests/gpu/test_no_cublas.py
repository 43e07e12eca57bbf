"""A GPU machine without cuBLAS: the cuBLAS files are hidden in a private mount namespace
(tests/hidden_libs.py). A GEMM run is exit 3 with one line naming cuBLAS; a run without GEMMs
still measures. Skipped where there is no GPU or mount namespaces are not permitted."""
import json

import pytest

from conftest import gpu_available
from hidden_libs import CUBLAS, empty_file, run_hidden  # noqa: F401 (empty_file: a fixture)

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")


def test_gemm_without_cublas_is_exit_3_with_one_line(empty_file):
    r = run_hidden(CUBLAS, empty_file, "--scenario", "small-gemm", "--iters", "10",
                   "--max-time", "0.2")
    assert r.returncode == 3, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("syncbench: cannot load cuBLAS (")
    assert "cuBLAS" in lines[0]


def test_copy_runs_without_cublas(empty_file, tmp_path):
    out = tmp_path / "copy.json"
    r = run_hidden(CUBLAS, empty_file, "--scenario", "copy", "--set", "bytes=1MiB",
                   "--max-time", "0.2", "--json", out)
    assert r.returncode == 0, r.stderr
    assert json.loads(out.read_text())["environment"]["cublas"] == "not loaded"
