"""The validation runner itself (tests/validate/validate.py), on the CPU: every check is
registered with a name, a group and a target; a check's outcome becomes PASS, MISS, NOTE, SKIP
or ERROR (an exception is a row, not a crash); the table is one Markdown table; the exit code is
1 on a MISS or an ERROR only; and with no NVIDIA GPU, make validate prints one line and exits 0.
Nothing here measures anything."""
import os
import subprocess
import sys

import pytest

import validate

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "validate.py")


@pytest.fixture(scope="module")
def registry():
    return validate.load()


def test_every_check_has_a_name_a_group_and_a_target(registry):
    names = [c.name for c in registry.CHECKS]
    assert len(names) == len(set(names)), "two checks share a name"
    assert {c.group for c in registry.CHECKS} == {"scenarios", "audit", "python", "replay",
                                                  "gate", "multi-gpu", "sanitizer", "floor",
                                                  "frameworks"}
    for c in registry.CHECKS:
        assert c.name and c.target and callable(c.func), c
    # the default set holds the replay's four fix scenarios where the model applies
    held = [c for c in validate.selected(registry.CHECKS, None, False)
            if c.held and "replay, one process" in c.name and "audit_truth" not in c.name]
    assert len(held) == 4, [c.name for c in held]


def test_only_and_full_select(registry):
    default = validate.selected(registry.CHECKS, None, False)
    full = validate.selected(registry.CHECKS, None, True)
    assert len(default) < len(full) == len(registry.CHECKS)
    assert not [c for c in default if c.full]
    gate = validate.selected(registry.CHECKS, "GATE", False)
    assert gate and all(c.group == "gate" for c in gate)
    # a group named: its long checks with --full only; a check named: run, long or not
    assert not [c for c in validate.selected(registry.CHECKS, "replay", False) if c.full]
    (suite,) = validate.selected(registry.CHECKS, "(train-gpu)", False)
    assert suite.full and suite.group == "replay" and "replay suite" in suite.name


def fake(registry, func, held=True):
    return registry.Check("a figure", "g", "< 1", func, held)


def test_outcomes(registry):
    def skip():
        raise registry.Skip("needs 2 or more GPUs (1 here)")

    def broken():
        raise RuntimeError("syncbench: exit 1: validation failed")
    assert validate.run_one(registry, fake(registry, lambda: ("0.5", True))) == ("0.5", "PASS")
    assert validate.run_one(registry, fake(registry, lambda: ("2", False))) == ("2", "MISS")
    assert validate.run_one(registry, fake(registry, lambda: ("2", False), held=False)) == \
        ("2", "NOTE: outside")
    assert validate.run_one(registry, fake(registry, lambda: ("2", None), held=False)) == \
        ("2", "NOTE")
    # a held figure its model disclaims (the replay suite's "not modelled"): a NOTE, no MISS
    assert validate.run_one(registry, fake(registry, lambda: ("2", None))) == ("2", "NOTE")
    assert validate.run_one(registry, fake(registry, skip))[1] == "SKIP"
    measured, result = validate.run_one(registry, fake(registry, broken))
    assert result == "ERROR" and "validation failed" in measured


def test_table_and_exit_code():
    rows = [{"check": "a | b", "measured": "1", "target": "< 2", "result": "PASS"},
            {"check": "c", "measured": "3\nus", "target": "< 2", "result": "NOTE: outside"},
            {"check": "d", "measured": "-", "target": "-", "result": "SKIP"}]
    lines = validate.table(rows).splitlines()
    assert len(lines) == 5 and all(x.startswith("| ") and x.endswith(" |") for x in lines)
    assert len({len(x) for x in lines}) == 1  # aligned
    assert lines[0].split() == ["|", "check", "|", "measured", "|", "target", "|", "result", "|"]
    assert "a / b" in lines[2] and "3 us" in lines[3]
    assert validate.exit_code(rows) == 0
    assert validate.exit_code(rows, interrupted=True) == 1
    assert validate.exit_code(rows + [{**rows[0], "result": "MISS"}]) == 1
    assert validate.exit_code(rows + [{**rows[0], "result": "ERROR"}]) == 1


def test_list_needs_no_gpu():
    r = subprocess.run([sys.executable, SCRIPT, "--list", "--full"], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) > 40 and all("[target: " in x for x in lines), r.stdout


def test_no_gpu_is_one_line_and_exit_0():
    """No nvidia-smi on PATH: nothing to validate, one line, exit 0."""
    r = subprocess.run([sys.executable, SCRIPT], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "PATH": "/nonexistent"})
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [validate.NO_GPU]
