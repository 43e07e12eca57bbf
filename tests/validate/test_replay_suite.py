"""The replay's suite of real programs (tests/gpu/replay_suite.py) on the CPU: the verdict on
made-up figures, the marked line of every program, the site matched by file and line, and a
whole entry run against a stand-in program and a stand-in syncbench (the rounds' alternating
order, the figures per step, the rank that saves least, an ERROR row for a program that fails).
Nothing here needs torch or a GPU."""
import json
import pathlib
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


def test_outcome_and_flag():
    assert rs.outcome("within") is True
    assert rs.outcome("miss") is False and rs.outcome("miss >2x") is False
    assert rs.outcome("not modelled (no figure)") is None
    assert rs.flag_of({"threads_unmodelled": 2, "per_step": 1.0}) == "threads not modelled: 2"
    assert rs.flag_of({"threads_unmodelled": 0, "per_step": None}) == "no figure"
    assert rs.flag_of({"threads_unmodelled": 0, "per_step": 3.0}) is None
    assert rs.error_pct(125.0, 100.0) == 25.0 and rs.error_pct(1.0, 0.0) is None


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


def test_step_figures():
    one = rs.Entry("a", "a", "a.py", (), ())
    out = 'noise\n{"variant": "sync", "steps": 10, "step_us": 12.5}\n'
    assert rs.step_figures(one, out) == (12.5, 10)
    with pytest.raises(rs.ProgramFailed):
        rs.step_figures(one, "no json\n")
    job = rs.Entry("b", "b", "b.py", (), (), ranks=2)
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


# A stand-in program: 110 us a step syncing, 100 fixed; each run's variant appended to FAKE_LOG.
PROGRAM = """\
import json, os, sys
variant = sys.argv[sys.argv.index("--variant") + 1]
with open(os.environ["FAKE_LOG"], "a") as f:
    f.write(variant + "\\n")
if os.environ.get("FAKE_FAIL"):
    sys.exit("boom: torch has no CUDA device")
step_us = 110.0 if variant == "sync" else 100.0  # SYNC-LINE
if "RANK" in os.environ:
    print(json.dumps({"rank": int(os.environ["RANK"]), "steps": 100, "loop_us": step_us * 100}))
else:
    print(json.dumps({"variant": variant, "steps": 100, "step_us": step_us}))
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
            "threads_unmodelled": int(os.environ.get("FAKE_THREADS", "0"))}
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


def entry_of(s, name="fake", typical=9.0, ranks=0, **env):
    env = {"FAKE_LOG": str(s["log"]), "FAKE_LINE": str(s["line"]), "FAKE_TYPICAL": str(typical),
           **env}
    return rs.Entry(name, "a stand-in", str(s["program"]), ("--variant", "sync"),
                    ("--variant", "fixed"), rounds=3, timeout=60, ranks=ranks,
                    env=tuple(env.items()))


def test_an_entry_alternates_and_predicts_per_step(tmp_path, stand_ins):
    s = stand_ins
    row = rs.run_entry(entry_of(s), str(s["python"]), tmp_path / "out", bin_path=s["syncbench"])
    # warm-up, three rounds (sync first in odd ones), the audit
    assert s["log"].read_text().split() == ["sync", "sync", "fixed", "fixed", "sync", "sync",
                                            "fixed", "sync"]
    assert [x["first"] for x in row["rounds"]] == ["sync", "fixed", "sync"]
    assert row["measured"] == 10.0 and row["spread"] == [10.0, 10.0]
    p = row["predicted"]
    assert (p["per_step"], p["per_step_kept"], p["per_step_mean"]) == (9.0, 7.0, 11.0)
    assert p["calls_per_step"] == 1.0 and p["threads_unmodelled"] == 0
    assert p["notes"] == ["audit: some saving unknown (threads not modelled)"]
    assert row["verdict"] == "within" and row["error_pct"] == pytest.approx(-10.0)
    assert (tmp_path / "out" / "records" / "fake-1.json").exists()


def test_a_job_of_ranks_takes_the_rank_saving_least(tmp_path, stand_ins):
    s = stand_ins
    row = rs.run_entry(entry_of(s, typical=2.0, ranks=2), str(s["python"]), tmp_path,
                       rounds=1, bin_path=s["syncbench"])
    (audit,) = row["audits"]
    assert sorted(x["rank"] for x in audit["processes"]) == [0, 1]
    assert row["predicted"]["per_step"] == 2.0 and row["predicted"]["rank"] == 0
    assert row["verdict"] == "miss >2x"  # 2 of a measured 10 us


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
    assert md[3].startswith("| flagged | `step_us = 110.0 if variant == \"sync\" else 100.0`")
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
