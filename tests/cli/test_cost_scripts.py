"""The audit's cost measurements without a GPU: tests/gpu/cost_stats.py's figures and tables on
canned numbers and a synthetic record folder, tests/audit/step_blocks.py over a stand-in
package, and the two scripts the H100 runs once, tests/gpu/activity_cost.sh and
tests/gpu/audit_cost_real.py, end to end over stand-ins whose times follow from how they were
run (a wrong environment or mode gives a wrong figure)."""
import json
import os
import signal
import subprocess
import sys
import types

import pytest

from conftest import BIN, ROOT

sys.path.insert(0, str(ROOT / "tests" / "gpu"))
sys.path.insert(0, str(ROOT / "tests" / "audit"))
import cost_stats  # noqa: E402
import step_blocks  # noqa: E402


def run(argv, env, timeout=120):
    """A script's run, in a session of its own: on the time limit its whole process group is
    killed (nothing left running), and the test fails."""
    p = subprocess.Popen([str(x) for x in argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=env, start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        pytest.fail(f"{argv[1]} ran past {timeout} s")
    return subprocess.CompletedProcess(argv, p.returncode, out, err)


def test_pairs_rows_median_min_max_and_points_against_the_full_variant():
    pairs = cost_stats.read_pairs([
        "round variant plain_us audited_us ratio",
        "1 gpu 10 14 1.4", "1 gpu-no-kernels 10 12 1.2", "1 default 10 10.2 1.02",
        "2 gpu 10 15 1.5", "2 gpu-no-kernels 10 12.5 1.25", "2 default NA 10 NA",
        "3 gpu 8 12 1.5", "3 gpu-no-kernels 8 9 1.125", "3 default 8 8.4 1.05", ""])
    rows = {r["variant"]: r for r in cost_stats.pairs_rows(pairs)}
    g, k, d = rows["gpu"], rows["gpu-no-kernels"], rows["default"]
    assert (g["pairs"], g["ratio"], g["min"], g["max"]) == (3, 1.5, 1.4, 1.5)
    assert g["plain_us"] == 10 and g["audited_us"] == 14
    assert (k["ratio"], k["min"], k["max"]) == (1.2, 1.125, 1.25)
    # its ratio minus gpu's, round by round: -0.2, -0.25, -0.375
    assert k["vs_full"] == pytest.approx((-0.25, -0.375, -0.2))
    assert (d["pairs"], d["failed"]) == (2, 1) and d["ratio"] == pytest.approx(1.035)
    text = cost_stats.pairs_table(list(rows.values()))
    assert "gpu-no-kernels" in text and "+20.0 %" in text and "-25.0 [-37.5, -20.0]" in text
    assert "(1 failed)" in text.splitlines()[3]


def test_rates_rows_slowdown_is_per_round_plain_over_mode():
    results = [("train", "plain", 1, 100.0), ("train", "audit", 1, 80.0),
               ("train", "plain", 2, 50.0), ("train", "audit", 2, 50.0),
               ("train", "plain", 3, 200.0), ("train", "audit", 3, None),
               ("gen", "plain", 1, 10.0), ("gen", "gpu", 1, 5.0)]
    rows = {(r["program"], r["mode"]): r for r in cost_stats.rates_rows(results)}
    a = rows[("train", "audit")]
    # round 1: 100/80 - 1 = +25 %, round 2: 0; round 3 failed (not counted)
    assert a["slowdown"] == pytest.approx((0.125, 0.0, 0.25))
    assert (a["runs"], a["failed"], a["rate"], a["min"], a["max"]) == (2, 1, 65.0, 50.0, 80.0)
    assert rows[("train", "plain")]["slowdown"] == (None, None, None)
    assert rows[("gen", "gpu")]["slowdown"][0] == pytest.approx(1.0)
    text = cost_stats.rates_table(list(rows.values()), {"train": "steps/s"})
    assert "65.0 [50.0, 80.0] steps/s" in text and "+12.5 % [+0.0 %, +25.0 %]" in text


def write_records(folder, lines):
    folder.mkdir()
    (folder / "proc-1.jsonl").write_text("".join(json.dumps(o) + "\n" for o in lines))


def test_census_finds_the_api_record_of_each_kernel_and_copy(tmp_path):
    d = tmp_path / "recs"
    write_records(d, [
        {"t": "proc", "pid": 1, "kinds": ["kernels", "drv-launches"], "off": ["rt-launches"]},
        {"t": "api", "api": "cudaLaunchKernel", "dom": "rt", "corr": 1},
        {"t": "kernel", "corr": 1}, {"t": "kernel", "corr": 5},
        {"t": "api", "api": "cuLaunchKernel", "dom": "drv", "corr": 2},
        {"t": "api", "api": "cudaLaunchKernel", "dom": "rt", "corr": 2},
        {"t": "kernel", "corr": 2},
        {"t": "api", "api": "cuMemcpyAsync", "dom": "drv", "corr": 3},
        {"t": "copy", "corr": 3, "rcorr": 9},
        {"t": "api", "api": "cudaMemcpyAsync", "dom": "rt", "corr": 4},
        {"t": "copy", "corr": 40, "rcorr": 4}, {"t": "memset", "corr": 41, "rcorr": 0}])
    c = cost_stats.census(str(d))
    assert c["kernels"] == 3
    assert c["kernel_launch"] == {"rt": 1, "none": 1, "drv+rt": 1}
    assert c["copy_launch"] == {"copy corr drv": 1, "copy rcorr rt": 1, "memset none": 1}
    assert c["api"] == {"rt cudaLaunchKernel": 2, "drv cuLaunchKernel": 1,
                        "drv cuMemcpyAsync": 1, "rt cudaMemcpyAsync": 1}
    text = cost_stats.census_text("x", c)
    assert "(off: rt-launches)" in text and "3 kernels; records per kernel: api 1.67, copy 0.67,"\
        in text and "proc" not in text
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cost_stats.census_text("e", cost_stats.census(str(empty))) == "e: no records"


def test_turns_summary_pools_every_pair_of_blocks():
    run_a = {"blocks": [{"recording": "on", "step_us": 110}, {"recording": "off", "step_us": 100},
                        {"recording": "off", "step_us": 200}, {"recording": "on", "step_us": 204},
                        {"recording": "on", "step_us": 1}]}  # a last block without its pair
    run_b = {"blocks": [{"recording": "on", "step_us": 103}, {"recording": "off", "step_us": 100}]}
    n, med, lo, hi = cost_stats.turns_summary([run_a, None, run_b])
    assert n == 3 and med == pytest.approx(0.03)
    assert lo == pytest.approx(0.02) and hi == pytest.approx(0.10)
    assert cost_stats.turns_summary([{"blocks": []}, None]) == (0, None, None, None)


def test_callback_time_counts_the_loops_calls_by_their_warm_mean(tmp_path):
    d = tmp_path / "recs"
    steps = 4
    recs = [{"t": "proc", "pid": 1}]
    recs += [{"t": "call", "api": "cudaMalloc", "oh": 9_000_000}]  # set-up: once, left out
    # the sync: a cold first half (stacks walked and named), a warm second half
    recs += [{"t": "call", "api": "cudaStreamSynchronize", "oh": x}
             for x in (25000, 25000, 1000, 3000)]
    recs += [{"t": "call", "api": "cudaMemcpyAsync", "oh": 5000}] * 8  # two a step
    recs += [{"t": "stack", "id": 1}, ["a list"]]
    write_records(d, recs)
    with open(d / "proc-1.jsonl", "a") as f:
        f.write('{"t": "call", "api": "cut short\n')
    c = cost_stats.callback_time(str(d), steps)
    assert c["calls"] == {"cudaStreamSynchronize": (1.0, 2.0), "cudaMemcpyAsync": (2.0, 5.0)}
    assert c["us_per_step"] == pytest.approx(12.0)
    r = subprocess.run([sys.executable, str(ROOT / "tests" / "gpu" / "cost_stats.py"),
                        "callbacks", str(d), str(steps)], capture_output=True, text=True)
    assert r.returncode == 0 and "own time in the callbacks: 12.00 us a step" in r.stdout


def test_step_blocks_sum_what_each_block_saw(monkeypatch):
    assert step_blocks.StepBlocks(None).fields() == {"no_syncs": None, "syncs_per_block": None}
    seen = []

    class Block:  # stands in for syncbench.no_syncs: two blocking calls a block
        def __init__(self, allow):
            seen.append(allow)
            self.blocking = 0

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.blocking = 2
            return False

    monkeypatch.setitem(sys.modules, "syncbench", types.SimpleNamespace(no_syncs=Block))
    b = step_blocks.StepBlocks(3)
    for _ in range(4):
        with b.block():
            pass
    assert seen == [3] * 4
    assert b.fields() == {"no_syncs": 3, "syncs_per_block": 2.0}


# A stand-in for syncbench in activity_cost.sh and window_cost.sh: `audit [opts] -- CMD` runs CMD
# with the level and the window the real launcher would give (SYNCBENCH_AUDIT_GPU,
# SYNCBENCH_AUDIT_WINDOW) and, with --keep, writes a record folder; --json writes a report whose
# sync_step site saves 5 us a call (5.2 from a window). A run writes a CSV whose wall_us_per_iter
# is 10 us, 10.2 under the default audit or outside a window, and 14 under --gpu-activity
# without its calibration, 13 when SYNCBENCH_ACTIVITY_OFF turns the kernels off (or all).
FAKE_SYNCBENCH = r'''#!/usr/bin/env bash
if [ "$1" = audit ]; then
    shift
    gpu=0 keep= json= window=
    while [ "$1" != -- ]; do
        case $1 in
            --gpu-activity) gpu=3 ;;
            --gpu-activity-range) gpu=3; window=$2; shift ;;
            --keep) keep=$2; shift ;;
            --json) json=$2; shift ;;
        esac
        shift
    done
    shift
    if [ -n "$keep" ]; then
        mkdir "$keep"
        printf '{"t":"proc","kinds":["kernels"]}\n{"t":"kernel","corr":1}\n' >"$keep/proc-1.jsonl"
    fi
    save=500
    [ -n "$window" ] && save=520
    [ -n "$json" ] && echo "{\"processes\":[{\"predicted\":{\"sites\":[{\"site\":\"x!sync_step\",\"calls\":100,\"save_us\":$save}]}}]}" >"$json"
    export SYNCBENCH_AUDIT_DIR=x SYNCBENCH_AUDIT_GPU=$gpu
    [ -n "$window" ] && export SYNCBENCH_AUDIT_WINDOW=$window
    exec "$@"
fi
us=10
if [ -n "${SYNCBENCH_AUDIT_DIR:-}" ] && [ -n "${SYNCBENCH_AUDIT_WINDOW:-}" ]; then
    us=10.2
elif [ -n "${SYNCBENCH_AUDIT_DIR:-}" ] && [ "$SYNCBENCH_AUDIT_GPU" = 3 ]; then
    us=14
    case ",${SYNCBENCH_ACTIVITY_OFF:-}," in *,kernels,* | *,all,*) us=13 ;; esac
    [ "${SYNCBENCH_ACTIVITY_CALIBRATE:-}" = 0 ] || us=1000 # the calibration was not skipped
elif [ -n "${SYNCBENCH_AUDIT_DIR:-}" ]; then
    us=10.2
fi
while [ $# -gt 0 ] && [ "$1" != --csv ]; do shift; done
[ $# -gt 0 ] && printf 'scenario,metric,median\nsmall-gemm,wall_us_per_iter,%s\n' "$us" >"$2"
exit 0
'''


def test_activity_cost_script_pairs_every_variant(tmp_path):
    fake = tmp_path / "syncbench"
    fake.write_text(FAKE_SYNCBENCH)
    fake.chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, SYNCBENCH=str(fake), ACTIVITY_COST_BUDGET_S="600")
    r = run(["bash", ROOT / "tests" / "gpu" / "activity_cost.sh", out, "2"], env)
    assert r.returncode == 0, r.stderr
    rounds = (out / "activity_cost.rounds").read_text().splitlines()
    assert rounds[0] == "round variant plain_us audited_us ratio"
    assert len(rounds) == 1 + 2 * 17, rounds
    rows = {r["variant"]: r for r in cost_stats.pairs_rows(cost_stats.read_pairs(rounds))}
    assert rows["default"]["ratio"] == pytest.approx(1.02)
    assert rows["default-no-waits"]["ratio"] == pytest.approx(1.02)  # no --gpu-activity
    assert rows["gpu"]["ratio"] == pytest.approx(1.4)
    assert rows["gpu-window"]["ratio"] == pytest.approx(1.02)  # measured outside its window
    for v in ("gpu-no-kernels", "gpu-kernels-only"):  # kernels on only in the second
        assert rows[v]["ratio"] == pytest.approx(1.3 if v == "gpu-no-kernels" else 1.4), v
    assert rows["gpu-none"]["ratio"] == pytest.approx(1.3)
    assert "gpu-no-events" not in rows and "gpu-zeroed" in rows  # named only
    assert rows["gpu-no-kernels"]["vs_full"][0] == pytest.approx(-0.1)
    assert all(r["pairs"] == 2 for r in rows.values())
    table = (out / "activity_cost.txt").read_text()
    assert "+40.0 %" in table and table in r.stdout
    census = (out / "census.txt").read_text()
    assert census.count("kinds kernels") == 6, census  # 2 workloads x full, rt-only, drv-only
    assert {"1-default-audited.csv", "1-default-plain.csv", "index"} <= set(
        os.listdir(out / "runs"))
    # a round that does not fit the budget is not started; variants chosen, no census
    r = run(["bash", ROOT / "tests" / "gpu" / "activity_cost.sh", tmp_path / "out2", "3"],
            dict(env, ACTIVITY_COST_BUDGET_S="0", ACTIVITY_COST_CENSUS="0",
                 ACTIVITY_COST_VARIANTS="gpu gpu-none"))
    assert "budget: 1 rounds" in r.stdout
    lines = (tmp_path / "out2" / "activity_cost.rounds").read_text().splitlines()
    assert [x.split()[:2] for x in lines[1:]] == [["1", "gpu"], ["1", "gpu-none"]]
    assert not (tmp_path / "out2" / "census" / "async-full").exists()


# A stand-in for the torch interpreter in audit_cost_real.py: step_us 1000 plain, 1100 under the
# default audit (1050 without the hand-offs, 1020 without the stacks), 1500 under --gpu-activity
# without its calibration, 1200 with --no-syncs (the
# package found on PYTHONPATH); the generation loop exits 2 as hf_generate.py does without
# transformers when STUB_NO_HF is set.
FAKE_PYTHON = r'''#!/usr/bin/env bash
prog=$(basename "$1")
echo "$*" >> "${STUB_ARGS_LOG:-/dev/null}"
if [ "$prog" = hf_generate.py ] && [ -n "${STUB_NO_HF:-}" ]; then
    echo "hf_generate.py: needs transformers (stub)" >&2
    exit 2
fi
us=1000 per=null
case ${SYNCBENCH_AUDIT_GPU:-} in
    3) us=9999; [ "${SYNCBENCH_ACTIVITY_CALIBRATE:-}" = 0 ] && us=1500 ;;
    0) us=1100
       [ "${SYNCBENCH_ACTIVITY_OFF:-}" = waits ] && us=1050
       [ "${SYNCBENCH_AUDIT_DEPTH:-}" = 0 ] && [ "${SYNCBENCH_AUDIT_PYTHON:-}" = 0 ] && us=1020 ;;
esac
case " $* " in
    *" --recording-turns 4 "*)
        echo '{"variant": "recording-turns", "on_us": 1030, "off_us": 1000, "blocks": [{"recording": "on", "step_us": 1030}, {"recording": "off", "step_us": 1000}, {"recording": "on", "step_us": 1030}, {"recording": "off", "step_us": 1000}]}'
        exit 0 ;;
    *" --no-syncs "*)
        us=9999 per=1.0
        [ -f "${PYTHONPATH%%:*}/syncbench/__init__.py" ] && us=1200 ;;
esac
echo "{\"step_us\": $us, \"syncs_per_block\": $per}"
'''


def test_audit_cost_real_runs_every_mode_as_a_process_of_its_own(tmp_path):
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, SYNCBENCH=BIN, TORCH_PYTHON=str(fake))
    r = run([sys.executable, ROOT / "tests" / "gpu" / "audit_cost_real.py", "--out", out,
             "--rounds", "2"], env)
    assert r.returncode == 0, r.stderr
    runs = [json.loads(x) for x in (out / "real.jsonl").read_text().splitlines()]
    assert len(runs) == 2 * 4 * 2
    # the modes rotate: round 1 starts with the audit, round 2 with --gpu-activity
    assert [x["mode"] for x in runs[:4]] == ["audit", "gpu", "no_syncs", "plain"]
    assert [x["mode"] for x in runs[8:12]] == ["gpu", "no_syncs", "plain", "audit"]
    rows = {(x["program"], x["mode"]): x for x in cost_stats.rates_rows(
        [(x["program"], x["mode"], x["round"], x["rate"]) for x in runs])}
    for prog in ("train", "generate"):
        assert rows[(prog, "plain")]["rate"] == pytest.approx(1000)
        assert rows[(prog, "audit")]["slowdown"][0] == pytest.approx(0.1)
        assert rows[(prog, "gpu")]["slowdown"][0] == pytest.approx(0.5)
        assert rows[(prog, "no_syncs")]["slowdown"][0] == pytest.approx(0.2)
    text = (out / "real.txt").read_text()
    assert "+50.0 % [+50.0 %, +50.0 %]" in text and "tokens/s" in text
    assert "each no_syncs block made 1.00 blocking call(s)" in text
    # a program that cannot run here is dropped with its reason
    r = run([sys.executable, ROOT / "tests" / "gpu" / "audit_cost_real.py", "--out",
             tmp_path / "out2", "--rounds", "2"], dict(env, STUB_NO_HF="1"))
    assert r.returncode == 0, r.stderr
    assert "generate: not run here: hf_generate.py: needs transformers (stub)" in r.stdout
    runs = [json.loads(x) for x in (tmp_path / "out2" / "real.jsonl").read_text().splitlines()]
    assert sum(x["program"] == "generate" for x in runs) == 1


def test_audit_cost_real_host_bound_loop_and_chosen_modes(tmp_path):
    """train-host is torch_train.py at its host-bound size; --modes runs those (plain always)."""
    fake = tmp_path / "python"
    fake.write_text(FAKE_PYTHON)
    fake.chmod(0o755)
    out, argl = tmp_path / "out", tmp_path / "args"
    env = dict(os.environ, SYNCBENCH=BIN, TORCH_PYTHON=str(fake), STUB_ARGS_LOG=str(argl))
    r = run([sys.executable, ROOT / "tests" / "gpu" / "audit_cost_real.py", "--out", out,
             "--rounds", "3", "--only", "train-host", "--modes", "audit"], env)
    assert r.returncode == 0, r.stderr
    runs = [json.loads(x) for x in (out / "real.jsonl").read_text().splitlines()]
    assert [(x["program"], x["mode"]) for x in runs] == [
        ("train-host", m) for m in ("audit", "plain", "plain", "audit", "audit", "plain")]
    assert all("torch_train.py --variant sync --size host" in x
               for x in argl.read_text().splitlines())
    rows = {x["mode"]: x for x in cost_stats.rates_rows(
        [(x["program"], x["mode"], x["round"], x["rate"]) for x in runs])}
    assert rows["audit"]["slowdown"][0] == pytest.approx(0.1)
    assert rows["audit"]["interval"] == pytest.approx((0.1, 0.1)) and rows["audit"]["pairs"] == 3
    assert "+10.0 % [+10.0 %, +10.0 %]" in (out / "real.txt").read_text()
    # where the default mode's cost goes: the variants without the hand-offs, without stacks
    r = run([sys.executable, ROOT / "tests" / "gpu" / "audit_cost_real.py", "--out",
             tmp_path / "parts", "--rounds", "2", "--only", "train-host", "--modes",
             "audit-nostacks,audit,audit-nowaits"], env)
    assert r.returncode == 0, r.stderr
    runs = [json.loads(x) for x in (tmp_path / "parts" / "real.jsonl").read_text().splitlines()]
    rows = {x["mode"]: x["slowdown"][0] for x in cost_stats.rates_rows(
        [(x["program"], x["mode"], x["round"], x["rate"]) for x in runs])}
    assert rows.pop("plain") is None
    assert rows == pytest.approx({"audit": 0.1, "audit-nowaits": 0.05, "audit-nostacks": 0.02})
    # the recording on and off within each process: the pairs of blocks pooled
    r = run([sys.executable, ROOT / "tests" / "gpu" / "audit_cost_real.py", "--out",
             tmp_path / "turns", "--rounds", "2", "--only", "train-host", "--modes",
             "audit-turns", "--turn-blocks", "4"], env)
    assert r.returncode == 0, r.stderr
    assert ("train-host: the recording on over off within a process, 4 pairs of blocks: +3.0 % "
            "(95 % interval [+3.0 %, +3.0 %])") in r.stdout
    runs = [json.loads(x) for x in (tmp_path / "turns" / "real.jsonl").read_text().splitlines()]
    assert {x["mode"]: x["rate"] for x in runs} == pytest.approx(
        {"plain": 1e6 / 1000, "audit-turns": 1e6 / 1030})
    assert any("--recording-turns 4" in x and "torch_train.py" in x
               for x in argl.read_text().splitlines())
    for bad, what in ((["--modes", "audit,fast"], "--modes: no mode fast"),
                      (["--only", "train-gpu"], "--only: no program train-gpu"),
                      (["--modes", "audit-turns"], "the training loops only"),
                      (["--only", "train", "--turn-blocks", "1"], "at least 2")):
        r = run([sys.executable, ROOT / "tests" / "gpu" / "audit_cost_real.py", "--out", out,
                 *bad], env)
        assert r.returncode == 2 and what in r.stderr, r.stderr


# A stand-in for audit_window in window_cost.sh: its median step, 10 us plain, 10.2 under the
# default audit or outside a window (SYNCBENCH_AUDIT_WINDOW), 14 under --gpu-activity.
FAKE_WINDOW_PROGRAM = r'''#!/usr/bin/env bash
us=10
if [ -n "${SYNCBENCH_AUDIT_WINDOW:-}" ]; then us=10.2
elif [ "${SYNCBENCH_AUDIT_GPU:-}" = 3 ]; then us=14
elif [ -n "${SYNCBENCH_AUDIT_DIR:-}" ]; then us=10.2
fi
[ "$1" = 50 ] || exit 9  # the steps asked for
echo "{\"steps\":$1,\"step_us\":$us}"
'''


def test_window_cost_script_pairs_each_mode_and_compares_the_predictions(tmp_path):
    fake, prog = tmp_path / "syncbench", tmp_path / "audit_window"
    fake.write_text(FAKE_SYNCBENCH)
    prog.write_text(FAKE_WINDOW_PROGRAM)
    fake.chmod(0o755)
    prog.chmod(0o755)
    out = tmp_path / "out"
    env = dict(os.environ, SYNCBENCH=str(fake), WINDOW_COST_PROGRAM=str(prog),
               WINDOW_COST_STEPS="50", WINDOW_COST_WINDOW="step:3-7")
    r = run(["bash", ROOT / "tests" / "gpu" / "window_cost.sh", out, "3"], env)
    assert r.returncode == 0, r.stderr
    lines = (out / "window_cost.rounds").read_text().splitlines()
    assert lines[0] == "round mode plain_us audited_us ratio save_per_call_us"
    got = [x.split() for x in lines[1:]]
    assert [(x[0], x[1]) for x in got] == [(str(k), m) for k in (1, 2, 3)
                                           for m in ("default", "gpu", "window")]
    by = {(x[0], x[1]): x for x in got}
    assert by[("1", "gpu")][2:] == ["10", "14", "1.4000", "5.0000"]
    assert by[("2", "window")][2:] == ["10", "10.2", "1.0200", "5.2000"]
    assert by[("3", "default")][5] == "NA"
    s = cost_stats.window_summary(cost_stats.read_window_rounds(lines))
    assert s["modes"]["window"]["overhead"] == pytest.approx(0.02)
    assert s["modes"]["gpu"]["pairs"] == 3 and s["modes"]["gpu"]["overhead"] == pytest.approx(0.4)
    assert s["window_vs_default"][0] == pytest.approx(0) and s["window_vs_default"][3] == 3
    assert s["prediction"][0] == pytest.approx(0.04) and s["prediction"][3] == 3
    text = (out / "window_cost.txt").read_text()
    assert "window       3 +2.0 %" in text and "window / full recording: +4.0 %" in text
    assert text in r.stdout and len(list((out / "reports").glob("*.json"))) == 6


def test_window_summary_intervals_and_failed_runs():
    rounds = cost_stats.read_window_rounds([
        "round mode plain_us audited_us ratio save_per_call_us",
        "1 default 10 10.1 1.01 NA", "1 window 10 10.3 1.03 4.4", "1 gpu 10 13 1.3 4",
        "2 default 10 10.2 1.02 NA", "2 window NA 10.3 NA 4.2", "2 gpu 10 14 1.4 4",
        "3 default 10 10.0 1.0 NA", "3 window 10 10.1 1.01 3.8", "3 gpu 10 12 1.2 4"])
    s = cost_stats.window_summary(rounds)
    w = s["modes"]["window"]
    assert (w["pairs"], w["failed"]) == (2, 1)
    assert w["overhead"] == pytest.approx(0.02) and (w["min"], w["max"]) == \
        (pytest.approx(0.01), pytest.approx(0.03))
    assert w["low"] <= w["overhead"] <= w["high"]
    # rounds 1 and 3 only: +2 and +1 points
    assert s["window_vs_default"][0] == pytest.approx(0.015) and s["window_vs_default"][3] == 2
    # 4.4 / 4, 4.2 / 4, 3.8 / 4: the prediction needs no plain run
    assert s["prediction"][0] == pytest.approx(0.05) and s["prediction"][3] == 3
    text = cost_stats.window_table(s)
    assert "(1 failed)" in text and "+1.5 points" in text
