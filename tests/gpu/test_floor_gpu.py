"""syncbench-floor on a real GPU: every loop runs, checks what it read back, and writes one CSV
row per row of --list, with the repetitions asked for and ordered percentiles. Correctness only:
its figures against syncbench's are make validate's (tests/validate/floor_checks.py). Skipped
where there is no GPU."""
import csv
import subprocess

import pytest

from conftest import FLOOR, gpu_available

pytestmark = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")


def test_every_row_is_measured(tmp_path):
    out = tmp_path / "floor.csv"
    r = subprocess.run([FLOOR, "--reps", "3", "--csv", out], capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr
    listed = subprocess.run([FLOOR, "--list"], capture_output=True, text=True, timeout=60)
    names = [line.split()[0] for line in listed.stdout.splitlines()]
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [row["row"] for row in rows] == names
    for row in rows:
        assert row["reps"] == "3", row
        p10, median, p90 = (float(row[k]) for k in ("p10", "median", "p90"))
        assert 0 < p10 <= median <= p90, row
    assert r.stdout.splitlines()[1].split()[:2] == ["row", "way"]
    assert len(r.stdout.splitlines()) == len(names) + 2
