"""busy-stream, alloc, small-h2d and sched on a real GPU: the direction of each saving with a
margin the physics justifies, and the syncs each variant issues per step (exact: what the code
calls); their checks are tested in test_faults.py. Skipped where there is no GPU."""
import pytest

from conftest import gpu_available, measure_medians, sched_workers

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")


# ---- busy-stream: 1 ms on a second stream, 10 us on the step's own ----

BS = "other_us=1000;work_us=10"
OTHER_US = 1000


@pytest.fixture(scope="module")
def busy(tmp_path_factory):
    return measure_medians(tmp_path_factory.mktemp("busy"), "--scenario", "busy-stream")


def test_device_sync_waits_for_the_other_stream(busy):
    assert busy[("sync-device", BS, "wait_us")] >= 0.9 * OTHER_US
    assert busy[("sync-device", BS, "step_us")] >= 0.9 * OTHER_US


@pytest.mark.parametrize("variant", ["sync-stream", "sync-event"])
def test_stream_sync_does_not(busy, variant):
    assert busy[(variant, BS, "wait_us")] < OTHER_US / 2
    # the saving is the other stream's work less the step's own, paired with sync-device
    assert busy[(variant, BS, "saving_us")] >= 0.5 * OTHER_US
    assert busy[(variant, BS, "saving_pct")] >= 50


@pytest.mark.parametrize("variant", ["sync-device", "sync-stream", "sync-event"])
def test_busy_stream_syncs_per_step(busy, variant):
    assert busy[(variant, BS, "syncs_per_step")] == 1


def test_busy_stream_reference_has_no_saving(busy):
    assert ("sync-device", BS, "saving_us") not in busy


# ---- alloc: 1 MiB per step ----

AL = "bytes=1MiB"


@pytest.fixture(scope="module")
def alloc(tmp_path_factory):
    return measure_medians(tmp_path_factory.mktemp("alloc"), "--scenario", "alloc")


def test_malloc_free_is_slower_than_reuse(alloc):
    assert alloc[("malloc-free", AL, "step_us")] > alloc[("reuse", AL, "step_us")]
    assert alloc[("reuse", AL, "saving_us")] > 0


def test_stream_ordered_pool_saves_too(alloc):
    assert alloc[("malloc-free", AL, "step_us")] > alloc[("malloc-async", AL, "step_us")]
    assert alloc[("malloc-async", AL, "saving_us")] > 0


@pytest.mark.parametrize("variant,syncs", [("malloc-free", 1), ("malloc-async", 0),
                                           ("reuse", 0)])
def test_alloc_syncs_per_step(alloc, variant, syncs):
    assert alloc[(variant, AL, "syncs_per_step")] == syncs


# ---- small-h2d: 4 KiB per step ----

SH = "bytes=4KiB"


@pytest.fixture(scope="module")
def h2d(tmp_path_factory):
    return measure_medians(tmp_path_factory.mktemp("h2d"), "--scenario", "small-h2d", "--set",
                   "bytes=4KiB,1MiB")


def test_pinned_async_is_faster(h2d):
    assert h2d[("pinned-async", SH, "step_us")] < h2d[("pageable", SH, "step_us")]
    assert h2d[("pinned-async", SH, "saving_us")] > 0
    # the async call only queues the copy; the pageable one returns once the data is staged
    assert h2d[("pinned-async", SH, "call_us")] < h2d[("pageable", SH, "call_us")]


@pytest.mark.parametrize("params", ["bytes=4KiB", "bytes=1MiB"])
@pytest.mark.parametrize("variant,syncs", [("pageable", 1), ("pinned-async", 0)])
def test_small_h2d_syncs_per_step(h2d, params, variant, syncs):
    assert h2d[(variant, params, "syncs_per_step")] == syncs


# ---- sched: 200 us of GPU work, then a stream sync, in each scheduling mode ----

SC = "work_us=200"
WORK_US = 200
MODES = ["auto", "spin", "yield", "blocking-sync"]


@pytest.fixture(scope="module")
def sched(tmp_path_factory):
    return measure_medians(tmp_path_factory.mktemp("sched"), "--scenario", "sched")


@pytest.mark.parametrize("mode", MODES)
def test_sched_step_is_the_work_and_a_sync(sched, mode):
    assert sched[(mode, SC, "step_us")] >= WORK_US
    assert 0 < sched[(mode, SC, "sync_us")] < 1000
    assert sched[(mode, SC, "syncs_per_step")] == 1


def test_spin_burns_the_cpu_while_waiting(sched):
    assert sched[("spin", SC, "host_cpu_us")] >= 0.5 * WORK_US


def test_blocking_sync_sleeps(sched):
    assert sched[("blocking-sync", SC, "host_cpu_us")] < 0.5 * sched[("spin", SC, "host_cpu_us")]


def test_spin_wakes_no_later_than_blocking_sync(sched):
    assert sched[("spin", SC, "sync_us")] <= sched[("blocking-sync", SC, "sync_us")]


def test_sched_workers_end_with_their_measurements(tmp_path):
    """Two plan entries, two modes each, then another scenario: every worker is gone at the
    end, and the run is right throughout."""
    m = measure_medians(tmp_path, "--scenario", "sched,busy-stream", "--variant",
                        "blocking-sync,spin,sync-device", "--set", "work_us=50,100")
    for work in (50, 100):
        for mode in ("spin", "blocking-sync"):
            assert m[(mode, f"work_us={work}", "step_us")] >= work
    assert ("sync-device", "other_us=1000;work_us=50", "step_us") in m
    assert sched_workers() == []
