"""A pytest suite of sync-free and syncing functions under syncbench's plugin, for the GPU test
tests/gpu/test_python_syncs.py, which runs it and holds each test's outcome to EXPECTED (its
name does not start with test_: `make test` does not collect it, the GPU test names it).

The functions are the guides' cases, including those torch.cuda.set_sync_debug_mode misses:
torch.cuda.synchronize(), Event.synchronize(), a driver sync through ctypes, a library's own
sync (CuPy's copy to the host). FUNCTIONS lists them for the side-by-side with torch's check."""
import ctypes
import threading

import pytest
import torch

import syncbench

x = torch.randn(256, 256, device="cuda")
pinned = torch.empty(256, 256, pin_memory=True)


def sync_free():
    """matmul, relu, sum: everything stays on the GPU"""
    return (x @ x).relu().sum()


def copy_non_blocking():
    """a copy into pinned memory with non_blocking=True: no wait"""
    pinned.copy_(x, non_blocking=True)


def item():
    """loss.item(): a copy to the host and a stream sync"""
    return (x @ x).sum().item()


def cuda_synchronize():
    """torch.cuda.synchronize(): a device sync"""
    torch.cuda.synchronize()


def event_synchronize():
    """Event.synchronize(): an event sync"""
    e = torch.cuda.Event()
    e.record()
    e.synchronize()


def driver_sync():
    """cuCtxSynchronize through ctypes: what an extension does below torch"""
    if ctypes.CDLL("libcuda.so.1").cuCtxSynchronize() != 0:
        raise RuntimeError("cuCtxSynchronize failed")


def library_sync():
    """CuPy's .get(): another library's copy to the host"""
    cupy = pytest.importorskip("cupy")
    return cupy.arange(1024, dtype=cupy.float32).sum().get()


def nonzero():
    """x.nonzero(): a data-dependent shape, its size read back"""
    return (x > 0).nonzero()


def to_cpu():
    """x.cpu(): a blocking copy to the host"""
    return x.cpu()


FUNCTIONS = [sync_free, copy_non_blocking, item, cuda_synchronize, event_synchronize,
             driver_sync, library_sync, nonzero, to_cpu]

# everything made once is made here, outside any block (cuBLAS's handle and workspace, CuPy's
# kernels, the caching allocator's first blocks)
for _fn in FUNCTIONS:
    try:
        _fn()
    except pytest.skip.Exception:
        pass
torch.cuda.synchronize()


def in_another_thread(fn):
    t = threading.Thread(target=fn)
    t.start()
    t.join()


# each function under the marker: fails exactly when it syncs
@pytest.mark.no_syncs
@pytest.mark.parametrize("fn", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_marked(fn):
    fn()
    torch.cuda.current_stream().query()  # a poll: never fails a block


@pytest.mark.no_syncs(allow=1)
def test_item_allowed_once():
    item()


@pytest.mark.no_syncs(allow=1)
def test_item_twice_allowed_once():
    item()
    item()


@pytest.mark.no_syncs
def test_another_threads_sync_is_not_this_threads():
    in_another_thread(cuda_synchronize)


@pytest.mark.no_syncs(all_threads=True)
def test_another_threads_sync_with_all_threads():
    in_another_thread(cuda_synchronize)


def test_the_fixture_counts_exactly(syncbench_syncs):
    item()
    item()
    cuda_synchronize()
    assert syncbench_syncs.blocking == 3
    assert syncbench_syncs.by_class == {"sync-stream": 2, "sync-device": 1}


def test_count_syncs_exactly():
    with syncbench.count_syncs() as s:
        for _ in range(5):
            sync_free()
        torch.cuda.current_stream().query()
    assert (s.blocking, s.polls) == (0, 1)
    with syncbench.count_syncs() as s:
        item()
        event_synchronize()
        driver_sync()
    assert s.by_class == {"sync-stream": 1, "sync-event": 1, "sync-device": 1}
    assert s.blocking == 3


def test_blocks_start_at_zero_and_nest():
    with syncbench.count_syncs() as outer:
        item()
        with syncbench.count_syncs() as inner:
            assert inner.blocking == 0
            item()
        item()
    assert (inner.blocking, outer.blocking) == (1, 3)


def test_the_error_names_the_line_the_operation_and_the_fix():
    with pytest.raises(syncbench.SyncError) as e:
        with syncbench.no_syncs():
            (x @ x).sum().item()  # the line the message names
    msg = str(e.value)
    assert msg.startswith("1 host-blocking CUDA call (allowed 0), on this thread:"), msg
    assert "sync_cases.py:" in msg and "in test_the_error_names_the_line_the_operation" in msg
    assert "(x @ x).sum().item()" in msg
    assert "sync-stream x1" in msg
    assert "fix: " in msg
    assert isinstance(e.value, AssertionError)


def test_an_exception_inside_goes_on_unchanged():
    with pytest.raises(KeyError):
        with syncbench.no_syncs():
            item()
            raise KeyError("mine")
