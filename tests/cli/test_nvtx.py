"""NVTX ranges the engine opens, recorded through an injection library: the engine's unit test
binary measures a fake CPU-only scenario, so this runs without a GPU. tests/gpu checks the
same on the real binary."""
import os
import subprocess

import pytest

from conftest import MEASURE_TEST, NVTX_LIB, nvtx_tree

ASYNC, SYNC, WARMUP, MEASURE = "FF76B900", "FFD62728", "FF9E9E9E", "FF1F77B4"


@pytest.fixture(scope="module")
def ranges(tmp_path_factory):
    for f in (MEASURE_TEST, NVTX_LIB):
        if not os.path.exists(f):
            pytest.fail(f"{f} not built; run make test")
    out = tmp_path_factory.mktemp("nvtx") / "ranges.tsv"
    env = dict(os.environ, NVTX_INJECTION64_PATH=NVTX_LIB, NVTX_RECORD_OUT=str(out))
    r = subprocess.run([MEASURE_TEST], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return nvtx_tree(out)


def test_one_range_per_measurement_in_syncbench_domain(ranges):
    assert ranges, "no ranges recorded"
    assert {d for d, *_ in ranges} == {"syncbench"}
    names = [name for _, name, _, _ in ranges]
    assert names[:2] == ["fake/async p=2", "fake/sync p=2"]
    assert all(n.startswith("fake/") and " p=" in n for n in names)


def test_nested_warmup_then_measure(ranges):
    for _, name, _, children in ranges:
        assert [(c[1], c[2]) for c in children] == [("warmup", WARMUP), ("measure", MEASURE)], name
        assert all(c[3] == [] for c in children)


def test_sync_and_async_colours_differ(ranges):
    colours = {name.split()[0]: colour for _, name, colour, _ in ranges}
    assert colours["fake/async"] == ASYNC
    assert colours["fake/sync"] == SYNC
