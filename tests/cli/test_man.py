"""The man page, syncbench.1 (`syncbench __man`, `make man`): its option lists are printed
from the option tables --help prints from, so every option of `syncbench --help`, `compare
--help` and `audit --help` is in it and none that they lack; it renders without a warning."""
import re
import shutil
import subprocess

import pytest

from conftest import ROOT, run


def options(text):
    return set(re.findall(r"(?<![\w-])--([a-z][a-z0-9-]*)", text))


def man_page():
    r = run("__man")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    return r.stdout


def section(page, title):
    body = page.split(f".SH {title}\n", 1)[1]
    return body.split("\n.SH ", 1)[0].replace("\\-", "-")


@pytest.mark.parametrize("title,cmd", [("RUN OPTIONS", []), ("COMPARE OPTIONS", ["compare"]),
                                       ("AUDIT OPTIONS", ["audit"])])
def test_each_command_lists_the_options_of_its_help(title, cmd):
    r = run(*cmd, "--help")
    assert r.returncode == 0, r.stderr
    listed = set(re.findall(r"\\fB--([a-z][a-z0-9-]*)\\fR", section(man_page(), title)))
    helped = {o for o in options(r.stdout)
              if re.search(rf"^\s+(-\w, )?--{re.escape(o)}\b", r.stdout, re.M)}
    assert listed == helped, (sorted(listed - helped), sorted(helped - listed))


def test_it_takes_no_arguments():
    r = run("__man", "x")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr


def test_it_renders_without_warnings(tmp_path):
    if not shutil.which("groff"):
        pytest.skip("no groff on this machine")
    page = tmp_path / "syncbench.1"
    page.write_text(man_page())
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", str(page)], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0 and r.stderr == "", r.stderr


def test_make_install_installs_it(tmp_path):
    r = subprocess.run(["make", "-n", "-C", str(ROOT), "install", f"DESTDIR={tmp_path}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert "share/man/man1/syncbench.1" in r.stdout, r.stdout


def test_make_install_installs_the_suites_without_hiding_a_failure(tmp_path):
    """The suites' install line ended in `2>/dev/null || true`: a failure went unseen."""
    r = subprocess.run(["make", "-n", "-C", str(ROOT), "install", f"DESTDIR={tmp_path}"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    (line,) = [ln for ln in r.stdout.splitlines() if "configs/*.ini" in ln]
    assert line.endswith("/usr/local/share/syncbench/configs/"), line
