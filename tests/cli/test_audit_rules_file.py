"""`syncbench audit --rules FILE`: the user's rows of the framework table. A bad file is one line
naming the file, its line and the row, exit 2, and the command is never started; a FIFO is
refused at once; a good file is taken, with --from and with a command. No GPU."""
import os
import subprocess

import pytest

from conftest import BIN, ROOT, assert_usage_error, run
from test_audit_inputs import records

FAKE_CUPTI = str(ROOT / "build" / "tests" / "fake-cupti")

GOOD = """\
; my library's own sync
[mylib.step_check]
package = mylib
versions = 1.2
module = mylib/loop.py
function = step
text = loss.item()
what = reads the loss every step
fix = mylib.Loop(log_every=50)
where = Loop(
removes = true
"""


def fake_cupti_env():
    old = os.environ.get("LD_LIBRARY_PATH")
    return {"LD_LIBRARY_PATH": FAKE_CUPTI + (":" + old if old else "")}


# (file text, what the one stderr line holds after "FILE:")
BAD = [
    (GOOD + "colour = red\n", "12: [mylib.step_check]: unknown key 'colour'"),
    (GOOD + "fix = other\n", "12: [mylib.step_check]: key 'fix' given twice (first at line 9)"),
    (GOOD + "\n" + GOOD, "14: [mylib.step_check]: row id given twice (first at line 2)"),
    (GOOD.replace("removes = true", "removes = sometimes"),
     "11: [mylib.step_check]: removes = sometimes: expected true or false"),
    (GOOD + "no equals sign here\n", "12: [mylib.step_check]: syntax error"),
    (GOOD.replace("fix = mylib.Loop(log_every=50)\n", ""), "2: [mylib.step_check]: no fix"),
    (GOOD.replace("[mylib.step_check]", "[my lib]"), "2: [my lib]: the id may hold only"),
    (GOOD.replace("mylib/loop.py", "otherlib/loop.py"),
     "5: [mylib.step_check]: module 'otherlib/loop.py' is not in package 'mylib'"),
    (GOOD.replace("mylib/loop.py", "mylib/loop.pyc"),
     "5: [mylib.step_check]: module 'mylib/loop.pyc' is not a .py file"),
    (GOOD.replace("function = step", "function = step||run"),
     "6: [mylib.step_check]: function: an empty alternative"),
    (GOOD + "scenario = no-such-scenario\n", "12: [mylib.step_check]: unknown scenario"),
    ("; nothing but a comment\n", " no rows"),
]


def refused_before_cmd(tmp_path, rules, message):
    """`audit --rules RULES -- CMD`: one line holding message, exit 2, CMD never started."""
    r = run("audit", "--rules", rules, "--", "touch", "MARKER", cwd=tmp_path,
            env=fake_cupti_env(), timeout=60)
    assert_usage_error(r, message)
    assert not (tmp_path / "MARKER").exists()


@pytest.mark.parametrize("text,error", BAD, ids=[e.split(":")[0] + "-" + str(i)
                                                 for i, (_, e) in enumerate(BAD)])
def test_a_bad_file_is_one_line_and_nothing_runs(tmp_path, text, error):
    rules = tmp_path / "rules.ini"
    rules.write_text(text)
    refused_before_cmd(tmp_path, rules, f"syncbench: audit: {rules}:{error}")


def test_a_bad_file_is_refused_with_from_too(tmp_path):
    rules = tmp_path / "rules.ini"
    rules.write_text(GOOD + "colour = red\n")
    r = run("audit", "-q", "--rules", rules, "--from", records(tmp_path), "--json",
            tmp_path / "a.json", timeout=60)
    assert_usage_error(r, f"{rules}:12: [mylib.step_check]: unknown key 'colour'")
    assert not (tmp_path / "a.json").exists()


@pytest.mark.parametrize("what", ["missing", "folder"])
def test_a_file_that_cannot_be_read_is_refused(tmp_path, what):
    path = tmp_path / "rules.ini"
    if what == "folder":
        path.mkdir()
    refused_before_cmd(tmp_path, path, f"syncbench: audit: {path}: ")


def test_a_fifo_is_refused_at_once(tmp_path):
    """Opened without blocking: a FIFO with no writer would otherwise hang the audit."""
    fifo = tmp_path / "rules.ini"
    os.mkfifo(fifo)
    r = subprocess.run([BIN, "audit", "--rules", str(fifo), "--", "touch", "MARKER"],
                       cwd=tmp_path, capture_output=True, text=True, timeout=20,
                       env=dict(os.environ, **fake_cupti_env()))
    assert_usage_error(r, f"syncbench: audit: {fifo}: not a regular file")
    assert not (tmp_path / "MARKER").exists()


def test_a_value_is_needed_before_the_command():
    r = run("audit", "--rules", "--", "true", timeout=60)
    assert_usage_error(r, "--rules needs a value")


def test_it_does_not_apply_to_merge(tmp_path):
    rules = tmp_path / "rules.ini"
    rules.write_text(GOOD)
    r = run("audit", "--merge", "--rules", rules, "a.json", "b.json", timeout=60)
    assert_usage_error(r, "--rules does not apply")


def test_a_good_file_is_taken_with_from(tmp_path):
    rules = tmp_path / "rules.ini"
    rules.write_text(GOOD + "\n[other-lib.sync_2]\npackage = other-lib\nversions = 0.1\n"
                     "module = other_lib/a.py|other_lib/b/c.py\nfunction = f|g\n"
                     "text = x.cpu()\nwhat = copies x\nfix = keep x\ncaveat = memory\n"
                     "scenario = log-every\nremoves = no\n")
    r = run("audit", "-q", "--rules", rules, "--from", records(tmp_path), "--json",
            tmp_path / "a.json", timeout=60)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "a.json").exists()


def test_a_good_file_lets_the_command_run(tmp_path):
    rules = tmp_path / "rules.ini"
    rules.write_text(GOOD)
    r = run("audit", "-q", "--rules", rules, "--", "touch", "MARKER", cwd=tmp_path,
            env=fake_cupti_env(), timeout=60)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "MARKER").exists()
