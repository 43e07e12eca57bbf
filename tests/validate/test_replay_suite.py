"""The replay's suite of real programs (tests/gpu/replay_suite.py) on the CPU: the verdict on
made-up figures (a range too), the programs' alternating mode's summary (tests/audit/
alternate.py), the marked line of every program, the suite's command lines against the
programs' own parsers (torch stood in for), the site matched by file and line, and a whole
entry run against a stand-in program and a stand-in syncbench (one alternating process a
round, which variant first, the pairs' savings per step, a job's blocks at its slower rank,
the rank that saves least, an ERROR row for a program that fails). Nothing here needs torch
or a GPU."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "gpu"))

import replay_suite as rs  # noqa: E402  (after the path)


@pytest.mark.parametrize("measured, spread, predicted, flag, expected", [
    (100.0, (90.0, 110.0), 100.0, None, "within"),
    (100.0, (99.0, 101.0), 125.0, None, "within"),       # 25 % of the measured saving
    (100.0, (99.0, 101.0), 74.0, None, "miss"),
    (100.0, (40.0, 160.0), 150.0, None, "within"),       # inside the measured spread
    (100.0, (99.0, 101.0), 190.0, None, "miss"),
    (100.0, (99.0, 101.0), 210.0, None, "miss >2x"),
    (100.0, (99.0, 101.0), 45.0, None, "miss >2x"),
    (100.0, (99.0, 101.0), -10.0, None, "miss >2x"),     # the other sign
    (100.0, (99.0, 101.0), 0.0, None, "miss >2x"),
    (-20.0, (-30.0, -10.0), 5.0, None, "miss >2x"),
    (0.0, (-3.0, 2.0), 1.0, None, "within"),
    (0.0, (0.0, 0.0), 1.0, None, "miss >2x"),
    (100.0, (90.0, 110.0), 100.0, "threads not modelled: 1",
     "not modelled (threads not modelled: 1)"),
    (100.0, (90.0, 110.0), None, None, "not modelled (no figure)"),
])
def test_verdict(measured, spread, predicted, flag, expected):
    assert rs.verdict(measured, spread, predicted, flag) == expected


@pytest.mark.parametrize("measured, spread, predicted, lower, expected", [
    (50.0, (45.0, 55.0), 100.0, 40.0, "within range"),   # 30 <= 50 <= 125
    (30.0, (29.0, 31.0), 100.0, 40.0, "within range"),   # the lower figure x 0.75, just
    (125.0, (124.0, 126.0), 100.0, 40.0, "within"),      # 25 % of the measured saving first
    (28.0, (27.0, 29.0), 100.0, 40.0, "miss >2x"),       # below the range: the main figure's
    (140.0, (135.0, 145.0), 100.0, 40.0, "miss"),        # above the main figure x 1.25
    (100.0, (99.0, 101.0), 120.0, 40.0, "within"),
    (50.0, (45.0, 55.0), 100.0, None, "miss"),           # no lower figure: no range
    (60.0, (55.0, 65.0), 40.0, 100.0, "within range"),   # the two the other way round
])
def test_verdict_with_a_range(measured, spread, predicted, lower, expected):
    assert rs.verdict(measured, spread, predicted, None, lower) == expected
    assert rs.verdict(measured, spread, predicted, "threads not modelled: 1", lower) == \
        "not modelled (threads not modelled: 1)"


def test_predicted_text():
    assert rs.predicted_text({"per_step": 12.5}) == "12.50"
    assert rs.predicted_text({"per_step": 12.5, "per_step_producer_bound": None}) == "12.50"
    assert rs.predicted_text({"per_step": 12.5, "per_step_producer_bound": 3.0}) == \
        "12.50 (3.00 if the feeder cannot keep up)"


def test_outcome_and_flag():
    assert rs.outcome("within") is True and rs.outcome("within range") is True
    assert rs.outcome("miss") is False and rs.outcome("miss >2x") is False
    assert rs.outcome("not modelled (no figure)") is None
    assert rs.flag_of({"threads_unmodelled": 2, "per_step": 1.0}) == "threads not modelled: 2"
    assert rs.flag_of({"threads_unmodelled": 0, "per_step": None}) == "no figure"
    assert rs.flag_of({"threads_unmodelled": 0, "per_step": 3.0}) is None
    assert rs.error_pct(125.0, 100.0) == 25.0 and rs.error_pct(1.0, 0.0) is None


def blocks_of(*pairs):
    return [{"variant": v, "step_us": us} for v, us in pairs]


def test_alternate_summary():
    alt = rs.alternate
    assert alt.order("sync", 5) == ["sync", "fixed", "sync", "fixed", "sync"]
    assert alt.order("fixed", 2) == ["fixed", "sync"]
    # pairs (0, 1), (2, 3), (4, 5), whichever first; the host slowing block by block
    blocks = blocks_of(("fixed", 100.0), ("sync", 112.0), ("fixed", 104.0), ("sync", 110.0),
                       ("fixed", 90.0), ("sync", 130.0))
    got = alt.summary("fixed", 300, blocks)
    assert alt.pair_savings(blocks) == [12.0, 6.0, 40.0]
    assert (got["variant"], got["first"], got["steps"], got["blocks"]) == \
        ("alternate", "fixed", 300, blocks)
    assert (got["sync_us"], got["fixed_us"], got["saving_us"]) == (112.0, 100.0, 12.0)
    odd = blocks[:5]  # a last block without its pair counts in its variant's median only
    assert alt.pair_savings(odd) == [12.0, 6.0]
    assert alt.summary("fixed", 300, odd)["fixed_us"] == 100.0
    with pytest.raises(ValueError, match="do not alternate"):
        alt.pair_savings(blocks_of(("sync", 1.0), ("sync", 2.0)))
    with pytest.raises(ValueError, match="no pair"):
        alt.summary("sync", 10, blocks_of(("sync", 1.0)))


def test_alternate_run_times_an_untimed_fixed_block_first():
    seen = []
    blocks = rs.alternate.run("sync", 4, lambda sync: seen.append(sync) or (2.0 if sync else 1.0))
    assert seen == [False, True, False, True, False]
    assert [b["variant"] for b in blocks] == ["sync", "fixed", "sync", "fixed"]
    assert rs.alternate.summary("sync", 1, blocks)["saving_us"] == 1.0


def test_every_program_has_one_marked_line():
    for e in rs.ENTRIES:
        line, code = rs.marked_line(rs.script_path(e))
        assert line > 1 and "SYNC-LINE" not in code, (e.name, code)
    assert rs.marked_line(rs.AUDIT_DIR / "torch_train.py")[1] == "losses.append(loss.item())"
    assert rs.marked_line(rs.AUDIT_DIR / "hf_generate.py")[1] == "if finished.all():"
    # test_replay.py finds the DDP job's line by its text: the same line
    ddp_line = rs.marked_line(rs.AUDIT_DIR / "torch_ddp.py")[0]
    texts = [x.partition("#")[0].strip()
             for x in (rs.AUDIT_DIR / "torch_ddp.py").read_text().splitlines()]
    assert ddp_line == 1 + texts.index("running += loss.item()")


def test_command_lines():
    ddp = rs.select("ddp")[0]
    head = ["py", "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2",
            str(rs.AUDIT_DIR / "torch_ddp.py"), "--backend", "gloo"]
    assert rs.command(ddp, "py", "alternate", first="fixed") == head + [
        "--mode", "alternate", "--steps", "150", "--blocks", "8", "--first", "drop"]
    assert rs.command(ddp, "py", "sync", 4) == head + ["--mode", "item", "--steps", "600"]
    ddp4 = rs.select("ddp4")[0]  # the same job of four ranks
    assert rs.command(ddp4, "py", "sync", 4) == [
        *head[:4], "--nproc_per_node=4", *head[5:], "--mode", "item", "--steps", "600"]
    hf = rs.select("hf-generate")[0]
    assert rs.command(hf, "py", "alternate", 6)[2:] == [
        "--variant", "alternate", "--generations", "1", "--blocks", "6", "--first", "sync"]
    assert rs.command(hf, "py", "fixed")[2:] == ["--variant", "fixed", "--generations", "16"]


# Stands in for torch: a program that gets as far as importing it has parsed its arguments.
STUB_TORCH = "import sys\nsys.stderr.write('stub torch imported\\n')\nraise SystemExit(7)\n"


@pytest.mark.parametrize("entry", rs.ENTRIES, ids=lambda e: e.name)
def test_the_programs_take_the_suites_command_lines(tmp_path, entry):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(STUB_TORCH)
    env = {**os.environ, "PYTHONPATH": str(tmp_path), "RANK": "0", "WORLD_SIZE": "2"}
    script = str(rs.script_path(entry))

    def program(argv):
        argv = [sys.executable, *argv[argv.index(script):]]  # torchrun's head left out
        return subprocess.run(argv, capture_output=True, text=True, env=env, timeout=60)
    for first in ("sync", "fixed"):
        r = program(rs.command(entry, "py", "alternate", first=first))
        assert r.returncode == 7 and "stub torch imported" in r.stderr, r.stderr
    r = program(rs.command(entry, "py", "sync"))
    assert r.returncode == 7, r.stderr
    r = program(rs.command(entry, "py", "alternate") + ["--blocks", "1"])
    assert r.returncode == 2 and "--blocks" in r.stderr, r.stderr


def test_no_marked_line_or_two_is_an_error(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("a = 1\n# SYNC-LINE in a comment alone\n")
    with pytest.raises(rs.ProgramFailed, match="0 lines"):
        rs.marked_line(p)
    p.write_text("a = 1  # SYNC-LINE\nb = 2  # SYNC-LINE\n")
    with pytest.raises(rs.ProgramFailed, match="2 lines"):
        rs.marked_line(p)


def test_site_pattern_is_the_file_and_the_line():
    pat = rs.site_pattern("torch_train.py", 71)
    assert pat.search("/root/x/tests/audit/torch_train.py:71 in main")
    assert pat.search("torch_train.py:71")
    assert not pat.search("tests/audit/torch_train.py:711 in main")
    assert not pat.search("tests/audit/my_torch_train.py:71 in main")
    assert not pat.search("tests/audit/torch_train.py:7 in main")


def test_alternate_figures():
    one = rs.Entry("a", "a", "a.py", (), 10)
    line = {"variant": "alternate", "first": "sync", "steps": 10, "saving_us": 999.0,
            "blocks": blocks_of(("sync", 12.0), ("fixed", 10.0), ("sync", 13.0),
                                ("fixed", 10.0))}
    got = rs.alternate_figures(one, "noise\n" + json.dumps(line) + "\n", "sync")
    assert (got["steps"], got["saving_us"], got["sync_us"]) == (10, 2.5, 12.5)  # recomputed
    with pytest.raises(rs.ProgramFailed, match="first block is not fixed"):
        rs.alternate_figures(one, json.dumps(line), "fixed")
    with pytest.raises(rs.ProgramFailed, match="no JSON line with blocks"):
        rs.alternate_figures(one, '{"variant": "sync", "steps": 10, "step_us": 1.0}', "sync")
    job = rs.Entry("b", "b", "b.py", (), 10, ranks=2)
    rank0 = dict(line, rank=0)  # slower in the sync blocks; rank 1 in the fixed ones
    rank1 = dict(line, rank=1, blocks=blocks_of(("sync", 11.0), ("fixed", 11.0),
                                                ("sync", 11.0), ("fixed", 12.0)))
    got = rs.alternate_figures(job, f"{json.dumps(rank1)}\n{json.dumps(rank0)}\n", "sync")
    assert [b["step_us"] for b in got["blocks"]] == [12.0, 11.0, 13.0, 12.0]
    assert got["saving_us"] == 1.0 and got["rank_blocks"][1] == [11.0, 11.0, 11.0, 12.0]
    rank1["blocks"] = rank1["blocks"][1:]
    with pytest.raises(rs.ProgramFailed, match="lockstep"):
        rs.alternate_figures(job, f"{json.dumps(rank1)}\n{json.dumps(rank0)}\n", "sync")
    with pytest.raises(rs.ProgramFailed, match="ranks"):
        rs.alternate_figures(job, json.dumps(rank0), "sync")


def test_step_figures():
    one = rs.Entry("a", "a", "a.py", (), 10)
    out = 'noise\n{"variant": "sync", "steps": 10, "step_us": 12.5}\n'
    assert rs.step_figures(one, out) == (12.5, 10)
    with pytest.raises(rs.ProgramFailed):
        rs.step_figures(one, "no json\n")
    job = rs.Entry("b", "b", "b.py", (), 10, ranks=2)
    ranks = ('{"rank": 1, "steps": 100, "loop_us": 3000.0}\n'
             '{"rank": 0, "steps": 100, "loop_us": 2000.0}\n')
    assert rs.step_figures(job, ranks) == (30.0, 100)  # the slower rank paces the job
    with pytest.raises(rs.ProgramFailed, match="ranks"):
        rs.step_figures(job, ranks.splitlines()[0])


def test_select():
    assert [e.name for e in rs.select("eval, ddp")] == ["eval", "ddp"]
    assert rs.select(None) == rs.ENTRIES
    with pytest.raises(ValueError, match="no entry nope"):
        rs.select("eval,nope")
    assert len({e.name for e in rs.ENTRIES}) == len(rs.ENTRIES)


# A stand-in program (--variant sync|fixed|alternate, or --mode item|drop|alternate): 110 us a
# step syncing, 100 fixed, FAKE_DRIFT us more each block (the host slowing down); as a rank,
# 3 us more where the rank is the slower one (rank 0 syncing, rank 1 fixed); each run's
# "mode:first:steps" appended to FAKE_LOG.
PROGRAM = """\
import json, os, sys
a = sys.argv[1:]
opt = lambda name: a[a.index(name) + 1] if name in a else "-"
names = {"item": "sync", "drop": "fixed"}
mode = opt("--variant") if "--variant" in a else opt("--mode")
first, steps = opt("--first"), int(opt("--steps"))
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(f"{mode}:{first}:{steps}\\n")
if os.environ.get("FAKE_FAIL"):
    sys.exit("boom: torch has no CUDA device")
rank, drift = int(os.environ.get("RANK", "-1")), float(os.environ.get("FAKE_DRIFT", "0"))
def step_us(variant, k):
    slow = 3.0 if rank == (0 if variant == "sync" else 1) else 0.0
    return (110.0 if variant == "sync" else 100.0) + slow + drift * k  # SYNC-LINE
if mode == "alternate":
    first = names.get(first, first)
    n = int(opt("--blocks"))
    order = ([first, "fixed" if first == "sync" else "sync"] * n)[:n]
    blocks = [{"variant": v, "step_us": step_us(v, k)} for k, v in enumerate(order)]
    line = {"variant": "alternate", "first": first, "steps": steps, "blocks": blocks}
else:
    line = {"variant": mode, "steps": steps, "step_us": step_us(names.get(mode, mode), 0)}
if rank >= 0:
    line.update(rank=rank, loop_us=steps * line.get("step_us", 0.0))
print(json.dumps(line))
"""

# A stand-in python: `-m torch.distributed.run ... SCRIPT ARGS` runs SCRIPT once a rank.
PYTHON = """\
import os, subprocess, sys
args = sys.argv[1:]
if args[:2] != ["-m", "torch.distributed.run"]:
    sys.exit(subprocess.call([sys.executable, *args]))
n = int([a for a in args if a.startswith("--nproc_per_node=")][0].split("=")[1])
script = next(i for i, a in enumerate(args) if a.endswith(".py"))
for rank in range(n):
    rc = subprocess.call([sys.executable, *args[script:]], env={**os.environ, "RANK": str(rank)})
    if rc:
        sys.exit(rc)
"""

# A stand-in syncbench audit: runs the command, writes a report whose every process holds the
# marked line's site (typical FAKE_TYPICAL + the rank per call, a call a step) and a busier
# decoy on line LINE1 (which must not match).
SYNCBENCH = """\
import json, os, subprocess, sys
a = sys.argv[1:]
cmd = a[a.index("--") + 1:]
r = subprocess.run(cmd, capture_output=True, text=True)
sys.stdout.write(r.stdout)
sys.stderr.write(r.stderr + "audit: some saving unknown (threads not modelled)\\n")
os.makedirs(a[a.index("--keep") + 1])
script = next(x for x in cmd if x.endswith("program.py"))
line, typical = os.environ["FAKE_LINE"], float(os.environ["FAKE_TYPICAL"])
procs = [{"pid": 1, "rank": -1, "predicted": None}]
for x in [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]:
    rank = x.get("rank", -1)
    site = {"site": f"{script}:{line} in <module>", "calls": x["steps"],
            "save_per_call_us_typical": typical + max(rank, 0), "save_per_call_us": 11.0,
            "save_per_call_us_readbacks_kept_typical": 7.0,
            **({"save_per_call_us_typical_producer_bound": float(os.environ["FAKE_FEEDER"])}
               if "FAKE_FEEDER" in os.environ else {}),
            "threads_unmodelled": int(os.environ.get("FAKE_THREADS", "0"))}
    if rank >= 0 and "FAKE_RANKS_WHY" in os.environ:  # not played together
        site.update(ranks_unmodelled=1,
                    ranks_model="ranks not modelled: " + os.environ["FAKE_RANKS_WHY"])
    elif rank >= 0 and "FAKE_JOB" in os.environ:  # played together: rank 1 ends last
        site.update(ranks_model="ranks played together: 2 ranks, 5 collectives matched",
                    job_figure=rank == 1)
    decoy = dict(site, site=f"{script}:{line}1 in <module>", calls=5 * x["steps"])
    procs.append({"pid": 2 + max(rank, 0), "rank": rank, "records_incomplete": None,
                  "predicted": {"sites": [decoy, site]}})
with open(a[a.index("--json") + 1], "w") as f:
    json.dump({"processes": procs}, f)
sys.exit(r.returncode)
"""


@pytest.fixture
def stand_ins(tmp_path):
    def write(name, text):
        p = tmp_path / name
        p.write_text(f"#!{sys.executable}\n" + textwrap.dedent(text))
        p.chmod(0o755)
        return p
    program = write("program.py", PROGRAM)
    line = rs.marked_line(program)[0]
    return {"program": program, "line": line, "python": write("python", PYTHON),
            "syncbench": write("syncbench", SYNCBENCH), "log": tmp_path / "order.log"}


def entry_of(s, name="fake", typical=9.0, ranks=0, switch=("--variant", "sync", "fixed"),
             **env):
    env = {"FAKE_LOG": str(s["log"]), "FAKE_LINE": str(s["line"]), "FAKE_TYPICAL": str(typical),
           **env}
    return rs.Entry(name, "a stand-in", str(s["program"]), (), 100, blocks=4, timeout=60,
                    ranks=ranks, env=tuple(env.items()), switch=switch)


def test_an_entry_alternates_and_predicts_per_step(tmp_path, stand_ins):
    s = stand_ins
    row = rs.run_entry(entry_of(s, FAKE_DRIFT="1", FAKE_FEEDER="4"), str(s["python"]),
                       tmp_path / "out", bin_path=s["syncbench"])
    # three rounds of one process, sync first in odd ones; the audit: the blocks' steps in one
    assert s["log"].read_text().split() == ["alternate:sync:100", "alternate:fixed:100",
                                            "alternate:sync:100", "sync:-:400"]
    rounds = row["rounds"]
    assert [x["first"] for x in rounds] == ["sync", "fixed", "sync"]
    assert [b["variant"] for b in rounds[1]["blocks"]] == ["fixed", "sync", "fixed", "sync"]
    assert [b["step_us"] for b in rounds[1]["blocks"]] == [100.0, 111.0, 102.0, 113.0]
    # the drift costs the pair 1 us, to the sync block's good when it comes first
    assert [x["saving_us"] for x in rounds] == [9.0, 11.0, 9.0]
    assert rounds[0]["sync_us"] == 111.0 and rounds[0]["fixed_us"] == 102.0
    assert row["measured"] == 9.0 and row["spread"] == [9.0, 11.0]
    p = row["predicted"]
    assert (p["per_step"], p["per_step_kept"], p["per_step_mean"]) == (9.0, 7.0, 11.0)
    assert p["per_step_producer_bound"] == 4.0
    assert p["calls_per_step"] == 1.0 and p["threads_unmodelled"] == 0
    assert p["notes"] == ["audit: some saving unknown (threads not modelled)"]
    assert row["verdict"] == "within" and row["error_pct"] == pytest.approx(0.0)
    assert row["alternate"][-6:] == ["--steps", "100", "--blocks", "4", "--first", "sync"]
    assert (tmp_path / "out" / "records" / "fake-1.json").exists()


def test_a_range_when_a_feeder_held_the_line_back(tmp_path, stand_ins):
    s = stand_ins
    row = rs.run_entry(entry_of(s, typical=20.0, FAKE_FEEDER="8"), str(s["python"]),
                       tmp_path, rounds=1, bin_path=s["syncbench"])
    assert row["measured"] == 10.0 and row["verdict"] == "within range"  # 6 <= 10 <= 25
    md = rs.table([row]).splitlines()[2]
    assert "| 20.00 (8.00 if the feeder cannot keep up); 7.00 | 100.0 | within range |" in md


def test_a_job_of_an_older_syncbench_takes_the_rank_saving_least(tmp_path, stand_ins):
    s = stand_ins
    job = entry_of(s, typical=2.0, ranks=2, switch=("--mode", "item", "drop"))
    row = rs.run_entry(job, str(s["python"]), tmp_path, rounds=2, blocks=2,
                       bin_path=s["syncbench"])
    assert s["log"].read_text().split() == 2 * ["alternate:item:100"] + \
        2 * ["alternate:drop:100"] + 2 * ["item:-:200"]  # a line a rank
    # each block at its slower rank: 113 syncing (rank 0), 103 fixed (rank 1)
    assert [b["step_us"] for b in row["rounds"][1]["blocks"]] == [103.0, 113.0]
    assert row["rounds"][1]["rank_blocks"] == {0: [100.0, 113.0], 1: [103.0, 110.0]}
    assert row["measured"] == 10.0
    (audit,) = row["audits"]
    assert sorted(x["rank"] for x in audit["processes"]) == [0, 1]
    assert row["predicted"]["per_step"] == 2.0 and row["predicted"]["rank"] == 0
    assert row["verdict"] == "miss >2x"  # 2 of a measured 10 us


def test_a_job_played_together_takes_its_slowest_ranks_figure(tmp_path, stand_ins):
    s = stand_ins
    job = entry_of(s, typical=2.0, ranks=2, switch=("--mode", "item", "drop"), FAKE_JOB="1")
    row = rs.run_entry(job, str(s["python"]), tmp_path, rounds=1, blocks=2,
                       bin_path=s["syncbench"])
    p = row["predicted"]  # rank 1's site says job_figure: 2 + 1 us a call, not rank 0's 2
    assert p["per_step"] == 3.0 and p["rank"] == 1 and p["ranks_unmodelled"] == 0
    assert p["ranks_model"] == ["ranks played together: 2 ranks, 5 collectives matched"]
    assert not row["verdict"].startswith("not modelled")
    job = entry_of(s, typical=2.0, ranks=2, switch=("--mode", "item", "drop"),
                   FAKE_RANKS_WHY="the ranks' collectives differ in number")
    row = rs.run_entry(job, str(s["python"]), tmp_path, rounds=1, blocks=2,
                       bin_path=s["syncbench"])
    assert row["verdict"] == ("not modelled (ranks not modelled: the ranks' collectives "
                              "differ in number)")


def test_flags_and_failures_become_rows(tmp_path, stand_ins):
    s = stand_ins
    flagged = entry_of(s, "flagged", FAKE_THREADS="1")
    failing = entry_of(s, "failing", FAKE_FAIL="1")
    rows = rs.run_entries([failing, flagged], str(s["python"]), tmp_path, rounds=1,
                          bin_path=s["syncbench"])
    assert rows[0]["verdict"] == "ERROR" and "boom: torch has no CUDA device" in rows[0]["error"]
    assert rows[1]["verdict"] == "not modelled (threads not modelled: 1)"
    assert json.loads((tmp_path / "suite.json").read_text())[1]["name"] == "flagged"
    md = (tmp_path / "suite.md").read_text().splitlines()
    assert len(md) == 4 and all(x.count(" | ") == 5 for x in md)
    assert "ERROR: failing" in md[2] and "boom" in md[2]
    assert md[3].startswith("| flagged | `return (110.0 if variant == \"sync\" else 100.0) + ")
    assert "10.00 [10.00, 10.00] µs/step | 9.00; 7.00 | -10.0 | not modelled" in md[3]


def test_a_missing_site_is_an_error(tmp_path, stand_ins):
    s = stand_ins
    row = rs.run_entry(entry_of(s, FAKE_LINE="999"), str(s["python"]), tmp_path, rounds=1,
                       bin_path=s["syncbench"])
    assert row["verdict"] == "ERROR" and "in 0 replayed processes" in row["error"]


def test_main_refuses_an_unknown_entry(capsys):
    with pytest.raises(SystemExit) as e:
        rs.main(["--only", "nope"])
    assert e.value.code == 2 and "no entry nope" in capsys.readouterr().err
