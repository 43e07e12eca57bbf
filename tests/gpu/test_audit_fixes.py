"""The sync-free scenarios' own count checked by the audit: every fix scenario records
`syncs_per_step`, the host-blocking calls its code makes per step; `syncbench audit` counts
the blocking calls the same run really made. Both are compared per step, from two runs that
differ only in their steps per repetition (iters): per-repetition constants (the timing sync
at the end of a repetition, a final readback) cancel in the difference, and so do the
variant's warm-up and its paired reference's repetitions, which run inside the variant's NVTX
range (`scenario/variant params`) and are taken out with the reference's own range.
sched is left out: its syncs run in helper processes, outside the main process's ranges."""
import csv
import json

import pytest

from conftest import BIN, NO_GPU, gpu_available, run

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")

REPS, WARMUP = 3, 1
# (scenario, the two step counts): log-every reads back every 100 steps by default, so its
# step counts are whole intervals
FIXES = [("coalesce", 20, 60), ("log-every", 200, 400), ("graph", 20, 60),
         ("dynamic-shape", 20, 60), ("device-branch", 20, 60), ("busy-stream", 10, 30),
         ("alloc", 20, 60), ("small-h2d", 20, 60)]


def references(scenario):
    """{variant: its paired reference or None}, from the plans --dry-run shows."""
    r = run("--scenario", scenario, "--dry-run", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    variants = [line.split()[2] for line in r.stdout.splitlines()[1:]]
    refs = {}
    for v in variants:
        r = run("--scenario", scenario, "--variant", v, "--dry-run", env=NO_GPU)
        planned = [line.split()[2] for line in r.stdout.splitlines()[1:]]
        refs[v] = planned[0] if planned[0] != v else None
    return refs


def one_run(tmp_path, scenario, iters):
    """({variant: blocking calls in its NVTX range}, {variant: syncs_per_step median})."""
    j, c = tmp_path / f"{scenario}-{iters}.json", tmp_path / f"{scenario}-{iters}.csv"
    r = run("audit", "-q", "--json", j, "--", BIN, "--scenario", scenario, "--iters", iters,
            "--min-reps", REPS, "--max-reps", REPS, "--warmup", WARMUP, "--warmup-time", 0, "-q",
            "--csv", c)
    assert r.returncode == 0, r.stderr
    report = json.loads(j.read_text())
    blocking = {}
    for rng in report["ranges"]:
        if rng["name"].startswith(scenario + "/"):
            variant = rng["name"].split("/", 1)[1].split(" ", 1)[0]
            assert rng["instances"] == 1, rng
            blocking[variant] = rng["total_blocking"]
    with open(c, newline="") as f:
        spv = {row["variant"]: float(row["median"]) for row in csv.DictReader(f)
               if row["metric"] == "syncs_per_step"}
    return blocking, spv


@pytest.mark.parametrize("scenario,i1,i2", FIXES, ids=[f[0] for f in FIXES])
def test_syncs_per_step_is_what_the_audit_counts(tmp_path, scenario, i1, i2):
    refs = references(scenario)
    b1, s1 = one_run(tmp_path, scenario, i1)
    b2, s2 = one_run(tmp_path, scenario, i2)
    assert set(b1) == set(b2) == set(refs), (b1, refs)
    # blocking calls per extra step in a variant's range: its warm-up and repetitions, and
    # its reference's repetitions
    slope = {v: (b2[v] - b1[v]) / (i2 - i1) for v in refs}
    for v, ref in refs.items():
        own = slope[v] - (REPS * slope[ref] / (REPS + WARMUP) if ref else 0)
        audited = own / (REPS + WARMUP)
        claimed = (s2[v] * i2 - s1[v] * i1) / (i2 - i1)
        # the fixes count every wait they make; small-h2d's pinned ring waits only when a copy
        # has not run yet, a number that differs between repetitions (a median vs a sum)
        tol = 0.25 if scenario == "small-h2d" else 0.02
        assert abs(audited - claimed) <= tol, (
            f"{scenario}/{v}: audit {audited:.3f} blocking calls per step, the scenario "
            f"claims {claimed:.3f} (slopes {slope}, syncs_per_step {s1} / {s2})")
