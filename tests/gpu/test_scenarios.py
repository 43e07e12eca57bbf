"""readback, copy and double-buffer on a real GPU: every variant runs, passes its check and
reports each of its metrics; a size that does not fit host memory is refused before anything
is measured (their checks are tested in test_faults.py). Fixed repetition counts, no timing:
the figures the guides promise (a readback waits for the pending work, pinned beats pageable at
64 MiB, double buffering overlaps) are tests/validate/'s (`make validate`). Skipped where there
is no GPU."""
import pytest

from conftest import gpu_available, measure_rows, run
from gpu_common import FIXED

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")


def metrics(rows):
    """{(variant, params): set of metrics}."""
    got = {}
    for variant, params, metric in rows:
        got.setdefault((variant, params), set()).add(metric)
    return got


RB = "pending_us=1000;pending=spin;print_elems=16"


def test_readback_every_variant(tmp_path):
    got = metrics(measure_rows(tmp_path, "--scenario", "readback", "--iters", "5", fast=FIXED))
    for variant in ("idle-pageable", "pending-pageable", "idle-pinned", "pending-pinned",
                    "print-idle", "print-pending"):
        assert "readback_us" in got[(variant, RB)], (variant, got.get((variant, RB)))
    for variant in ("pending-pageable", "pending-pinned", "print-pending"):
        assert "wait_us" in got[(variant, RB)], variant


def test_readback_behind_a_gemm(tmp_path):
    rows = measure_rows(tmp_path, "--scenario", "readback", "--variant", "pending-pageable",
                        "--set", "pending=gemm", "--iters", "2", fast=FIXED)
    assert ("pending-pageable", "pending_us=1000;pending=gemm;print_elems=16", "wait_us") in rows


def test_copy_every_variant_and_size(tmp_path):
    got = metrics(measure_rows(tmp_path, "--scenario", "copy", "--set", "bytes=4KiB,64MiB",
                               fast=FIXED))
    for direction in ("h2d", "d2h"):
        for mem in ("pinned", "pageable"):
            for size in ("4KiB", "64MiB"):
                assert got[(f"{direction}-{mem}", f"bytes={size}")] == {
                    "GBps", "host_call_us", "wall_us"}


def test_double_buffer_every_variant(tmp_path):
    got = metrics(measure_rows(tmp_path, "--scenario", "double-buffer", "--set", "bytes=40MB",
                               fast=FIXED))
    db = "bytes=40MB;chunks=10;compute_us=0"
    for variant in ("serial-pageable", "serial-pinned", "double-buffered"):
        assert {"total_ms", "efficiency"} <= got[(variant, db)], (variant, got.get((variant, db)))
    assert {"copy_ms", "compute_ms"} <= got[("double-buffered", db)]


def test_sizes_that_do_not_fit_host_memory(tmp_path):
    r = run("--scenario", "double-buffer", "--set", "bytes=64GiB", "--set", "chunks=16")
    # 128 GiB of host buffers: more than this machine has available
    assert r.returncode == 2, r.stderr
    assert "of host memory" in r.stderr
