"""The floor's check (tests/validate/floor_checks.py) on the CPU: its map covers every primitive
issue 36 lists, and every row it names exists, in syncbench-floor's loops (with the scenario's
iterations) and in syncbench's plan (scenario, variant, parameters, iterations) and metrics; the
ratio and the verdict on canned figures; and the whole check through validate.py, with a fake
GPU, a fake syncbench and a fake floor: the runs alternate, a ratio over 1.10 is a MISS and
exit 1, a pair that strays does not move the median, a failing floor is an ERROR. Nothing here
measures anything."""
import json
import os
import subprocess
import sys

import pytest

import floor_checks
import validate
from conftest import BIN, FLOOR, NO_GPU

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "validate.py")


def floor_list():
    """{row: (way, unit, iters)} of syncbench-floor --list (no GPU)."""
    r = subprocess.run([FLOOR, "--list"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, **NO_GPU})
    assert r.returncode == 0, r.stderr
    rows = {}
    for line in r.stdout.splitlines():
        name, way, unit, iters, _reps, _definition = line.split(None, 5)
        rows[name] = (way, unit, int(iters))
    return rows


def test_the_map_covers_every_primitive_of_the_issue():
    assert {p.issue for p in floor_checks.FLOOR_MAP} == set(floor_checks.ISSUE_PRIMITIVES)
    names = [p.name for p in floor_checks.FLOOR_MAP]
    assert len(names) == len(set(names))
    assert len({p.key for p in floor_checks.FLOOR_MAP}) == len(names)
    # every sync kind the issue names has a launch + sync row
    assert {"launch + device sync", "launch + stream sync", "launch + event sync"} <= \
        {p.issue for p in floor_checks.FLOOR_MAP}


def test_every_row_of_the_map_is_a_loop_of_the_floor():
    rows = floor_list()
    for p in floor_checks.FLOOR_MAP:
        assert rows.get(p.plain, (None,))[0] == "plain", (p.name, p.plain)
        assert rows[p.plain][1] == p.unit
        # timed as the scenario: the same unit and the scenario's iterations a repetition
        assert rows.get(p.floor) == ("scenario", p.unit, p.iters), (p.name, p.floor)


def test_every_row_of_the_map_is_in_syncbenchs_plan(tmp_path):
    suite = tmp_path / "floor.ini"
    suite.write_text(floor_checks.suite_text())
    r = subprocess.run([BIN, "--config", suite, *floor_checks.SYNCBENCH_ARGS, "--dry-run"],
                       capture_output=True, text=True, timeout=60, env={**os.environ, **NO_GPU})
    assert r.returncode == 0, r.stderr
    plan = set()
    for line in r.stdout.splitlines()[1:]:
        _n, scenario, variant, params, iters = line.split()
        plan.add((scenario, variant, params, int(iters.split("=")[1])))
    for p in floor_checks.FLOOR_MAP:
        assert (p.scenario, p.variant, p.params, p.iters) in plan, (p.name, sorted(plan))


def scenario_metrics():
    """{scenario: {metric, ...}} of syncbench --list."""
    r = subprocess.run([BIN, "--list"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, **NO_GPU})
    assert r.returncode == 0, r.stderr
    found, scenario, in_metrics = {}, None, False
    for line in r.stdout.splitlines():
        if line and not line.startswith(" "):
            scenario, in_metrics = line.strip(), False
        elif line.strip().endswith(":"):
            in_metrics = line.strip() == "metrics:"
        elif in_metrics and line.strip():
            found.setdefault(scenario, set()).add(line.split()[0])
    return found


def test_every_metric_of_the_map_is_its_scenarios():
    metrics = scenario_metrics()
    for p in floor_checks.FLOOR_MAP:
        assert p.metric in metrics[p.scenario], (p.name, metrics.get(p.scenario))


def test_the_pairs_alternate_who_goes_first():
    assert floor_checks.order(4) == [("floor", "syncbench"), ("syncbench", "floor")] * 2
    firsts = [o[0] for o in floor_checks.order(6)]
    assert firsts.count("floor") == firsts.count("syncbench") == 3


# ---- the ratio and the verdict on canned figures ----

def pick(issue_name):
    return next(p for p in floor_checks.FLOOR_MAP if p.name == issue_name)


def canned(p, floor_values, syncbench_values, plain_values=None):
    """Pairs in which p's rows have these figures."""
    plain_values = plain_values or floor_values
    return [{"floor": {p.floor: f, p.plain: q}, "syncbench": {p.key: s}}
            for f, q, s in zip(floor_values, plain_values, syncbench_values)]


def test_a_time_within_the_target_passes_and_one_over_it_misses():
    p = pick("idle readback, pinned")
    # drifting host speed: each pair's two runs move together, so the ratio holds
    good = canned(p, [8, 10, 12, 8, 10], [8.4, 10.5, 12.6, 8.4, 13])
    fig = floor_checks.figures(p, "scenario", good)
    assert fig["ratio"] == pytest.approx(1.05) and fig["hi"] == pytest.approx(1.3)
    assert fig["lo"] == pytest.approx(1.05)
    text, ok = floor_checks.verdict(p, "scenario", fig)
    assert ok is True and "1.050 x [1.050, 1.300] (5 pairs)" in text
    bad = canned(p, [8, 10, 12, 8, 10], [9.6, 12, 14.4, 9.6, 12])  # 1.20 x in every pair
    text, ok = floor_checks.verdict(p, "scenario", floor_checks.figures(p, "scenario", bad))
    assert ok is False and "1.200 x" in text
    edge = canned(p, [10] * 5, [11] * 5)  # exactly 1.10: within
    assert floor_checks.verdict(p, "scenario", floor_checks.figures(p, "scenario", edge))[1]


def test_a_bandwidth_ratio_is_the_floors_over_syncbenchs():
    p = pick("bandwidth, pinned, host to device")
    slower = canned(p, [50] * 5, [40] * 5)  # syncbench moves less: 1.25 x the cost
    fig = floor_checks.figures(p, "scenario", slower)
    assert fig["ratio"] == pytest.approx(1.25)
    assert floor_checks.verdict(p, "scenario", fig)[1] is False
    faster = canned(p, [50] * 5, [52] * 5)
    assert floor_checks.figures(p, "scenario", faster)["ratio"] == pytest.approx(50 / 52)
    assert floor_checks.verdict(p, "scenario", floor_checks.figures(p, "scenario", faster))[1]


def test_a_plain_row_is_reported_with_its_definitions_share():
    p = pick("idle readback, pinned")
    pairs = canned(p, [9] * 5, [9.9] * 5, plain_values=[7.5] * 5)
    fig = floor_checks.figures(p, "plain", pairs)
    assert fig["ratio"] == pytest.approx(9.9 / 7.5)
    assert fig["definition"] == pytest.approx(9 / 7.5)
    text, ok = floor_checks.verdict(p, "plain", fig)
    assert ok is None and "the floor as the scenario over plain: 1.200 x" in text


def test_a_row_missing_from_a_run_is_an_error():
    p = pick("empty launch")
    pairs = canned(p, [2] * 5, [2] * 5)
    del pairs[3]["syncbench"][p.key]
    with pytest.raises(RuntimeError, match="syncbench reported no"):
        floor_checks.figures(p, "scenario", pairs)


def test_the_verdicts_go_through_validates_usual_path(monkeypatch):
    """A held row over the target is a MISS and exit 1; a plain row is a NOTE."""
    registry = validate.load()
    p = pick("idle readback, pinned")
    pairs = [{"floor": {}, "syncbench": {}} for _ in range(5)]
    for q in floor_checks.FLOOR_MAP:
        for one in pairs:
            one["floor"][q.floor] = one["floor"][q.plain] = 10.0
            one["syncbench"][q.key] = 12.0 if q is p else 10.2
    monkeypatch.setattr(floor_checks, "measured_pairs", lambda: pairs)
    rows = []
    for c in [c for c in registry.CHECKS if c.group == "floor"]:
        measured, result = validate.run_one(registry, c)
        rows.append({"check": c.name, "measured": measured, "target": c.target,
                     "result": result})
    results = {r["check"]: r["result"] for r in rows}
    held = f"floor: {p.name}: as {p.scenario} {p.variant} {p.metric}"
    assert results.pop(held) == "MISS"
    assert {r for k, r in results.items() if ": as " in k} == {"PASS"}
    assert {r for k, r in results.items() if "plain loop" in k} == {"NOTE"}
    assert len(rows) == 2 * len(floor_checks.FLOOR_MAP)
    assert validate.exit_code(rows) == 1


# ---- the whole check through validate.py, with fakes ----

FAKE = '''#!{python}
# a fake {who}: writes the canned figures of its pair (the how-manyth run of {who} this is)
import json, sys
log, canned = {log!r}, json.load(open({canned!r}))
calls = open(log).read().split() if __import__("os").path.exists(log) else []
pair = calls.count("{who}")
open(log, "a").write("{who}\\n")
if canned.get("fail") == "{who}":
    print("{who}: it broke", file=sys.stderr)
    sys.exit(1)
out = sys.argv[sys.argv.index("--csv") + 1]
with open(out, "w") as f:
    f.write({header!r} + "\\n")
    for row in canned["{who}"][pair]:
        f.write(",".join(map(str, row)) + "\\n")
'''


def fakes(tmp_path, per_pair_scale, stray=None, fail=None, pairs=5):
    """A fake nvidia-smi, syncbench and floor; per_pair_scale[i]: syncbench's cost over the
    floor's in pair i, for every row; stray: (primitive name, its scale in every pair)."""
    bin_dir, log, data = tmp_path / "bin", tmp_path / "calls.log", tmp_path / "canned.json"
    bin_dir.mkdir()
    floor_runs, syncbench_runs = [], []
    for i in range(pairs):
        drift = 1 + 0.15 * (i % 3)  # the host's speed, the same for both runs of a pair
        floor_rows, ours = {}, []
        for p in floor_checks.FLOOR_MAP:
            scale = stray[1] if stray and p.name == stray[0] else per_pair_scale[i]
            base = 50.0 / drift if p.unit == "GB/s" else 10.0 * drift
            floor_rows[p.floor] = floor_rows[p.plain] = base
            value = base / scale if p.unit == "GB/s" else base * scale
            ours.append([p.scenario, p.variant, '"' + p.params + '"', p.metric, value])
        floor_runs.append([[row, "x", "us", 1, 1, v, v, v, "d"] for row, v in floor_rows.items()])
        syncbench_runs.append(ours)
    data.write_text(json.dumps({"floor": floor_runs, "syncbench": syncbench_runs, "fail": fail}))
    headers = {"floor": "row,way,unit,iters,reps,median,p10,p90,definition",
               "syncbench": "scenario,variant,params,metric,median"}
    for who, name in (("floor", "syncbench-floor"), ("syncbench", "syncbench")):
        path = bin_dir / name
        path.write_text(FAKE.format(python=sys.executable, who=who, log=str(log),
                                    canned=str(data), header=headers[who]))
        path.chmod(0o755)
    smi = bin_dir / "nvidia-smi"
    smi.write_text("#!/bin/sh\necho 'GPU 0: Fake GPU (UUID: GPU-fake)'\n")
    smi.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}",
           "SYNCBENCH": str(bin_dir / "syncbench"), "SYNCBENCH_FLOOR": str(bin_dir /
                                                                           "syncbench-floor"),
           "SYNCBENCH_FLOOR_PAIRS": str(pairs)}
    return env, log


def validate_floor(tmp_path, env):
    return subprocess.run([sys.executable, SCRIPT, "--only", "floor", "--keep",
                           str(tmp_path / "keep")], capture_output=True, text=True,
                          timeout=300, env=env)


def result_of(stdout, check_name):
    line = next(x for x in stdout.splitlines() if x.startswith(f"| {check_name} "))
    return line.rstrip(" |").rsplit("|", 1)[1].strip()


def test_validate_only_floor_passes_within_the_target(tmp_path):
    env, log = fakes(tmp_path, [1.05, 1.30, 1.02, 1.05, 1.08])  # pair 2 strays
    r = validate_floor(tmp_path, env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert log.read_text().split() == ["floor", "syncbench", "syncbench", "floor", "floor",
                                       "syncbench", "syncbench", "floor", "floor", "syncbench"]
    # the floor's table first, then validate's; the stray pair shows in the spread only
    assert "| primitive " in r.stdout and "1.050 [1.020, 1.300]" in r.stdout
    assert (tmp_path / "keep" / "floor" / "floor.md").read_text().startswith("| primitive ")
    assert f"0 MISS, {len(floor_checks.FLOOR_MAP)} NOTE, 0 SKIP, 0 ERROR" in r.stdout


def test_validate_only_floor_misses_a_row_over_the_target(tmp_path):
    p = pick("readback with 1 ms pending, pinned")
    env, _ = fakes(tmp_path, [1.0] * 5, stray=(p.name, 1.2))
    r = validate_floor(tmp_path, env)
    assert r.returncode == 1, r.stdout + r.stderr
    assert result_of(r.stdout, f"floor: {p.name}: as {p.scenario} {p.variant} {p.metric}") == \
        "MISS"
    assert "1 MISS" in r.stdout and "0 ERROR" in r.stdout


def test_validate_only_floor_a_failing_floor_is_an_error(tmp_path):
    env, _ = fakes(tmp_path, [1.0] * 5, fail="floor")
    r = validate_floor(tmp_path, env)
    assert r.returncode == 1
    assert f"{2 * len(floor_checks.FLOOR_MAP)} ERROR" in r.stdout
    assert "it broke" in r.stdout

