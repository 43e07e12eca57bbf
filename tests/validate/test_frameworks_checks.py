"""The frameworks check (tests/validate/frameworks_checks.py) on the CPU: the claims name real
--fix options of their programs and one row id table; the count at a claimed line from a canned
audit JSON (module and function, class, polls and compile rows left out, a via of another line
not counted); the run's total, the lines that moved, the predicted saving a step and a framework
id that is not the claim's; the verdict on canned figures (within 25 %, inside the spread,
below the noise, a miss, a count target missed); a program that exits 2 is a SKIP and every
claim skipped is an ERROR; and the whole suite with a fake runner: the plain runs alternate,
a toggle claim's round is one toggled process (--alternate, its first variant alternating by
round, its saving the program's step_us_saving; one that fails or starts with the wrong variant
is an ERROR), the budget stops rounds and says so, the files are written and the table says
how each saving was measured. Nothing here measures anything."""
import json
import pathlib
import re

import pytest

import frameworks_checks as fc

AMP = fc.CLAIMS[0]
TRAINER = next(c for c in fc.CLAIMS if c.fix == "nan-filter-off")
PINNED = next(c for c in fc.CLAIMS if c.fix == "pinned")
LOG_EVERY = fc.Claim("lightning_fit", "log-every", fc.ROW_IDS["to_item"],
                     "lightning/fabric/utilities/apply_func.py:to_item", expect=("share", 0.10))
METRIC = next(c for c in fc.CLAIMS if c.fix == "metric-no-validate")


def via(site, function=None):
    func = function or re.search(r" in (\S+)$", site).group(1)
    return {"file": "/x/site-packages/" + site.split(":")[0], "line": 1, "function": func,
            "source": "", "site": site}


def row(count, site=None, cls="sync-stream", phase="run", group="implicit", **more):
    return {"class": cls, "group": group, "count": count, "phase": phase,
            "site": "train.py:10 in main", "via": via(site) if site else None, **more}


def report(rows, blocking=(100,), lines=None):
    procs = [{"blocking_calls": b, "predicted": {"lines": lines or []}} for b in blocking]
    return {"rows": rows, "processes": procs}


def test_claims_are_the_programs_options():
    names = {c.name for c in fc.CLAIMS}
    assert len(names) == len(fc.CLAIMS) == 10
    assert len(LINE_CLAIMS) == 7
    for c in fc.CLAIMS:  # a sync-alone variant is one of its program's --fix names too
        src = (fc.SUITE / f"{c.program}.py").read_text()
        assert not c.sync_alone or f'"{c.sync_alone}"' in src, c
    assert set(c.row for c in fc.CLAIMS) <= set(fc.ROW_IDS.values())
    for c in fc.CLAIMS:
        src = (fc.SUITE / f"{c.program}.py").read_text()
        fixes = re.search(r"^FIXES = \((.*)\)$", src, re.M).group(1)
        assert f'"{c.fix}"' in fixes, c
        assert c.module.endswith(".py") and c.functions and all(c.functions), c
    assert AMP.functions == ("_maybe_opt_step", "<genexpr>")
    assert AMP.module == "torch/amp/grad_scaler.py"


def test_line_count():
    rows = [row(30, "transformers/trainer.py:1847 in _run_epoch"),
            row(5, "transformers/trainer.py:1900 in _run_epoch", cls="copy-pageable"),
            row(7, "transformers/trainer.py:2000 in training_step"),   # another function
            row(9, "transformers/trainer_utils.py:10 in _run_epoch"),  # another module
            row(11, "transformers/trainer.py:1847 in _run_epoch", phase="compile"),
            row(13, "transformers/trainer.py:1847 in _run_epoch", cls="query-event",
                group="poll"),
            row(17, None)]                                           # no via
    assert fc.line_count(report(rows), TRAINER) == 35
    # a longer path of the same module counts; a via's "function" field wins over the text
    longer = [row(2, "/usr/lib/python3/site-packages/transformers/trainer.py:1 in _run_epoch")]
    assert fc.line_count(report(longer), TRAINER) == 2
    # alternatives of a function, and a class asked for
    amp = [row(3, "torch/amp/grad_scaler.py:460 in <genexpr>"),
           row(4, "torch/amp/grad_scaler.py:380 in _maybe_opt_step"),
           row(8, "torch/amp/grad_scaler.py:300 in unscale_")]
    assert fc.line_count(report(amp), AMP) == 7
    batch = [row(40, "lightning/fabric/utilities/apply_func.py:100 in batch_to",
                 cls="copy-pageable"),
             row(6, "lightning/fabric/utilities/apply_func.py:100 in batch_to",
                 cls="sync-stream")]
    assert fc.line_count(report(batch), PINNED) == 40
    assert fc.line_count({"rows": [], "processes": []}, PINNED) == 0


def test_run_total_and_moved():
    assert fc.run_total(report([], blocking=(100, 23))) == 123
    before = report([row(30, "a/b.py:1 in f"), row(4, "c/d.py:2 in g"), row(1, "e/f.py:3 in h")])
    after = report([row(0, "a/b.py:1 in f"), row(7, "c/d.py:2 in g"), row(3, "e/f.py:3 in h"),
                    row(50, "x/y.py:9 in k"), row(9, "a/b.py:1 in f", phase="compile")])
    # rose by more than 2: c/d (4 -> 7) and the new x/y; e/f rose by 2 only; compile left out
    assert fc.moved(before, after) == [("x/y.py:9 in k", 0, 50), ("c/d.py:2 in g", 4, 7)]


def test_predicted_and_framework_id():
    lines = [{"site": "train.py:10 in main", "via": "transformers/trainer.py:1847 in _run_epoch",
              "calls": 30, "save_us": 600.0,
              "framework": {"id": fc.ROW_IDS["nan_inf_filter"]}},
             {"site": "train.py:10 in main", "via": "transformers/trainer.py:1850 in _run_epoch",
              "calls": 30, "save_us": 300.0},
             {"site": "train.py:10 in main", "via": "torch/nn/modules/module.py:1 in _call_impl",
              "calls": 9, "save_us": 5000.0}]
    rep = report([], lines=lines)
    assert fc.predicted(rep, TRAINER, 30) == (30.0, [])
    # a line named for another row of the table: reported
    lines[1]["framework"] = {"id": "transformers.other"}
    assert fc.predicted(rep, TRAINER, 30) == (30.0, ["transformers.other"])
    # so is a report row at the line with another id
    rep2 = report([row(3, "transformers/trainer.py:1847 in _run_epoch",
                       framework={"id": "x.y"})], lines=lines[:1])
    assert fc.predicted(rep2, TRAINER, 30) == (20.0, ["x.y"])
    # no predicted line at the claimed one (or no predicted figures at all): None
    assert fc.predicted(report([], lines=lines[2:]), TRAINER, 30) == (None, [])
    assert fc.predicted({"processes": [{"predicted": None}]}, TRAINER, 30) == (None, [])


def test_count_targets():
    assert fc.count_target(TRAINER, 30, 0)[0]
    assert not fc.count_target(TRAINER, 30, 1)[0]
    assert fc.count_target(LOG_EVERY, 60, 6)[0]        # 10 % of before
    assert not fc.count_target(LOG_EVERY, 60, 7)[0]
    assert fc.count_target(PINNED, 40, 39)[0]          # fewer
    assert not fc.count_target(PINNED, 40, 40)[0]
    ok, text = fc.count_target(TRAINER, 0, 0)         # nothing to remove: not shown
    assert not ok and "no call before" in text


def test_saving_verdict():
    v = fc.saving_verdict
    assert v(100.0, [90.0, 100.0, 110.0]) == (True, "within")
    assert v(124.0, [100.0, 100.0, 100.0]) == (True, "within")       # +24 %
    assert v(126.0, [100.0, 100.0, 100.0]) == (False, "predicted off")
    assert v(74.0, [100.0, 100.0, 100.0]) == (False, "predicted off")
    # the spread wider than 25 %: inside [min, max] is within
    assert v(150.0, [60.0, 100.0, 160.0]) == (True, "within")
    assert v(170.0, [60.0, 100.0, 160.0]) == (False, "predicted off")
    # the spread includes 0 and |predicted| below its half-width (10): below the noise
    assert v(5.0, [-8.0, 2.0, 12.0]) == (True, "below the noise")
    assert v(-5.0, [-8.0, 2.0, 12.0]) == (True, "below the noise")
    # includes 0 but the prediction is beyond the half-width and the spread: a miss
    assert v(15.0, [-8.0, 2.0, 12.0]) == (False, "predicted off")
    assert v(40.0, [-8.0, 2.0, 12.0]) == (False, "predicted off")
    # a spread that does not include 0: no noise rule (a small prediction is off)
    assert v(1.0, [10.0, 20.0, 30.0]) == (False, "predicted off")
    assert v(None, [1.0]) == (False, "no predicted line")
    assert v(1.0, []) == (False, "not measured")


def figures(**more):
    return {"before": 30, "after": 0, "total_before": 100, "total_after": 70, "moved": [],
            "predicted": 20.0, "ids": [], "diffs": [18.0, 21.0, 22.0], **more}


def test_judge():
    r = fc.judge(TRAINER, figures())
    assert r["result"] == "PASS" and r["verdict"] == "PASS: within"
    assert r["error_pct"] == pytest.approx(100 * (20 - 21) / 21)
    r = fc.judge(TRAINER, figures(after=2))
    assert r["result"] == "MISS" and "count 2 not <= 0" in r["verdict"]
    r = fc.judge(TRAINER, figures(ids=["other.row"]))
    assert r["result"] == "MISS" and "framework id other.row" in r["verdict"]
    r = fc.judge(TRAINER, figures(predicted=60.0))
    assert r["result"] == "MISS" and "predicted off" in r["verdict"]
    # a count met does not rescue a prediction off, nor the other way round
    r = fc.judge(TRAINER, figures(after=5, predicted=60.0))
    assert r["verdict"].startswith("MISS: count 5") and "predicted off" in r["verdict"]
    assert fc.judge(TRAINER, {"skip": "transformers is not installed"})["result"] == "SKIP"
    assert fc.judge(TRAINER, {"error": "audit: exit 1"})["result"] == "ERROR"


def test_skip_reason():
    assert fc.skip_reason(2, "error: transformers is not installed: No module named "
                             "'transformers'\n") == "transformers is not installed"
    assert fc.skip_reason(2, "x\nerror: torch sees no CUDA device\n") == \
        "torch sees no CUDA device"
    # exit 2 of a usage error (argparse's, syncbench's) is no skip; nor another exit
    assert fc.skip_reason(2, "hf_trainer.py: error: unknown --fix 'x'\n") is None
    assert fc.skip_reason(1, "error: torch sees no CUDA device\n") is None


def test_overall_and_every_skip_fails():
    rows = [fc.judge(TRAINER, figures()), fc.judge(AMP, {"skip": "torch sees no CUDA device"})]
    text, ok = fc.overall(rows)
    assert ok and "1 PASS" in text and "1 SKIP" in text
    text, ok = fc.overall(rows + [fc.judge(PINNED, figures(after=40, before=40))])
    assert not ok and "1 MISS" in text and "lightning_fit pinned" in text
    assert not fc.overall(rows + [fc.judge(PINNED, {"error": "x"})])[1]
    with pytest.raises(RuntimeError, match="every claim skipped"):
        fc.overall([fc.judge(c, {"skip": "lightning is not installed"}) for c in fc.CLAIMS])
    # the table shows a skipped claim as SKIP
    assert "SKIP: torch sees no CUDA device" in fc.table(rows)


# the suite's shape as these tests know it: the claims judged on a line and their saving
LINE_CLAIMS = [c for c in fc.CLAIMS if not c.by_row and not c.args] + [
    fc.Claim("amp_loop", "bf16", fc.ROW_IDS["found_inf"],
             "torch/amp/grad_scaler.py:_maybe_opt_step|<genexpr>"), LOG_EVERY]
LINE_CLAIMS.sort(key=lambda c: ["amp_loop", "hf_trainer", "lightning_fit"].index(c.program))


class FakeRunner:
    """Plays the suite programs and the audit: a baseline makes 30 calls at each claimed line, a
    fix none at the lines it claims; plain runs print step_us (baseline 1000, a fix 1000 - 20);
    a toggled process (--alternate FIX --blocks B --first F) prints B blocks alternating, F's
    first, and a step_us_saving of 18 with the fix off first and 22 with it on first (its blocks
    say 1000 and 990: the saving is read from step_us_saving, not made again from the blocks);
    the programs in SKIP exit 2, a toggled process of a fix in FAIL exits 1; every call is
    logged (a toggled one with its first variant) and takes TICK seconds of the fake clock."""

    def __init__(self, skip=(), tick=10.0, predicted_us=600.0, fail=(), first_wrong=False):
        self.calls, self.now, self.skip, self.tick = [], 0.0, set(skip), tick
        self.predicted_us, self.fail, self.first_wrong = predicted_us, set(fail), first_wrong
        self.cmds = []

    def clock(self):
        return self.now

    def __call__(self, cmd, timeout):
        cmd = [str(c) for c in cmd]
        self.cmds.append(cmd)
        self.now += self.tick
        audited = cmd[1] == "audit"
        prog_at = next(i for i, c in enumerate(cmd) if c.endswith(".py"))
        program = pathlib.Path(cmd[prog_at]).stem
        fix = cmd[cmd.index("--fix") + 1] if "--fix" in cmd else None
        assert cmd[cmd.index("--size", prog_at) + 1] == "gpu"
        if "--alternate" in cmd:
            return self.toggled(cmd, program)
        self.calls.append(("audit" if audited else "plain", program, fix))
        if program in self.skip:
            return 2, "", f"error: {program} is not installed: nope\n"
        if not audited:
            return 0, "log\n" + json.dumps({"step_us": 1000.0 - (20.0 if fix else 0.0)}), ""
        return self.audit(cmd, program, fix)

    def toggled(self, cmd, program):
        fix, first = cmd[cmd.index("--alternate") + 1], cmd[cmd.index("--first") + 1]
        blocks = int(cmd[cmd.index("--blocks") + 1])
        self.calls.append(("toggle", program, fix, first))
        if fix in self.fail:
            return 1, "", "Traceback ...\nRuntimeError: boom\n"
        order = ["sync" if (k % 2 == 0) == (first == "sync") else "fixed" for k in range(blocks)]
        if self.first_wrong:
            order.reverse()
        line = {"program": program, "alternate": fix, "first": first, "steps": 16,
                "blocks": [{"variant": v, "step_us": 1000.0 if v == "sync" else 990.0}
                           for v in order],
                "step_us_saving": 18.0 if first == "sync" else 22.0}
        return 0, "log\n" + json.dumps(line) + "\n", ""

    def audit(self, cmd, program, fix):
        rows, lines, seen = [], [], set()
        for c in LINE_CLAIMS:  # a line once, removed by each fix that claims it
            if c.program != program or c.line in seen:
                continue
            seen.add(c.line)
            site = f"{c.module}:1 in {c.functions[0]}"
            n = 0 if fix in {d.fix for d in LINE_CLAIMS if d.line == c.line} else 30
            rows.append(row(n, site, cls=c.cls or "sync-stream"))
            lines.append({"site": "x.py:1 in f", "via": site, "calls": n,
                          "save_us": self.predicted_us, "framework": {"id": c.row}})
        pathlib.Path(cmd[cmd.index("--json") + 1]).write_text(
            json.dumps(report(rows, blocking=(sum(r["count"] for r in rows),), lines=lines)))
        return 0, "", ""


def suite(tmp_path, fake, **kw):
    return fc.Suite(LINE_CLAIMS, tmp_path, python="py", binary="sb", runner=fake,
                    clock=fake.clock, log=lambda text: None, **kw)


# a round of LINE_CLAIMS: each program's plain baseline and plain fixes, then its toggled process
ROUND = {1: [("plain", "amp_loop", None), ("plain", "amp_loop", "fused"),
             ("plain", "amp_loop", "bf16"), ("toggle", "amp_loop", "no-check", "sync"),
             ("plain", "hf_trainer", None), ("plain", "hf_trainer", "non-blocking"),
             ("toggle", "hf_trainer", "nan-filter-off", "sync"),
             ("plain", "lightning_fit", None), ("plain", "lightning_fit", "pinned"),
             ("plain", "lightning_fit", "log-every"),
             ("toggle", "lightning_fit", "prog-bar-off", "sync")]}
ROUND[2] = [c[:3] + ("fixed",) if c[0] == "toggle" else c for c in ROUND[1]]


def test_suite_alternates_and_judges(tmp_path):
    fake = FakeRunner()
    rows, text = suite(tmp_path, fake, rounds=2, budget_s=1e9).rows()
    # the audits first, a baseline then each fix of a program; then rounds
    audits = [c for c in fake.calls if c[0] == "audit"]
    assert audits[:3] == [("audit", "amp_loop", None), ("audit", "amp_loop", "fused"),
                          ("audit", "amp_loop", "bf16")]
    assert len(audits) == 3 + 3 + 4 and fake.calls[:10] == audits
    # a round: the plain runs alternate the baseline and the fixes; the toggle claims' savings
    # come from one process each, the fix off first in round 1 and on first in round 2; fused
    # (toggle, its sync alone no-check) keeps the option's own plain run
    assert fake.calls[10:] == ROUND[1] + ROUND[2]
    by = {r["claim"]: r for r in rows}
    # toggled: the rounds' step_us_saving (18, 22), median 20 = the prediction 600 us / 30 steps
    assert by["hf_trainer nan-filter-off"]["diffs"] == [18.0, 22.0]
    assert by["hf_trainer nan-filter-off"]["predicted"] == pytest.approx(20.0)
    assert by["hf_trainer nan-filter-off"]["result"] == "PASS"
    assert by["lightning_fit prog-bar-off"]["diffs"] == [18.0, 22.0]
    # plain: baseline - fix of each round
    assert by["hf_trainer non-blocking"]["diffs"] == [20.0, 20.0]
    assert [r["result"] for r in rows] == ["PASS"] * 7
    fused = by["amp_loop fused"]
    assert fused["diffs"] == [18.0, 22.0] and fused["option_diffs"] == [20.0, 20.0]
    # the files: the audits' JSON, every run (a toggled one with its blocks) and claim a JSON
    # line, the table
    recs = [json.loads(x) for x in (tmp_path / "frameworks.jsonl").read_text().splitlines()]
    assert sum(1 for x in recs if x["kind"] == "claim") == 7
    assert sum(1 for x in recs if x["kind"] in ("audit", "plain", "toggle")) == len(fake.calls)
    toggled = [x for x in recs if x["kind"] == "toggle"]
    assert [(x["fix"], x["round"], x["first"], x["step_us_saving"]) for x in toggled[:2]] == [
        ("no-check", 1, "sync", 18.0), ("nan-filter-off", 1, "sync", 18.0)]
    assert len(toggled[0]["blocks"]) == fc.BLOCKS and "--alternate no-check" in toggled[0]["cmd"]
    assert (tmp_path / "hf_trainer-baseline.json").exists()
    assert (tmp_path / "frameworks.md").read_text().strip() == text
    head = text.splitlines()[0]
    assert "line count before -> after" in head and "verdict" in head
    assert "| 30 -> 0 (<= 0)" in text
    assert "in-process, 8 blocks: 20.0 [18.0, 22.0] (2)" in text
    assert "| 20.0 [20.0, 20.0] (2) " in text  # a plain claim's
    assert ("sync alone (no-check), in-process, 8 blocks: 20.0 [18.0, 22.0] (2); the option, "
            "plain processes: 20.0 [20.0, 20.0] (2)") in text


def test_toggled_commands(tmp_path):
    """A toggled process: the program at the GPU size, the claim's block steps after the warm-up,
    --alternate its sync-alone fix (or its own), the blocks, the round's first variant."""
    fake = FakeRunner()
    suite(tmp_path, fake, rounds=1, budget_s=1e9, blocks=6, warmup=7).rows()
    toggled = [c for c in fake.cmds if "--alternate" in c]
    assert [c[1:] for c in toggled] == [
        [str(fc.SUITE / f"{c.program}.py"), "--size", "gpu", "--steps", str(c.block_steps),
         "--warmup", "7", "--alternate", c.toggled, "--blocks", "6", "--first", "sync"]
        for c in LINE_CLAIMS if c.timing == "toggle"]
    assert all(c[0] == "py" for c in toggled)
    assert [c.toggled for c in LINE_CLAIMS if c.timing == "toggle"] == [
        "no-check", "nan-filter-off", "prog-bar-off"]


def test_first_variant_alternates_by_round(tmp_path):
    assert [fc.first_of(k) for k in (1, 2, 3, 4)] == ["sync", "fixed", "sync", "fixed"]
    fake = FakeRunner()
    rows, _ = fc.Suite([TRAINER], tmp_path, python="py", binary="sb", runner=fake,
                       clock=fake.clock, log=lambda text: None, rounds=3, budget_s=1e9).rows()
    # a claim toggled alone: no plain run at all, one process a round
    assert [c for c in fake.calls if c[0] != "audit"] == [
        ("toggle", "hf_trainer", "nan-filter-off", f) for f in ("sync", "fixed", "sync")]
    assert rows[0]["diffs"] == [18.0, 22.0, 18.0]
    assert rows[0]["result"] == "PASS"  # 20 predicted within [18, 22]


def test_toggle_saving():
    line = {"blocks": [{"variant": "fixed", "step_us": 1.0}, {"variant": "sync", "step_us": 3.0}],
            "step_us_saving": 2.5}
    out = "noise\n" + json.dumps(line) + "\n"
    assert fc.toggle_saving(out, "fixed", 2) == (2.5, None)
    assert fc.toggle_saving(out, "sync", 2) == (None, "the first block is 'fixed', not 'sync'")
    assert fc.toggle_saving(out, "fixed", 4) == (None, "2 blocks, not 4")
    assert fc.toggle_saving(json.dumps({"step_us": 3.0}), "sync", 2)[1] == \
        "no step_us_saving in its last JSON line"
    assert fc.toggle_saving("", "sync", 2)[0] is None


def test_plain_variants():
    assert fc.plain_variants(AMP) == [("option_diffs", "fused")]     # the sync alone toggled
    assert fc.plain_variants(TRAINER) == []
    assert fc.plain_variants(PINNED) == [("diffs", "pinned")]
    assert fc.plain_variants(METRIC) == []                           # counts only
    plain_amp = fc.Claim("amp_loop", "fused", AMP.row, AMP.line, sync_alone="no-check")
    assert fc.plain_variants(plain_amp) == [("option_diffs", "fused"), ("diffs", "no-check")]
    assert AMP.toggled == "no-check" and TRAINER.toggled == "nan-filter-off"


def test_a_toggled_process_that_fails_or_misorders_is_an_error(tmp_path):
    fake = FakeRunner(fail={"nan-filter-off"})
    rows, text = suite(tmp_path, fake, rounds=2, budget_s=1e9).rows()
    by = {r["claim"]: r for r in rows}
    r = by["hf_trainer nan-filter-off"]
    assert r["result"] == "ERROR" and "a toggled run of nan-filter-off: exit 1" in r["verdict"]
    # not tried again in round 2; the program's plain claim goes on
    assert sum(1 for c in fake.calls if c[:3] == ("toggle", "hf_trainer", "nan-filter-off")) == 1
    assert by["hf_trainer non-blocking"]["result"] == "PASS"
    (tmp_path / "w").mkdir()
    fake = FakeRunner(first_wrong=True)
    rows, _ = suite(tmp_path / "w", fake, rounds=1, budget_s=1e9).rows()
    by = {r["claim"]: r for r in rows}
    assert by["lightning_fit prog-bar-off"]["result"] == "ERROR"
    assert "the first block is 'fixed', not 'sync'" in by["lightning_fit prog-bar-off"]["verdict"]
    assert by["lightning_fit pinned"]["result"] == "PASS"


def test_count_only_claims_get_no_plain_runs(tmp_path):
    """A claim judged on its counts alone is audited, never timed: its program's plain runs are
    those of its other claims only, and a toggle claim's run is its toggled process."""
    fake = FakeRunner()
    claims = [c for c in fc.CLAIMS if c.program == "hf_trainer"]
    assert any(c.count_only for c in claims) and not all(c.count_only for c in claims)
    fc.Suite(claims, tmp_path, python="py", binary="sb", runner=fake, clock=fake.clock,
             log=lambda text: None, rounds=1, budget_s=1e9).rows()
    assert [c for c in fake.calls if c[0] != "audit"] == [
        ("plain", "hf_trainer", None), ("plain", "hf_trainer", "non-blocking"),
        ("toggle", "hf_trainer", "nan-filter-off", "sync")]


def test_suite_skips_a_program_and_stops_at_the_budget(tmp_path):
    fake = FakeRunner(skip={"hf_trainer"})
    s = suite(tmp_path, fake, rounds=3, budget_s=150.0)
    rows, text = s.rows()
    by = {r["claim"]: r for r in rows}
    assert by["hf_trainer non-blocking"]["result"] == "SKIP"
    assert "SKIP: hf_trainer is not installed" in text
    # hf_trainer: its baseline audit only, nothing more
    assert [c for c in fake.calls if c[1] == "hf_trainer"] == [("audit", "hf_trainer", None)]
    # 8 audits (80 s), round 1 (each program at least one round), then past the budget
    assert [c for c in fake.calls if c[0] != "audit"] == [
        c for c in ROUND[1] if c[1] != "hf_trainer"]
    assert "budget 150 s" in s.note and "amp_loop 1 of 3" in text
    assert by["amp_loop fused"]["diffs"] == [18.0]
    assert by["amp_loop fused"]["option_diffs"] == [20.0]
    text, ok = fc.overall(rows, s.note)
    # fused's sync alone 18 against 20 predicted: within 25 %
    assert ok and "5 PASS" in text and "2 SKIP" in text and "budget" in text


def test_suite_runs_one_round_past_the_budget(tmp_path):
    """A budget spent by the audits still leaves each program one round: a claim unmeasured
    could not be judged."""
    fake = FakeRunner()
    s = suite(tmp_path, fake, rounds=3, budget_s=50.0)
    rows, text = s.rows()
    assert [c for c in fake.calls if c[0] != "audit"] == ROUND[1]
    assert all(len(r["diffs"]) == 1 for r in rows) and "1 of 3" in s.note


def test_suite_every_program_skipped_fails(tmp_path):
    fake = FakeRunner(skip={"amp_loop", "hf_trainer", "lightning_fit"})
    rows, _ = suite(tmp_path, fake).rows()
    assert all(r["result"] == "SKIP" for r in rows)
    assert len(fake.calls) == 3  # one baseline audit a program
    with pytest.raises(RuntimeError, match="every claim skipped"):
        fc.overall(rows)


def test_suite_a_prediction_off_is_a_miss(tmp_path):
    fake = FakeRunner(predicted_us=1200.0)  # 40 us a step against 18 to 22 measured
    rows, text = suite(tmp_path, fake, rounds=1).rows()
    assert all(r["result"] == "MISS" for r in rows)
    assert "+100 %" in text and "+122 %" in text  # plain (20), toggled (18)


def test_main_selects_claims_by_timing(tmp_path, monkeypatch):
    seen = {}

    class Stub:
        def __init__(self, claims, out, **kw):
            seen["claims"], seen["kw"] = claims, kw

        def rows(self):
            return [fc.judge(c, {"skip": "torch sees no CUDA device"})
                    for c in seen["claims"]], ""
    monkeypatch.setattr(fc, "Suite", Stub)
    assert fc.main(["--timing", "toggle", "--blocks", "6", "--out", str(tmp_path)]) == 1
    assert [c.name for c in seen["claims"]] == [
        "amp_loop fused", "hf_trainer nan-filter-off", "lightning_fit prog-bar-off"]
    assert seen["kw"]["blocks"] == 6
    fc.main(["--timing", "plain", "--program", "hf_trainer", "--out", str(tmp_path)])
    assert [c.fix for c in seen["claims"]] == ["non-blocking", "log-less"]
    for bad in (["--blocks", "5"], ["--blocks", "0"], ["--timing", "toggle", "--program",
                                                       "hf_generate"]):
        with pytest.raises(SystemExit) as e:
            fc.main(bad + ["--out", str(tmp_path)])
        assert e.value.code == 2


def test_a_row_claim_counts_the_rows_its_row_names_and_is_judged_on_counts():
    report = {"rows": [
        {"class": "sync-stream", "count": 30, "phase": "run",
         "via": {"site": "torch/functional.py:1100 in _return_output"},
         "framework": {"id": fc.ROW_IDS["validate_args"]}},
        {"class": "sync-stream", "count": 7, "phase": "run",
         "via": {"site": "torch/functional.py:1100 in _return_output"}, "framework": None}]}
    assert fc.line_count(report, METRIC) == 30
    data = {"before": 30, "after": 0, "total_before": 90, "total_after": 60, "moved": [],
            "predicted": None, "ids": [], "diffs": [1.0, 2.0]}
    assert fc.judge(METRIC, data)["result"] == "PASS"
    assert fc.judge(METRIC, {**data, "after": 1})["result"] == "MISS"


def test_a_claims_program_arguments_and_key(tmp_path):
    """ddp_job's claims run it with their ranks and backend, and its files and rounds are named by
    the key (ddp_job-nccl1), apart from another claim of the same program with other arguments."""
    fake = FakeRunner()
    claims = [c for c in fc.CLAIMS if c.program == "ddp_job"]
    assert {c.program_key for c in claims} == {"ddp_job-nccl1", "ddp_job-gloo2"}
    s = fc.Suite(claims, tmp_path, python="py", binary="sb", runner=fake, clock=fake.clock,
                 log=lambda text: None, rounds=1, budget_s=1e9)
    cmd = [str(x) for x in s.program_cmd("ddp_job-nccl1", "gather-tensor")]
    assert cmd[:6] == ["py", str(fc.SUITE / "ddp_job.py"), "--ranks", "1", "--backend", "nccl"]
    assert cmd[-2:] == ["--fix", "gather-tensor"]
    rows, text = s.rows()
    assert (tmp_path / "ddp_job-nccl1-baseline.json").exists()
    assert (tmp_path / "ddp_job-gloo2-no-broadcast-buffers.json").exists()
    assert "ddp_job-gloo2 no-broadcast-buffers" in text
    # the gloo claim is judged on counts alone: no plain run of ddp_job-gloo2
    plain = [c for c in fake.calls if c[0] == "plain"]
    assert len(plain) == 3  # nccl1: the baseline, gather-tensor, no-nonfinite-check
