"""busy-stream, alloc, small-h2d and sched on a real GPU: the syncs each variant issues per step
(exact: what the code calls), every variant priced against its reference, and no sched helper
process outliving its run; their checks are tested in test_faults.py. Fixed repetition counts,
no timing: the direction and size of each saving are tests/validate/'s (`make validate`).
Skipped where there is no GPU."""
import pytest

from conftest import gpu_available, measure_rows
from gpu_common import FIXED, leaked_sched_workers

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")


def medians(tmp_path, *args):
    """{(variant, params, metric): median} and {(variant, params): iters} of one fixed run."""
    rows = measure_rows(tmp_path, *args, fast=FIXED)
    return ({k: float(r["median"]) for k, r in rows.items()},
            {k[:2]: int(r["iters"]) for k, r in rows.items()})


# ---- busy-stream: 1 ms on a second stream, 10 us on the step's own ----

BS = "other_us=1000;work_us=10"


@pytest.fixture(scope="module")
def busy(tmp_path_factory):
    return medians(tmp_path_factory.mktemp("busy"), "--scenario", "busy-stream")[0]


@pytest.mark.parametrize("variant", ["sync-device", "sync-stream", "sync-event"])
def test_busy_stream_syncs_per_step(busy, variant):
    assert busy[(variant, BS, "syncs_per_step")] == 1
    assert (variant, BS, "wait_us") in busy


@pytest.mark.parametrize("variant", ["sync-stream", "sync-event"])
def test_busy_stream_fixes_are_priced(busy, variant):
    assert (variant, BS, "saving_us") in busy and (variant, BS, "saving_pct") in busy


def test_busy_stream_reference_has_no_saving(busy):
    assert ("sync-device", BS, "saving_us") not in busy


# ---- alloc: 1 MiB per step ----

AL = "bytes=1MiB"


@pytest.fixture(scope="module")
def alloc(tmp_path_factory):
    return medians(tmp_path_factory.mktemp("alloc"), "--scenario", "alloc")[0]


@pytest.mark.parametrize("variant,syncs", [("malloc-free", 1), ("malloc-async", 0),
                                           ("reuse", 0)])
def test_alloc_syncs_per_step(alloc, variant, syncs):
    assert alloc[(variant, AL, "syncs_per_step")] == syncs


def test_alloc_fixes_are_priced(alloc):
    assert ("malloc-free", AL, "saving_us") not in alloc  # the reference
    for variant in ("malloc-async", "reuse"):
        assert (variant, AL, "saving_us") in alloc


# ---- small-h2d: 4 KiB and 1 MiB per step ----

@pytest.fixture(scope="module")
def h2d(tmp_path_factory):
    return medians(tmp_path_factory.mktemp("h2d"), "--scenario", "small-h2d", "--set",
                   "bytes=4KiB,1MiB")


@pytest.mark.parametrize("params", ["bytes=4KiB", "bytes=1MiB"])
def test_pageable_syncs_every_step(h2d, params):
    assert h2d[0][("pageable", params, "syncs_per_step")] == 1


def test_pinned_async_never_waits_when_its_ring_holds_every_step(h2d):
    """4 KiB: the ring has a slot per step of a repetition, and the repetition before ended with
    a stream sync, so no slot is ever still in flight: 0 waits."""
    assert h2d[0][("pinned-async", "bytes=4KiB", "syncs_per_step")] == 0
    assert ("pinned-async", "bytes=4KiB", "call_us") in h2d[0]


def test_pinned_async_waits_only_on_a_reused_slot(h2d):
    """1 MiB: 64 slots (64 MiB of ring) for more steps than that; a step waits only where the
    slot's previous copy has not run yet, which depends on the GPU's pace: at most once per
    reused slot."""
    n = h2d[1][("pinned-async", "bytes=1MiB")]
    spv = h2d[0][("pinned-async", "bytes=1MiB", "syncs_per_step")]
    assert 0 <= spv <= max(n - 64, 0) / n, (spv, n)


# ---- sched: 200 us of GPU work, then a stream sync, in each scheduling mode ----

SC = "work_us=200"
MODES = ["auto", "spin", "yield", "blocking-sync"]


@pytest.fixture(scope="module")
def sched(tmp_path_factory):
    return medians(tmp_path_factory.mktemp("sched"), "--scenario", "sched")[0]


@pytest.mark.parametrize("mode", MODES)
def test_sched_one_sync_per_step(sched, mode):
    assert sched[(mode, SC, "syncs_per_step")] == 1
    for metric in ("step_us", "sync_us", "host_cpu_us"):
        assert (mode, SC, metric) in sched


def test_sched_workers_end_with_their_measurements(tmp_path):
    """Two plan entries, two modes each, then another scenario: every worker is gone at the
    end, and the run is right throughout."""
    m = medians(tmp_path, "--scenario", "sched,busy-stream", "--variant",
                "blocking-sync,spin,sync-device", "--set", "work_us=50,100")[0]
    for work in (50, 100):
        for mode in ("spin", "blocking-sync"):
            assert m[(mode, f"work_us={work}", "syncs_per_step")] == 1
    assert ("sync-device", "other_us=1000;work_us=50", "step_us") in m
    assert leaked_sched_workers() == []
