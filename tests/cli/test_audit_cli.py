"""`syncbench audit` where no GPU is needed: usage errors (exit 2, one line), a command that is
not found (127) or not executable (126), CMD's exit status and signal passed through, a command
that never initializes CUDA (exit 0, said so; empty reports), and the CUPTI injection library's
entry point."""
import csv
import json
import os
import re
import subprocess

import pytest

from conftest import NO_GPU, ROOT, assert_usage_error, run

AUDIT_LIB = os.environ.get("SYNCBENCH_AUDIT_LIB", str(ROOT / "build" / "libsyncbench_audit.so"))
CSV_COLUMNS = ("pid,rank,local_rank,group,class,range,site,count,blocked_total_us,"
               "blocked_median_us,blocked_p95_us,bubble_total_us")


def audit(*args, env=None, **kw):
    return run("audit", *args, env=env, timeout=120, **kw)


@pytest.mark.parametrize("args", [
    (),                                    # no command at all
    ("--",),                               # nothing after --
    ("--max-syncs", "3"),                  # options but no command
    ("--bogus", "--", "/bin/true"),        # unknown option
    ("--max-syncs", "x", "--", "/bin/true"),
    ("--max-syncs", "-1", "--", "/bin/true"),
    ("--max-syncs", "", "--", "/bin/true"),
    ("--top", "x", "--", "/bin/true"),
    ("--depth", "x", "--", "/bin/true"),
    ("--range", "train_step", "--", "/bin/true"),  # --range without --max-syncs: nothing to gate
    ("--csv",),                            # an option missing its value
])
def test_usage_errors(args):
    r = audit(*args, env=NO_GPU)
    assert_usage_error(r, "")


def test_help():
    r = audit("--help")
    assert r.returncode == 0, r.stderr
    text = r.stdout + r.stderr
    for opt in ("--max-syncs", "--range", "--top", "--csv", "--json", "--trace", "--keep",
                "--depth", "--quiet"):
        assert opt in text, opt


def test_command_not_found():
    r = audit("--", "/nonexistent/cmd", env=NO_GPU)
    assert r.returncode == 127, r.stderr
    assert "/nonexistent/cmd" in r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_command_not_executable(tmp_path):
    f = tmp_path / "script.sh"
    f.write_text("#!/bin/sh\nexit 0\n")
    os.chmod(f, 0o644)
    r = audit("--", f, env=NO_GPU)
    assert r.returncode == 126, r.stderr
    assert str(f) in r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_no_cuda_command(tmp_path):
    csv_path, json_path = tmp_path / "a.csv", tmp_path / "a.json"
    r = audit("--csv", csv_path, "--json", json_path, "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    assert re.search(r"never initiali[sz]ed", r.stderr, re.IGNORECASE), r.stderr
    with open(csv_path, newline="") as f:
        assert f.readline().strip() == CSV_COLUMNS
        assert list(csv.reader(f)) == []
    rep = json.loads(json_path.read_text())
    assert rep["tool"] == "syncbench audit" and rep["format"] == 1
    assert rep["processes"] == [] and rep["rows"] == [] and rep["gate"] is None
    assert "/bin/true" in json.dumps(rep["command"])


def test_no_cuda_passes_a_gate():
    r = audit("--max-syncs", "0", "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 0, r.stderr


def test_csv_to_stdout():
    r = audit("--csv", "-", "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [CSV_COLUMNS]


def test_exit_status_passed_through():
    r = audit("--", "sh", "-c", "exit 5", env=NO_GPU)
    assert r.returncode == 5, r.stderr
    # a gate that passes leaves CMD's failure as it is
    r = audit("--max-syncs", "0", "--", "sh", "-c", "exit 5", env=NO_GPU)
    assert r.returncode == 5, r.stderr


def test_cmd_output_and_arguments_untouched():
    r = audit("-q", "--", "sh", "-c", 'printf "%s|" "$@"', "sh", "a b", "--max-syncs", "",
              env=NO_GPU)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "a b|--max-syncs||"


def test_killed_command():
    r = audit("--", "sh", "-c", "kill -TERM $$", env=NO_GPU)
    assert r.returncode == 128 + 15, r.stderr


def test_quiet():
    r = audit("-q", "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 0
    assert r.stdout == "" and r.stderr == ""


def test_injection_library_exports_its_entry_point():
    assert os.path.exists(AUDIT_LIB), f"{AUDIT_LIB} not built"
    r = subprocess.run(["nm", "-D", "--defined-only", AUDIT_LIB], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^\S+ T InitializeInjection$", r.stdout, re.MULTILINE), r.stdout[:2000]
