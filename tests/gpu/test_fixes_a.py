"""coalesce, log-every, graph, dynamic-shape and device-branch on a real GPU: each sync-free
variant beats its syncing variant by a margin the mechanism justifies, syncs_per_step is exactly
what the code issues, and each scenario's check catches a damaged result. Skipped where there is
no GPU."""
import csv

import pytest

from conftest import gpu_available, run

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

FAST = ["--max-time", "0.5", "--warmup-time", "0.1"]


def measure(tmp_path, *args, env=None):
    """{(variant, params, metric): row} of one run."""
    out = tmp_path / "out.csv"
    r = run(*args, *FAST, "--csv", out, env=env)
    assert r.returncode == 0, r.stderr
    with open(out, newline="") as f:
        return {(row["variant"], row["params"], row["metric"]): row for row in csv.DictReader(f)}


def median(rows, variant, params, metric):
    return float(rows[(variant, params, metric)]["median"])


def iters(rows, variant, params):
    return int(rows[(variant, params, "step_us")]["iters"])


def assert_syncs(rows, variant, params, per_step):
    """syncs_per_step is the same count in every repetition: min = max = the expected value."""
    row = rows[(variant, params, "syncs_per_step")]
    for col in ("median", "min", "max"):
        assert float(row[col]) == pytest.approx(per_step, rel=1e-6), (variant, col, row[col])


@pytest.fixture(scope="module")
def idle_readback_us(tmp_path_factory):
    """What one .item() costs with nothing pending: readback's idle-pinned readback_us."""
    rows = measure(tmp_path_factory.mktemp("idle"), "--scenario", "readback", "--variant",
                   "idle-pinned", "--set", "pending_us=100")
    return median(rows, "idle-pinned", "pending_us=100;pending=spin;print_elems=16",
                  "readback_us")


# ---- coalesce ----

COALESCE = "values=8;work_us=20"


@pytest.fixture(scope="module")
def coalesce(tmp_path_factory):
    return measure(tmp_path_factory.mktemp("coalesce"), "--scenario", "coalesce", "--set",
                   "values=8")


def test_stacked_saves_the_extra_readbacks(coalesce, idle_readback_us):
    # per-value pays 8 readbacks, stacked one readback and a small gather kernel queued behind
    # the work: at least half of the 7 readbacks saved must show
    saving = median(coalesce, "stacked", COALESCE, "saving_us")
    assert saving >= 7 * idle_readback_us * 0.5, (saving, idle_readback_us)
    assert median(coalesce, "stacked", COALESCE, "step_us") < median(coalesce, "per-value",
                                                                     COALESCE, "step_us")


def test_coalesce_syncs_per_step(coalesce):
    assert_syncs(coalesce, "per-value", COALESCE, 8)
    assert_syncs(coalesce, "stacked", COALESCE, 1)


# ---- log-every ----

LOG = "every=100;kernels=8;work_us=5"


@pytest.fixture(scope="module")
def log_every(tmp_path_factory):
    return measure(tmp_path_factory.mktemp("log"), "--scenario", "log-every")


@pytest.mark.parametrize("variant", ["every-n", "never"])
def test_logging_less_often_saves(log_every, variant, idle_readback_us):
    # every-step drains the queue each step: the GPU idles for a readback and the first launch
    # of the next step; the others keep the GPU fed
    saving = median(log_every, variant, LOG, "saving_us")
    assert saving >= 0.5 * idle_readback_us, (saving, idle_readback_us)
    assert median(log_every, variant, LOG, "step_us") < median(log_every, "every-step", LOG,
                                                               "step_us")


def test_log_every_syncs_per_step(log_every):
    n = iters(log_every, "every-step", LOG)
    assert n % 100 == 0 and n >= 200  # the default plan holds whole intervals, two at least
    assert_syncs(log_every, "every-step", LOG, 1)
    assert_syncs(log_every, "every-n", LOG, 1 / 100)
    assert_syncs(log_every, "never", LOG, 1 / n)


def test_every_n_reads_the_rest_at_the_end(tmp_path):
    """250 steps, every 100: readbacks after steps 100 and 200, and the last 50 at the end."""
    rows = measure(tmp_path, "--scenario", "log-every", "--variant", "every-n", "--iters", "250",
                   "--set", "kernels=2")
    assert_syncs(rows, "every-n", "every=100;kernels=2;work_us=5", 3 / 250)


# ---- graph ----

GRAPH = "kernels=20;work_us=2"


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return measure(tmp_path_factory.mktemp("graph"), "--scenario", "graph")


def test_graph_beats_launches(graph):
    # 20 launches of a few us each against one graph launch: the launch-bound step shrinks
    saving = median(graph, "graph", GRAPH, "saving_us")
    assert saving > 0.1 * median(graph, "launches", GRAPH, "step_us"), saving
    assert median(graph, "graph", GRAPH, "launch_us") < 0.5 * median(graph, "launches", GRAPH,
                                                                     "launch_us")


def test_graph_syncs_per_step(graph):
    assert_syncs(graph, "launches", GRAPH, 1)
    assert_syncs(graph, "graph", GRAPH, 1)


# ---- dynamic-shape ----

SHAPE = "n=1048576;density=50"


@pytest.fixture(scope="module")
def shape(tmp_path_factory):
    return measure(tmp_path_factory.mktemp("shape"), "--scenario", "dynamic-shape")


def test_fixed_shape_beats_count_readback(shape, idle_readback_us):
    # the same three kernels; count-readback adds a readback and a drained queue per step
    saving = median(shape, "fixed-shape", SHAPE, "saving_us")
    assert saving >= 0.5 * idle_readback_us, (saving, idle_readback_us)


def test_dynamic_shape_syncs_per_step(shape):
    n = iters(shape, "count-readback", SHAPE)
    # one readback per step, and one sync at the end for the last step's compaction
    assert_syncs(shape, "count-readback", SHAPE, (n + 1) / n)
    assert_syncs(shape, "fixed-shape", SHAPE, 1 / n)


@pytest.mark.parametrize("n,density", [(1, 100), (2047, 0), (2049, 100), (3_000_000, 7),
                                       (5_000_000, 93)])
def test_compaction_is_right_at_the_edges(tmp_path, n, density):
    """Partial tiles, nothing and everything selected, more than 1024 tiles (the scan's
    rounds): validation compares every element with the CPU's selection."""
    r = run("--scenario", "dynamic-shape", "--set", f"n={n}", "--set", f"density={density}",
            "--iters", "3", "--min-reps", "2", "--max-reps", "2", "--warmup", "1",
            "--warmup-time", "0", "--quiet")
    assert r.returncode == 0, r.stderr


# ---- device-branch ----

BRANCH = "work_us=10"


@pytest.fixture(scope="module")
def branch(tmp_path_factory):
    return measure(tmp_path_factory.mktemp("branch"), "--scenario", "device-branch")


def test_device_select_beats_host_branch(branch, idle_readback_us):
    # host-branch: a readback, then the GPU idles until the branch kernel's launch lands
    saving = median(branch, "device-select", BRANCH, "saving_us")
    assert saving >= 0.5 * idle_readback_us, (saving, idle_readback_us)


def test_device_branch_syncs_per_step(branch):
    n = iters(branch, "host-branch", BRANCH)
    assert_syncs(branch, "host-branch", BRANCH, (n + 1) / n)
    assert_syncs(branch, "device-select", BRANCH, 1 / n)


# ---- every check catches a damaged result ----

@pytest.mark.parametrize("scenario,fault,variant", [
    ("coalesce", "coalesce-values", "stacked"),
    ("log-every", "log-loss", "never"),
    ("graph", "graph-counter", "graph"),
    ("dynamic-shape", "compact-output", "fixed-shape"),
    ("device-branch", "branch-output", "device-select"),
])
def test_damaged_results_are_caught(scenario, fault, variant):
    r = run("--scenario", scenario, "--variant", variant, "--min-reps", "1", "--max-time", "0.1",
            "--warmup", "0", "--warmup-time", "0", env={"SYNCBENCH_FAULT": fault})
    assert r.returncode == 1, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert f"validation failed in {scenario}/" in lines[0]
