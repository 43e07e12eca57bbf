"""The framework suite's in-process alternation (tests/frameworks/fw_common.py, `--alternate FIX
--blocks B`) on the CPU: the blocks' timer switches the fix after each warm-up step and at each
block's edge, the GPU drained there, the switch made before the block's clock starts; the line
it prints (the pairs' median saving as step_us_saving); the usage errors; each program's switch
where it can be tried without its framework (amp_loop's unchecked step, lightning_fit's
prog_bar in Lightning's kept metadata); and every command line frameworks_checks.py gives the
programs parses (torch stood in for). Nothing here needs torch or a GPU."""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import types

import pytest

import frameworks_checks as fc


def load(name):
    """tests/frameworks/NAME.py by its path, sys.path left as it was (the programs put their
    folder first)."""
    saved = list(sys.path)
    try:
        spec = importlib.util.spec_from_file_location(f"fw_{name}", fc.SUITE / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path[:] = saved


fw = load("fw_common")


class Machine:
    """A stand-in GPU and clock: a step takes 100 us with the fix off and 90 with it on, read
    from the fix's state when the step runs; every drain, switch and clock read is logged."""

    def __init__(self):
        self.now, self.on, self.log = 0.0, False, []

    def clock(self):
        self.log.append("clock")
        return self.now

    def synchronize(self):
        self.log.append("drain")

    def set_fix(self, on):
        self.log.append(("fix", on))
        self.on = on

    def step(self):
        self.now += (90e-6 if self.on else 100e-6)


def run_blocks(first, blocks=4, warmup=5, steps=3):
    m = Machine()
    timer = fw.Blocks(m.synchronize, warmup, steps, fw.alternate.order(first, blocks), m.set_fix,
                      clock=m.clock)
    assert timer.total == warmup + steps * blocks
    for k in range(1, timer.total + 1):
        m.step()
        timer.step_done(k)
    return m, timer


def test_blocks_switch_in_place_and_time_each_variant():
    m, timer = run_blocks("sync")
    # warm-up: the fix on after odd steps, off after even ones; then at each block's edge a
    # drain, the block's clock read, the next block's switch and its clock started
    assert m.log[:4] == [("fix", True), ("fix", False), ("fix", True), ("fix", False)]
    assert m.log[4:7] == ["drain", ("fix", False), "clock"]
    assert m.log[7:11] == ["drain", "clock", ("fix", True), "clock"]
    assert m.log[-2:] == ["drain", "clock"]  # the last block: no switch after it
    assert m.log.count("drain") == 1 + 4
    assert [b["variant"] for b in timer.blocks] == ["sync", "fixed", "sync", "fixed"]
    assert [b["step_us"] for b in timer.blocks] == pytest.approx([100.0, 90.0, 100.0, 90.0])
    line = fw.alternation("no-check", "sync", 3, timer.blocks)
    assert line["step_us_saving"] == pytest.approx(10.0) == line["saving_us"]
    assert line["alternate"] == "no-check" and line["first"] == "sync"
    assert line["sync_us"] == pytest.approx(100.0) and line["fixed_us"] == pytest.approx(90.0)
    m, timer = run_blocks("fixed", blocks=6)
    assert [b["variant"] for b in timer.blocks] == ["fixed", "sync"] * 3
    assert fw.alternation("x", "fixed", 3, timer.blocks)["step_us_saving"] == \
        pytest.approx(10.0)


def test_alternation_is_the_median_of_the_pairs():
    blocks = [{"variant": v, "step_us": u} for v, u in [
        ("fixed", 90.0), ("sync", 100.0), ("sync", 130.0), ("fixed", 100.0),
        ("fixed", 50.0), ("sync", 55.0)]]
    # pairs: 10, 30, 5 -> 10 (a slow pair and a fast one do not move it)
    assert fw.alternation("f", "fixed", 4, blocks)["step_us_saving"] == 10.0
    with pytest.raises(ValueError, match="do not alternate"):
        fw.alternation("f", "sync", 4, [{"variant": "sync", "step_us": 1.0}] * 2)


def test_emit_prints_the_blocks_or_fails_a_run_cut_short(capsys):
    a = argparse.Namespace(size="gpu", alternate="no-check", first="sync", blocks=4, steps=3,
                           warmup=5)
    m, timer = run_blocks("sync")
    assert fw.emit("amp_loop", set(), a, timer) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["program"] == "amp_loop" and line["alternate"] == "no-check"
    assert line["steps"] == 3 and line["warmup"] == 5 and len(line["blocks"]) == 4
    assert line["step_us_saving"] == pytest.approx(10.0) and "step_us" not in line
    timer.blocks.pop()
    assert fw.emit("amp_loop", set(), a, timer) == 1
    assert "3 of 4 blocks timed" in capsys.readouterr().err
    assert fw.total_steps(a) == 5 + 3 * 4
    assert fw.total_steps(argparse.Namespace(steps=30, warmup=10)) == 30


@pytest.mark.parametrize("argv, message", [
    (["--alternate", "t", "--blocks", "3"], "even"),
    (["--alternate", "t", "--blocks", "0"], "--blocks"),
    (["--alternate", "t", "--steps", "6"], "multiple of 4"),
    (["--alternate", "t", "--fix", "t"], "leave it out of --fix"),
    (["--alternate", "u"], "invalid choice"),   # a fix that does not switch in place
    (["--alternate", "t", "--first", "on"], "invalid choice"),
    (["--steps", "10", "--warmup", "10"], "above --warmup"),
])
def test_usage_errors(argv, message, capsys):
    ap = fw.parser("doc", ("t", "u"), ("t",))
    with pytest.raises(SystemExit) as e:
        fw.fixes_of(ap, ap.parse_args(argv), ("t", "u"), period=4)
    assert e.value.code == 2 and message in capsys.readouterr().err


def test_usage_accepted():
    ap = fw.parser("doc", ("t", "u"), ("t",))
    a = ap.parse_args(["--alternate", "t", "--steps", "8", "--warmup", "10", "--fix", "u"])
    assert fw.fixes_of(ap, a, ("t", "u"), period=4) == {"u"}
    assert (a.blocks, a.first) == (8, "sync")  # alternate.py's defaults
    # without toggles: no --alternate at all
    assert "--alternate" not in fw.parser("doc", ("t",)).format_help()


def test_amp_loops_unchecked_step_reads_no_found_inf():
    amp = load("amp_loop")
    stepped = []
    opt = types.SimpleNamespace(step=lambda *a, **kw: stepped.append((a, kw)) or "ret")
    state = {}  # GradScaler's: its found_inf_per_device would raise KeyError if read
    assert amp.unchecked(opt, state, 1, closure=None) == "ret"
    assert stepped == [((1,), {"closure": None})]
    assert amp.TOGGLES == ("no-check",) and set(amp.TOGGLES) <= set(amp.FIXES)


def lightning_trainer(names):
    results = {f"training_step.{n}": types.SimpleNamespace(meta=types.SimpleNamespace(
        name=n, prog_bar=True)) for n in names}
    connector = types.SimpleNamespace(_progress_bar_metrics={"train_loss": 1.5, "v_num": 0})
    return types.SimpleNamespace(_results=results, _logger_connector=connector)


def test_lightning_fit_switches_prog_bar_where_lightning_keeps_it():
    lf = load("lightning_fit")
    switch = lf.ProgBarSwitch()
    switch.trainer = lightning_trainer(["train_loss", "other"])
    switch.module = types.SimpleNamespace(prog_bar=True)
    switch(True)  # the fix on: prog_bar off
    assert switch.module.prog_bar is False
    metas = {k: r.meta.prog_bar for k, r in switch.trainer._results.items()}
    assert metas == {"training_step.train_loss": False, "training_step.other": True}
    assert switch.trainer._logger_connector._progress_bar_metrics == {"v_num": 0}
    switch(False)
    assert switch.module.prog_bar is True
    assert switch.trainer._results["training_step.train_loss"].meta.prog_bar is True
    switch.trainer = lightning_trainer(["other"])
    with pytest.raises(RuntimeError, match="no 'train_loss'"):
        switch(True)


# Stands in for torch: a program that gets as far as importing it has parsed its arguments.
STUB_TORCH = "import sys\nsys.stderr.write('stub torch imported\\n')\nraise SystemExit(7)\n"


@pytest.fixture
def program(tmp_path):
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(STUB_TORCH)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}

    def run(argv):
        return subprocess.run([sys.executable, *[str(x) for x in argv[1:]]], capture_output=True,
                              text=True, env=env, timeout=60)
    return run


@pytest.mark.parametrize("claim", fc.CLAIMS, ids=lambda c: c.name)
def test_the_programs_take_the_checks_command_lines(claim, program, tmp_path):
    suite = fc.Suite([claim], tmp_path, python="py", binary="sb")
    key = claim.program_key
    commands = [suite.program_cmd(key, None), suite.program_cmd(key, claim.fix)]
    if claim.sync_alone:
        commands.append(suite.program_cmd(key, claim.sync_alone))
    if claim.timing == "toggle":
        commands += [suite.program_cmd(key, None, (claim, first)) for first in ("sync", "fixed")]
        assert "--alternate" in commands[-1]
    for cmd in commands:
        r = program(cmd)
        assert r.returncode == 7 and "stub torch imported" in r.stderr, (cmd, r.stderr)


@pytest.mark.parametrize("name, argv, message", [
    ("amp_loop", ["--alternate", "fused"], "invalid choice"),
    ("amp_loop", ["--alternate", "no-check", "--fix", "bf16", "--steps", "16"], "bf16"),
    ("amp_loop", ["--alternate", "no-check", "--steps", "12"], "multiple of 8"),
    ("amp_loop", ["--alternate", "no-check", "--blocks", "7", "--steps", "16"], "even"),
    ("hf_trainer", ["--alternate", "nan-filter-off", "--steps", "12"], "multiple of 5"),
    ("hf_trainer", ["--alternate", "non-blocking"], "invalid choice"),
    ("lightning_fit", ["--alternate", "prog-bar-off", "--steps", "20"], "multiple of 16"),
    ("lightning_fit", ["--alternate", "prog-bar-off", "--fix", "prog-bar-off", "--steps", "16"],
     "leave it out"),
    ("hf_generate", ["--alternate", "no-mask"], "unrecognized arguments"),
    ("ddp_job", ["--wrap", "fsdp", "--fix", "no-broadcast-buffers"], "DDP's option"),
    ("ddp_job", ["--wrap", "fsdp2", "--fix", "gather-tensor,no-broadcast-buffers"], "DDP's option"),
    ("ddp_job", ["--wrap", "zero"], "invalid choice"),
])
def test_the_programs_refuse_an_alternation_that_does_not_fit(name, argv, message, program):
    r = program(["py", fc.SUITE / f"{name}.py", *argv])
    assert r.returncode == 2 and message in r.stderr, r.stderr
    assert "stub torch imported" not in r.stderr


def test_every_toggle_claim_switches_one_of_its_programs_toggles():
    for c in fc.CLAIMS:
        if c.timing == "toggle":
            assert c.toggled in load(c.program).TOGGLES, c
        assert c.timing in fc.TIMINGS, c
    assert {c.name for c in fc.CLAIMS if c.timing == "toggle"} == {
        "amp_loop fused", "hf_trainer nan-filter-off", "lightning_fit prog-bar-off"}
