"""The regression gate on samples, as CI runs it, without a GPU: synthetic runs (CSV + samples)
with known answers (identical, a tight 10 % shift, a huge spread, faster), the summary rule when
samples are missing (and the output saying so), --strict, --subset, --rerun (a suite that passes
--dry-run) and `make perf-check`'s confirmation run, driven through a stand-in for the
measuring binary."""
import os
import pathlib
import stat
import subprocess

import pytest

from conftest import BIN, ROOT, run
from synth_runs import noise, row, verdicts, write_run

P = "m=512;n=512;k=512;dtype=fp16;tf32=0"
GEMM = ("small-gemm", "sync-stream", P, "kernel_us")
COPY = ("copy", "h2d-pinned", "bytes=64MiB", "GBps")
WAIT = ("readback", "pending-pinned", "pending_us=1000;pending=spin;print_elems=16", "wait_us")


def runs(tmp_path, gemm=100, copy=50, wait_spread=0.01, wait=100, cur_samples=True):
    base = write_run(tmp_path / "base", [
        row(*GEMM, "lower", noise(100, 0.01, seed=1)),
        row(*COPY, "higher", noise(50, 0.01, seed=2)),
        row(*WAIT, "lower", noise(100, wait_spread, seed=3)),
    ], run_id="rb")
    cur = write_run(tmp_path / "cur", [
        row(*GEMM, "lower", noise(gemm, 0.01, seed=11)),
        row(*COPY, "higher", noise(copy, 0.01, seed=12)),
        row(*WAIT, "lower", noise(wait, wait_spread, seed=13)),
    ], run_id="rc", samples=cur_samples)
    return base, cur


def test_identical_is_same(tmp_path):
    base, _ = runs(tmp_path)
    r = run("compare", base, base)
    assert r.returncode == 0, r.stdout + r.stderr
    assert ("statistics: bootstrap CI of the change of medians on samples (99 %): "
            f"{tmp_path}/base.samples.csv, {tmp_path}/base.samples.csv") in r.stdout
    table = verdicts(r.stdout)
    assert {v for _, v in table.values()} == {"same"}
    cells = table[GEMM][0]
    assert cells[6] == "+0.00" and cells[7].startswith("[") and cells[7].endswith("]")
    assert "3 same, 0 no-baseline, 0 new, 0 missing, 0 inconclusive" in r.stdout
    assert "(threshold 5 %; statistics: bootstrap CI of the change of medians on samples " \
           "(99 %))" in r.stdout


def test_tight_ten_percent_is_a_regression(tmp_path):
    base, cur = runs(tmp_path, gemm=110)
    r = run("compare", base, cur)
    assert r.returncode == 1, r.stdout + r.stderr
    assert verdicts(r.stdout)[GEMM][1] == "REGRESSION"
    assert r.stderr.strip() == "syncbench: compare: 1 regression beyond 5 % and the noise"
    # the summary rule's band (3 x sqrt(0.58^2 + 0.58^2 + 2^2) = 6.5 % for these cvs) would
    # have caught this one too; a 6 % slowdown it lets pass, the samples do not
    base, cur = runs(tmp_path, gemm=106)
    assert run("compare", base, cur).returncode == 1
    (tmp_path / "base.samples.csv").rename(tmp_path / "elsewhere.csv")
    r = run("compare", base, cur)
    assert r.returncode == 0, r.stdout
    assert verdicts(r.stdout)[GEMM][1] == "slower"


def test_huge_spread_is_inconclusive_and_strict_fails_it(tmp_path):
    base, cur = runs(tmp_path, wait_spread=0.8)
    r = run("compare", base, cur)
    assert r.returncode == 0, r.stdout + r.stderr
    assert verdicts(r.stdout)[WAIT][1] == "inconclusive"
    assert ", 1 inconclusive (" in r.stdout
    advice = [line for line in r.stdout.splitlines() if line.startswith("compare: 1 inconclusive")]
    assert advice and "--min-reps" in advice[0] and "make perf-check" in advice[0]
    assert "only with --strict" in advice[0]
    r = run("compare", base, cur, "--strict")
    assert r.returncode == 1
    assert r.stderr.strip() == "syncbench: compare: 1 inconclusive row (--strict)"
    # never `same`, however large the threshold... until it covers the whole interval
    assert verdicts(run("compare", base, cur, "--threshold", "10").stdout)[WAIT][1] == \
        "inconclusive"
    assert verdicts(run("compare", base, cur, "--threshold", "500").stdout)[WAIT][1] == "same"


def test_faster_is_faster(tmp_path):
    base, cur = runs(tmp_path, gemm=80, copy=60)
    r = run("compare", base, cur)
    assert r.returncode == 0
    t = verdicts(r.stdout)
    assert t[GEMM][1] == "faster" and t[COPY][1] == "faster"
    # higher is better: less bandwidth is the regression
    base, cur = runs(tmp_path, copy=40)
    assert verdicts(run("compare", base, cur).stdout)[COPY][1] == "REGRESSION"


def test_without_samples_the_summary_rule_says_so(tmp_path):
    base, cur = runs(tmp_path, gemm=110, cur_samples=False)
    r = run("compare", base, cur)
    assert r.returncode == 1
    assert f"summary rule: samples not found ({tmp_path}/cur.samples.csv)" in r.stdout
    assert "noise %" in r.stdout and "% CI" not in r.stdout
    assert "(threshold 5 %, noise 3 x cv, run noise 2 %; summary rule: samples not found (" \
        in r.stdout
    q = run("compare", base, cur, "-q")
    assert len(q.stdout.splitlines()) == 1 and "summary rule: samples not found" in q.stdout
    # given explicitly: the bootstrap again
    write_run(tmp_path / "other", [row(*GEMM, "lower", noise(110, 0.01, seed=11)),
                                   row(*COPY, "higher", noise(50, 0.01, seed=12)),
                                   row(*WAIT, "lower", noise(100, 0.01, seed=13))], run_id="rc")
    r = run("compare", base, cur, "--current-samples", tmp_path / "other.samples.csv")
    assert "statistics: bootstrap CI" in r.stdout and r.returncode == 1


def test_markdown_says_which_rule(tmp_path):
    base, cur = runs(tmp_path, gemm=110)
    run("compare", base, cur, "--markdown", tmp_path / "cmp.md")
    md = (tmp_path / "cmp.md").read_text()
    assert "statistics: bootstrap CI of the change of medians on samples (99 %)" in md
    assert "| 99 % CI |" in md and "| **REGRESSION** |" in md
    r = run("compare", base, cur, "--confidence", "95", "--markdown", tmp_path / "cmp.md")
    assert "| 95 % CI |" in (tmp_path / "cmp.md").read_text()
    assert "(95 %)" in r.stdout


@pytest.mark.parametrize("text,message", [
    ("r,small-gemm,sync-stream,m=1,kernel_us,1,5\n",
     "base.samples.csv:2: sample of small-gemm sync-stream m=1 kernel_us, which {base} has no "
     "row for"),
    ("rb,small-gemm,sync-stream,%s,kernel_us,0,5\n" % P,
     "base.samples.csv:2: rep '0' is not an integer from 1 to 2147483647"),
    ("rb,small-gemm,sync-stream,%s,kernel_us,1,inf\n" % P,
     "base.samples.csv:2: value 'inf' is not a finite number"),
    ("rb,small-gemm,sync-stream,%s,kernel_us,1,5\nrb,small-gemm,sync-stream,%s,kernel_us,1,5\n"
     % (P, P), "base.samples.csv:3: rep 1 of small-gemm sync-stream"),
    ("old,small-gemm,sync-stream,%s,kernel_us,1,5\n" % P,
     "base.samples.csv:2: run_id 'old' is not {base}:2's 'rb' (samples of another run?)"),
    ("rb,small-gemm,sync-stream,%s,kernel_us,1,5\x00\n" % P,
     "base.samples.csv:2: binary data (a NUL byte): not a CSV file"),
])
def test_bad_samples_are_one_line_errors(tmp_path, text, message):
    base, cur = runs(tmp_path)
    (tmp_path / "base.samples.csv").write_text("run_id,scenario,variant,params,metric,rep,value\n"
                                               + text)
    r = run("compare", base, cur)
    assert r.returncode == 2, r.stdout
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert message.format(base=base) in r.stderr, r.stderr


def test_subset_compares_only_the_rows_current_has(tmp_path):
    base, _ = runs(tmp_path)
    confirm = write_run(tmp_path / "confirm", [row(*GEMM, "lower", noise(100, 0.01, seed=21))],
                        run_id="rc")
    r = run("compare", base, confirm, "-q")
    assert r.returncode == 0
    assert "1 same, 0 no-baseline, 0 new, 2 missing" in r.stdout
    r = run("compare", base, confirm, "-q", "--subset")
    assert r.stdout.startswith("compare: 1 rows: 0 REGRESSION, 0 slower, 0 faster, 1 same, "
                               "0 no-baseline, 0 new, 0 missing, 0 inconclusive")
    assert "--subset: 2 baseline rows not in CURRENT left out" in r.stdout
    # still slower when re-measured: the confirmation fails
    slow = write_run(tmp_path / "slow", [row(*GEMM, "lower", noise(112, 0.01, seed=21))],
                     run_id="rc")
    assert run("compare", base, slow, "--subset").returncode == 1


def test_rerun_suite_holds_exactly_the_rows_to_confirm(tmp_path):
    base, cur = runs(tmp_path, gemm=110, wait_spread=0.8)
    suite = tmp_path / "rerun.ini"
    r = run("compare", base, cur, "--rerun", suite)
    assert r.returncode == 1
    assert f"rerun: 2 measurements to confirm in {suite}" in r.stdout
    text = suite.read_text()
    confirm = [line for line in text.splitlines() if line.startswith("; confirm: ")]
    assert [c.split(":")[1].split()[:2] + [c.split(":")[2].split()[0]] for c in confirm] == [
        ["small-gemm", "sync-stream", "REGRESSION"], ["readback", "pending-pinned",
                                                       "inconclusive"]]
    sections = [line for line in text.splitlines() if line.startswith("[")]
    assert sections == ["[confirm-1]", "[confirm-2]"]
    assert "scenario = small-gemm\nvariants = sync-stream\nm = 512\nn = 512\nk = 512\n" \
           "dtype = fp16\ntf32 = 0\niters = 10\nmin_reps = 30\nmax_reps = 300\nmax_time = 3\n" \
        in text
    assert "scenario = readback\nvariants = pending-pinned\npending_us = 1000\n" in text
    assert "copy" not in text
    dry = run("--config", suite, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    planned = [line.split()[1:3] for line in dry.stdout.splitlines()[1:]]
    assert ["small-gemm", "sync-stream"] in planned and ["readback", "pending-pinned"] in planned
    assert ["copy", "h2d-pinned"] not in planned
    # --rerun-reps; nothing to confirm: a comment only
    run("compare", base, cur, "--rerun", suite, "--rerun-reps", "40")
    assert "min_reps = 40\nmax_reps = 400\n" in suite.read_text()
    r = run("compare", base, base, "--rerun", suite, "--metric", "kernel_us,GBps")
    assert r.returncode == 0
    assert "[" not in suite.read_text()
    assert "; nothing to confirm" in suite.read_text()


def test_rerun_refuses_params_a_suite_cannot_hold(tmp_path):
    base = write_run(tmp_path / "b", [row("s", "v", "m=1 2", "x", "lower", noise(10, 0.01))])
    cur = write_run(tmp_path / "c", [row("s", "v", "m=1 2", "x", "lower", noise(20, 0.01))])
    r = run("compare", base, cur, "--rerun", tmp_path / "r.ini")
    assert r.returncode == 2
    # the file's name may be shortened in the middle (a long temporary folder): its ends stay
    err = r.stderr.strip()
    assert err.startswith("syncbench: compare: --rerun: ") and err.count("\n") == 0, err
    assert err.endswith(f"{cur.name}:2: params 'm=1 2' cannot be written to a suite (expected "
                        "plain names in k=v;k=v)") or err.endswith(
        "...:2: params 'm=1 2' cannot be written to a suite (expected plain names in k=v;k=v)"), err
    assert not (tmp_path / "r.ini").exists()


# ---- make perf-check, with a stand-in for the measuring binary ----

FAKE = """#!/bin/sh
# Stands in for syncbench in `make perf-check`: a measuring run copies the prepared run (the
# first run, then the confirmation run) to --csv and --samples; compare is the real one.
echo "$*" >> "$FAKE_LOG"
if [ "$1" = compare ]; then exec "$REAL" "$@"; fi
config= csv= samples=
while [ $# -gt 0 ]; do
  case "$1" in --config) config=$2; shift;; --csv) csv=$2; shift;; --samples) samples=$2; shift;;
  esac; shift
done
case "$config" in
  */ci.ini) src=$FAKE_FIRST;;
  *) "$REAL" --config "$config" --dry-run >/dev/null || exit $?; src=$FAKE_CONFIRM;;
esac
cp "$src.csv" "$csv" && cp "$src.samples.csv" "$samples"
"""


def perf_check(tmp_path, first, confirm):
    fake = tmp_path / "fake-syncbench"
    fake.write_text(FAKE)
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    log = tmp_path / "calls.log"
    log.write_text("")
    build = tmp_path / "build"
    build.mkdir(exist_ok=True)
    env = dict(os.environ, FAKE_LOG=str(log), REAL=BIN, FAKE_FIRST=str(first),
               FAKE_CONFIRM=str(confirm))
    r = subprocess.run(["make", "-s", "-C", str(ROOT), "-o", str(fake), "perf-check",
                        f"BIN={fake}", f"BUILD={build}", f"BASELINE={tmp_path}/base.csv"],
                       capture_output=True, text=True, env=env, timeout=120)
    return r, log.read_text().splitlines(), build


def stems(tmp_path, first_gemm, confirm_gemm, wait_spread=0.01):
    runs(tmp_path, wait_spread=wait_spread)  # base.csv + base.samples.csv
    write_run(tmp_path / "first", [
        row(*GEMM, "lower", noise(first_gemm, 0.01, seed=31)),
        row(*COPY, "higher", noise(50, 0.01, seed=32)),
        row(*WAIT, "lower", noise(100, wait_spread, seed=33)),
    ], run_id="first")
    write_run(tmp_path / "confirm", [
        row(*GEMM, "lower", noise(confirm_gemm, 0.01, 60, seed=41)),
    ], run_id="confirm")
    return tmp_path / "first", tmp_path / "confirm"


def test_perf_check_clean_run_needs_no_confirmation(tmp_path):
    r, calls, build = perf_check(tmp_path, *stems(tmp_path, 100, 100))
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(calls) == 2  # the run and one compare
    assert "--samples" in calls[0] and calls[0].endswith(f"--markdown {build}/perf-run.md")
    assert calls[1].startswith("compare ") and f"--rerun {build}/perf-rerun.ini" in calls[1]
    assert "; nothing to confirm" in (build / "perf-rerun.ini").read_text()


def test_perf_check_noisy_moment_is_not_a_failed_build(tmp_path):
    # the first run is 15 % slow, the confirmation run is not: exit 0
    r, calls, build = perf_check(tmp_path, *stems(tmp_path, 115, 100))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "measuring again the rows that came out REGRESSION or inconclusive:" in r.stdout
    assert f"  small-gemm sync-stream {P} kernel_us: REGRESSION" in r.stdout
    assert len(calls) == 4
    assert calls[2].startswith(f"--config {build}/perf-rerun.ini --csv {build}/perf-confirm.csv "
                               f"--samples {build}/perf-confirm.samples.csv")
    assert calls[3].startswith(f"compare {tmp_path}/base.csv {build}/perf-confirm.csv --subset")
    assert "1 REGRESSION" in r.stdout and r.stdout.rstrip().splitlines()[-1].startswith(
        "compare: 1 rows: 0 REGRESSION")


def test_perf_check_slowdown_that_stays_fails(tmp_path):
    r, calls, _ = perf_check(tmp_path, *stems(tmp_path, 115, 112))
    assert r.returncode != 0
    assert len(calls) == 4
    assert "compare: 1 regression beyond 5 % and the noise" in r.stderr


def test_perf_check_confirms_inconclusive_rows(tmp_path):
    # no REGRESSION, one inconclusive row: measured again, and the confirmation decides
    r, calls, build = perf_check(tmp_path, *stems(tmp_path, 100, 100, wait_spread=0.8))
    assert len(calls) == 4, r.stdout
    assert "wait_us: inconclusive" in r.stdout
    assert "[confirm-1]\nscenario = readback" in (build / "perf-rerun.ini").read_text()
