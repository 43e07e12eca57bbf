"""readback, copy and double-buffer on a real GPU: the figures the guides promise (their checks
are tested in test_faults.py). Skipped where there is no GPU."""
import pytest

from conftest import gpu_available, measure_medians, run

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

FAST = ("--max-time", "0.5", "--warmup-time", "0.2")


def measure(tmp_path, *args):
    return measure_medians(tmp_path, *args, fast=FAST)


@pytest.fixture(scope="module")
def readback(tmp_path_factory):
    return measure(tmp_path_factory.mktemp("readback"), "--scenario", "readback")


RB = "pending_us=1000;pending=spin;print_elems=16"


@pytest.mark.parametrize("mem", ["pageable", "pinned"])
def test_pending_readback_waits_for_the_pending_work(readback, mem):
    pending = readback[(f"pending-{mem}", RB, "readback_us")]
    idle = readback[(f"idle-{mem}", RB, "readback_us")]
    assert abs(pending - (1000 + idle)) <= 0.10 * (1000 + idle), (pending, idle)
    assert 900 <= readback[(f"pending-{mem}", RB, "wait_us")] <= 1100


@pytest.mark.parametrize("variant", ["idle-pageable", "idle-pinned", "print-idle"])
def test_idle_readback_is_cheap(readback, variant):
    assert readback[(variant, RB, "readback_us")] < 100


def test_print_waits_too(readback):
    assert readback[("print-pending", RB, "wait_us")] >= 900


def test_readback_behind_a_gemm(tmp_path):
    m = measure(tmp_path, "--scenario", "readback", "--variant", "pending-pageable",
                "--set", "pending=gemm", "--iters", "5")
    params = "pending_us=1000;pending=gemm;print_elems=16"
    assert m[("pending-pageable", params, "wait_us")] > 500  # an 8192^3 GEMM takes ~1.6 ms


@pytest.fixture(scope="module")
def copies(tmp_path_factory):
    return measure(tmp_path_factory.mktemp("copy"), "--scenario", "copy", "--set",
                   "bytes=4KiB,1MiB,64MiB")


@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_pinned_beats_pageable_at_64mib(copies, direction):
    pinned = copies[(f"{direction}-pinned", "bytes=64MiB", "GBps")]
    pageable = copies[(f"{direction}-pageable", "bytes=64MiB", "GBps")]
    assert pinned > pageable, (pinned, pageable)


@pytest.mark.parametrize("direction", ["h2d", "d2h"])
def test_pinned_call_returns_pageable_call_blocks(copies, direction):
    nbytes = 64 << 20
    assert copies[(f"{direction}-pinned", "bytes=64MiB", "host_call_us")] < 100
    gbps = copies[(f"{direction}-pageable", "bytes=64MiB", "GBps")]
    transfer_us = nbytes / (gbps * 1e9) * 1e6
    assert copies[(f"{direction}-pageable", "bytes=64MiB", "host_call_us")] >= 0.5 * transfer_us


@pytest.fixture(scope="module")
def pipeline(tmp_path_factory):
    return measure(tmp_path_factory.mktemp("db"), "--scenario", "double-buffer")


DB = "bytes=400MB;chunks=10;compute_us=0"


def test_double_buffering_overlaps(pipeline):
    db = pipeline[("double-buffered", DB, "total_ms")]
    serial = pipeline[("serial-pinned", DB, "total_ms")]
    assert db < 0.8 * serial, (db, serial)
    assert pipeline[("double-buffered", DB, "efficiency")] > pipeline[
        ("serial-pinned", DB, "efficiency")]


def test_balanced_work(pipeline):
    copy = pipeline[("double-buffered", DB, "copy_ms")]
    compute = pipeline[("double-buffered", DB, "compute_ms")]
    assert 0.7 < compute / copy < 1.4, (copy, compute)


def test_sizes_that_do_not_fit_host_memory(tmp_path):
    r = run("--scenario", "double-buffer", "--set", "bytes=64GiB", "--set", "chunks=16")
    # 128 GiB of host buffers: more than this machine has available
    assert r.returncode == 2, r.stderr
    assert "of host memory" in r.stderr
