"""coalesce, log-every, graph, dynamic-shape and device-branch on a real GPU: syncs_per_step is
exactly what the code issues, in every repetition, and the compaction is right at its edges
(their checks are tested in test_faults.py). Fixed repetition counts, no timing: what each fix
saves is tests/validate/'s (`make validate`). Skipped where there is no GPU."""
import pytest

from conftest import gpu_available, measure_rows, run
from gpu_common import FIXED, fixed

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")


def iters(rows, variant, params):
    return int(rows[(variant, params, "step_us")]["iters"])


def assert_syncs(rows, variant, params, per_step):
    """syncs_per_step is the same count in every repetition: min = max = the expected value."""
    row = rows[(variant, params, "syncs_per_step")]
    for col in ("median", "min", "max"):
        assert float(row[col]) == pytest.approx(per_step, rel=1e-6), (variant, col, row[col])


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """runs(scenario, *args): the rows of one run of the scenario, made on first use."""
    made = {}

    def rows(scenario, *args):
        if (scenario, *args) not in made:
            made[(scenario, *args)] = measure_rows(tmp_path_factory.mktemp(scenario),
                                                   "--scenario", scenario, *args, fast=FIXED)
        return made[(scenario, *args)]
    return rows


# ---- coalesce ----

COALESCE = "values=8;work_us=20"


def test_coalesce_syncs_per_step(runs):
    coalesce = runs("coalesce", "--set", "values=8")
    assert_syncs(coalesce, "per-value", COALESCE, 8)
    assert_syncs(coalesce, "stacked", COALESCE, 1)


# ---- log-every ----

LOG = "every=100;kernels=8;work_us=5"


def test_log_every_syncs_per_step(runs):
    log_every = runs("log-every")
    n = iters(log_every, "every-step", LOG)
    assert n % 100 == 0 and n >= 200  # the default plan holds whole intervals, two at least
    assert_syncs(log_every, "every-step", LOG, 1)
    assert_syncs(log_every, "every-n", LOG, 1 / 100)
    assert_syncs(log_every, "never", LOG, 1 / n)


def test_every_n_reads_the_rest_at_the_end(tmp_path):
    """250 steps, every 100: readbacks after steps 100 and 200, and the last 50 at the end."""
    rows = measure_rows(tmp_path, "--scenario", "log-every", "--variant", "every-n", "--iters",
                        "250", "--set", "kernels=2", fast=FIXED)
    assert_syncs(rows, "every-n", "every=100;kernels=2;work_us=5", 3 / 250)


# ---- graph ----

GRAPH = "kernels=20;work_us=2"


def test_graph_syncs_per_step(runs):
    graph = runs("graph")
    assert_syncs(graph, "launches", GRAPH, 1)
    assert_syncs(graph, "graph", GRAPH, 1)
    # the graph variant is priced against the launches: a saving row, whatever its sign
    assert ("graph", GRAPH, "saving_us") in graph
    assert ("graph", GRAPH, "launch_us") in graph and ("launches", GRAPH, "launch_us") in graph


# ---- dynamic-shape and device-branch: a readback per step, or none ----

# scenario: its default params, the syncing variant, the fix. The syncing variant reads a value
# back every step, and each repetition ends with one sync for the last step's queued work.
READBACK_PER_STEP = {
    # the same three kernels; count-readback adds a readback and a drained queue per step
    "dynamic-shape": ("n=1048576;density=50", "count-readback", "fixed-shape"),
    # host-branch: a readback, then the GPU idles until the branch kernel's launch lands
    "device-branch": ("work_us=10", "host-branch", "device-select"),
}


@pytest.mark.parametrize("scenario", sorted(READBACK_PER_STEP))
def test_one_readback_per_step_and_one_sync_at_the_end(runs, scenario):
    params, syncing, fix = READBACK_PER_STEP[scenario]
    rows = runs(scenario)
    n = iters(rows, syncing, params)
    assert_syncs(rows, syncing, params, (n + 1) / n)
    assert_syncs(rows, fix, params, 1 / n)
    assert (fix, params, "saving_us") in rows  # the fix is priced against the syncing variant


@pytest.mark.parametrize("n,density", [(1, 100), (2047, 0), (2049, 100), (3_000_000, 7),
                                       (5_000_000, 93)])
def test_compaction_is_right_at_the_edges(tmp_path, n, density):
    """Partial tiles, nothing and everything selected, more than 1024 tiles (the scan's
    rounds): validation compares every element with the CPU's selection."""
    r = run("--scenario", "dynamic-shape", "--set", f"n={n}", "--set", f"density={density}",
            "--iters", "3", *fixed(reps=2), "--quiet")
    assert r.returncode == 0, r.stderr
