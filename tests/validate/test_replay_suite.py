"""The replay's suite of real programs (tests/gpu/replay_suite.py) on the CPU: the verdict on
made-up figures (a range too), the programs' alternating mode's summary (tests/audit/
alternate.py), the marked line of every program (an entry's tagged marker where a program
holds two pairs), the suite's command lines against the programs' own parsers (torch stood in
for), the mask program's count pair (torch_mask.py --pair count: the same ops as its fixed
variant but the host's read of the count, on the marked line; a bad --pair a usage error
before torch), the site matched by file and line, and a whole entry run against a stand-in
program and a stand-in syncbench (one alternating process a round, which variant first, the
pairs' savings per step, a job's blocks at its slower rank, the rank that saves least, an
ERROR row for a program that fails). Nothing here needs torch or a GPU."""
import dataclasses
import importlib.util
import json
import os
import pathlib
import re
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
        line, code = rs.marked_line(rs.script_path(e), e.marker)
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


def test_the_mask_count_entries_mirror_the_mask_ones():
    # the pair that differs by the sync alone: mask-SIZE's program, steps and blocks, --pair
    # count, and the count pair's own marker
    script = str(rs.AUDIT_DIR / "torch_mask.py")
    for size, steps, blocks in (("gpu", 50, 8), ("host", 100, 24)):
        index, count = rs.select(f"mask-{size},mask-count-{size}")
        assert (count.script, count.steps, count.blocks) == \
            (index.script, index.steps, index.blocks) == ("torch_mask.py", steps, blocks)
        assert count.args == (*index.args, "--pair", "count") and "--pair" not in index.args
        assert (index.marker, count.marker) == ("# SYNC-LINE", "# SYNC-LINE count")
        head = ["py", script, "--size", size, "--pair", "count"]
        assert rs.command(count, "py", "sync") == head + [
            "--variant", "sync", "--steps", str(steps * blocks)]
        assert rs.command(count, "py", "alternate", first="fixed") == head + [
            "--variant", "alternate", "--steps", str(steps), "--blocks", str(blocks),
            "--first", "fixed"]


def test_each_mask_pair_has_its_own_marked_line():
    path = rs.AUDIT_DIR / "torch_mask.py"
    index = rs.marked_line(path, rs.select("mask-host")[0].marker)
    count = rs.marked_line(path, rs.select("mask-count-host")[0].marker)
    assert index[1] == "loss = f.cross_entropy(logits[keep], y[keep])"
    assert count[1] == "n = int(keep.sum())"


class Op:
    """torch, a module of it or a tensor, stood in for: every call and operator on it appended
    to LOG by name (an attribute's, LABEL.attribute's of a tensor given a LABEL), int() of it
    is the host's read of a value (1)."""

    def __init__(self, log, name="torch", label=None):
        self._log, self._name, self._label = log, name, label

    def __getattr__(self, attr):
        return Op(self._log, attr if self._label is None else f"{self._label}.{attr}")

    def __call__(self, *args, **kwargs):
        return self._did(self._name)

    def _did(self, what):
        self._log.append(what)
        return Op(self._log, "result")

    def __int__(self):
        self._log.append("int()")
        return 1

    def __float__(self):
        return 1.0

    def __getitem__(self, key):
        return self._did("[]")

    def __mul__(self, other):
        return self._did("*")

    def __truediv__(self, other):  # by a tensor or by a Python int: one kernel either way
        return self._did("/")

    def __gt__(self, other):
        return self._did(">")


@pytest.fixture
def torch_mask():
    """tests/audit/torch_mask.py imported (its helpers from beside it), sys.path and
    sys.modules left as they were."""
    saved_path, saved_modules = list(sys.path), set(sys.modules)
    sys.path.insert(0, str(rs.AUDIT_DIR))
    try:
        spec = importlib.util.spec_from_file_location("torch_mask_under_test",
                                                      rs.AUDIT_DIR / "torch_mask.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path[:] = saved_path
        for name in set(sys.modules) - saved_modules:
            del sys.modules[name]


def one_step(module, pair, sync):
    """(the ops of one step of PAIR's variant, the lines of torch_mask.py it ran)."""
    log, lines = [], set()
    step = module.build(Op(log), "host", pair)
    del log[:]  # the model, the optimizer and the data made
    made = dict(zip(step.__code__.co_freevars, (c.cell_contents for c in step.__closure__)))
    made["keep"]._label = "keep"  # the mask's own calls told from its weights' (w = keep.to)

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != module.__file__:
            return None
        if event == "line":
            lines.add(frame.f_lineno)
        return tracer
    before = sys.gettrace()
    sys.settrace(tracer)
    try:
        step(sync)
    finally:
        sys.settrace(before)
    return log, lines


def test_the_count_pair_differs_by_the_sync_alone(torch_mask):
    path = rs.AUDIT_DIR / "torch_mask.py"
    count_line = rs.marked_line(path, rs.select("mask-count-host")[0].marker)[0]
    index_line = rs.marked_line(path, rs.select("mask-host")[0].marker)[0]
    sync, sync_lines = one_step(torch_mask, "count", True)
    fixed, fixed_lines = one_step(torch_mask, "count", False)
    # the same ops in the same order (the count reduction, the weighted loss over it), the
    # syncing one's host read of the count the only one more
    assert fixed == ["zero_grad", "result", "keep.to", "keep.sum", "cross_entropy", "*", "sum",
                     "/", "backward", "step"]
    assert sync == fixed[:4] + ["int()"] + fixed[4:]
    assert count_line in sync_lines and count_line not in fixed_lines
    assert index_line not in sync_lines | fixed_lines
    # the index pair: boolean indexing against the weights, far more than a host read apart;
    # its marked line runs in its syncing variant alone
    isync, isync_lines = one_step(torch_mask, "index", True)
    ifixed, ifixed_lines = one_step(torch_mask, "index", False)
    assert isync == ["zero_grad", "result", "[]", "[]", "cross_entropy", "backward", "step"]
    assert "[]" not in ifixed and "int()" not in ifixed
    assert index_line in isync_lines and index_line not in ifixed_lines
    assert count_line not in isync_lines | ifixed_lines


@pytest.mark.parametrize("argv, pair, reads", [
    ([], "index", 0),                                   # the default pair: today's
    (["--pair", "index"], "index", 0),
    (["--pair", "count"], "count", 10 + 3),             # 10 warm-up steps sync, then 3
    (["--pair", "count", "--variant", "fixed"], "count", 10),
])
def test_the_mask_program_runs_the_pair_asked(torch_mask, monkeypatch, capsys, argv, pair,
                                               reads):
    log = []
    monkeypatch.setitem(sys.modules, "torch", Op(log))
    monkeypatch.setattr(sys, "argv", ["torch_mask.py", "--size", "host", "--steps", "3", *argv])
    assert torch_mask.main() == 0
    out = json.loads(capsys.readouterr().out)
    assert (out["pair"], out["size"], out["steps"]) == (pair, "host", 3)
    assert log.count("int()") == reads and log.count("step") == 20 + 3
    assert log.count("[]") == (2 * (10 + 3 * (out["variant"] == "sync")) if pair == "index"
                               else 0)


def test_a_bad_pair_is_a_usage_error_before_torch(tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(STUB_TORCH)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    argv = [sys.executable, str(rs.AUDIT_DIR / "torch_mask.py"), "--size", "host"]
    r = subprocess.run(argv + ["--pair", "counts"], capture_output=True, text=True, env=env,
                       timeout=60)
    errors = [x for x in r.stderr.splitlines() if "error:" in x]
    assert r.returncode == 2 and "stub torch imported" not in r.stderr, r.stderr
    assert len(errors) == 1 and "--pair" in errors[0] and "'counts'" in errors[0], r.stderr
    assert all(x.startswith(("usage:", " ")) for x in r.stderr.splitlines()
               if x not in errors), r.stderr  # argparse's usage, then the one error line
    r = subprocess.run(argv + ["--pair", "count"], capture_output=True, text=True, env=env,
                       timeout=60)
    assert r.returncode == 7 and "stub torch imported" in r.stderr, r.stderr


def test_no_marked_line_or_two_is_an_error(tmp_path):
    p = tmp_path / "x.py"
    p.write_text("a = 1\n# SYNC-LINE in a comment alone\n")
    with pytest.raises(rs.ProgramFailed, match="0 lines"):
        rs.marked_line(p)
    p.write_text("a = 1  # SYNC-LINE\nb = 2  # SYNC-LINE\n")
    with pytest.raises(rs.ProgramFailed, match="2 lines"):
        rs.marked_line(p)
    # a tagged marker is a marker of its own: the whole comment counts, both ways
    p.write_text("a = 1  # SYNC-LINE\nb = 2  # SYNC-LINE count\nc = 3  # SYNC-LINE counts\n")
    assert rs.marked_line(p) == (1, "a = 1")
    assert rs.marked_line(p, "# SYNC-LINE count") == (2, "b = 2")
    with pytest.raises(rs.ProgramFailed, match="0 lines marked '# SYNC-LINE index'"):
        rs.marked_line(p, "# SYNC-LINE index")


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


def test_the_docs_run_entries_that_exist():
    # docs/replay.md's and docs/dev/testing.md's `replay_suite.py --only NAMES` commands
    named = []
    for doc in ("replay.md", "dev/testing.md"):
        for m in re.finditer(r"replay_suite\.py --only ([\w,-]+)",
                             (TESTS.parent / "docs" / doc).read_text()):
            named.append(m.group(1))
            rs.select(m.group(1))  # ValueError for a name that is no entry
    assert "mask-count-gpu,mask-count-host" in named


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
    # the audited run's own step (110, no drift) over the plain syncing step (rounds: 111, 112,
    # 111), in the JSON and the table's last column
    assert row["audits"][0]["step_us"] == 110.0
    assert row["audit_slowdown_pct"] == [pytest.approx(100 * (110 / 111 - 1))]
    assert rs.table([row]).splitlines()[2].endswith("| within | 9 (-0.9 %) |")
    # an older row's audit without a step: its figure alone
    old = {**row, "audits": [{k: v for k, v in row["audits"][0].items() if k != "step_us"}]}
    assert rs.recording_slowdowns(old) == [None] and rs.audits_text(
        {**old, "audit_slowdown_pct": None}) == "9"


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
    # the audited job's step is its slower rank's loop (rank 0: 113), as the plain blocks' are
    assert audit["step_us"] == 113.0 and row["audit_slowdown_pct"] == [0.0]


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


# `syncbench audit ... --from DIR --json REPORT`: the train-gpu line's site, 5 us a call
FROM = """\
import json, os, sys
a = sys.argv[1:]
site = {"site": "tests/audit/torch_train.py:%s in timed" % os.environ["FAKE_LINE"],
        "calls": 10, "save_per_call_us_typical": 5.0}
json.dump({"processes": [{"pid": 1, "rank": -1, "predicted": {"sites": [site]}}]},
          open(a[a.index("--json") + 1], "w"))
"""


def test_reanalyze_keeps_each_audits_step_and_its_slowdown(tmp_path, monkeypatch):
    line = rs.marked_line(rs.script_path(next(e for e in rs.ENTRIES if e.name == "train-gpu")))[0]
    monkeypatch.setenv("FAKE_LINE", str(line))
    stand_in = tmp_path / "syncbench"
    stand_in.write_text(f"#!{sys.executable}\n{FROM}")
    stand_in.chmod(0o755)
    row = {"name": "train-gpu", "line": line, "code": "x", "script": "torch_train.py",
           "unit": "step", "measured": 5.0, "spread": [4.0, 6.0],
           "verdict": "within", "rounds": [{"sync_us": 998.0}, {"sync_us": 1002.0}],
           # audit 2: an older row's, without its step
           "audits": [{"audit": 1, "steps": 10, "step_us": 1010.0}, {"audit": 2, "steps": 10}]}
    (again,) = rs.reanalyze([row], tmp_path / "records", tmp_path / "out", bin_path=stand_in)
    assert [a.get("step_us") for a in again["audits"]] == [1010.0, None]
    assert again["audit_slowdown_pct"] == [pytest.approx(1.0), None]  # 1010 over 1000
    assert again["predicted"]["per_step"] == 5.0
    assert rs.table([again]).splitlines()[2].endswith("| 5 (+1.0 %); 5 |")


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
    assert len(md) == 4 and all(x.count(" | ") == 6 for x in md)
    assert "ERROR: failing" in md[2] and "boom" in md[2]
    assert md[3].startswith("| flagged | `return (110.0 if variant == \"sync\" else 100.0) + ")
    assert "10.00 [10.00, 10.00] µs/step | 9.00; 7.00 | -10.0 | not modelled" in md[3]


def test_an_entry_finds_the_line_its_own_marker_marks(tmp_path, stand_ins):
    # a program with the lines of two pairs: the plain marker's and a tagged one's
    s = stand_ins
    program = tmp_path / "pair_program.py"
    program.write_text(s["program"].read_text() + "sys.stdout.flush()  # SYNC-LINE count\n")
    line = rs.marked_line(program, "# SYNC-LINE count")[0]
    assert line != s["line"] and rs.marked_line(program)[0] == s["line"]
    entry = dataclasses.replace(entry_of(s, FAKE_LINE=str(line)), script=str(program),
                                marker="# SYNC-LINE count")
    row = rs.run_entry(entry, str(s["python"]), tmp_path / "out", rounds=1,
                       bin_path=s["syncbench"])
    assert (row["line"], row["code"]) == (line, "sys.stdout.flush()")
    assert row["verdict"] == "within" and row["predicted"]["per_step"] == 9.0


def test_a_missing_site_is_an_error(tmp_path, stand_ins):
    s = stand_ins
    row = rs.run_entry(entry_of(s, FAKE_LINE="999"), str(s["python"]), tmp_path, rounds=1,
                       bin_path=s["syncbench"])
    assert row["verdict"] == "ERROR" and "in 0 replayed processes" in row["error"]


def test_main_refuses_an_unknown_entry(capsys):
    with pytest.raises(SystemExit) as e:
        rs.main(["--only", "nope"])
    assert e.value.code == 2 and "no entry nope" in capsys.readouterr().err
