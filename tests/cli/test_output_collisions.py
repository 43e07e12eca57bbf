"""Outputs that would destroy something (issue 47), no GPU: two outputs that become one file
through the temporary PATH.partial, a PATH.partial the run did not make, $GITHUB_STEP_SUMMARY on
an input, and an audit output that is the audited command, a file its command line names, or
syncbench's own binary and libraries. Each is one line and exit 2, before any GPU work and before
CMD starts, and nothing is written or deleted."""
import os
import shutil
import subprocess

import pytest

from conftest import BIN, NO_GPU, assert_usage_error, run
from test_audit_inputs import records
from test_outputs import HEADER, ROW


def listing(folder):
    return {p.name: p.read_bytes() for p in folder.iterdir()}


def two_csvs(tmp_path):
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text(HEADER + ROW)
    b.write_text(HEADER + ROW)
    return a, b


# ---- item 1: an output on another's temporary name; a PATH.partial the run did not make ----

@pytest.mark.parametrize("outs", [("--csv", "r.csv.partial", "--samples", "r.csv"),
                                  ("--csv", "X.partial", "--json", "X"),
                                  ("--json", "X", "--csv", "X.partial"),
                                  ("--markdown", "m.md.partial", "--csv", "sub/../m.md")])
def test_run_refuses_an_output_on_another_s_partial_name(tmp_path, outs):
    (tmp_path / "sub").mkdir()
    r = run("--scenario", "copy", *outs, env=NO_GPU, cwd=tmp_path)
    assert_usage_error(r, "temporary file")
    assert [p.name for p in tmp_path.iterdir()] == ["sub"]


def test_compare_refuses_an_output_on_another_s_partial_name(tmp_path):
    a, b = two_csvs(tmp_path)
    r = run("compare", a, b, "--markdown", "v.csv.partial", "--verdicts", "v.csv", cwd=tmp_path)
    assert_usage_error(r, "temporary file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]


def test_audit_refuses_an_output_on_another_s_partial_name(tmp_path):
    k = records(tmp_path)
    r = run("audit", "-q", "--from", k, "--json", "o.partial", "--csv", "o", cwd=tmp_path)
    assert_usage_error(r, "temporary file")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["K"]


def test_run_keeps_a_partial_file_it_did_not_make(tmp_path):
    """A killed run's rows in r.csv.partial were deleted by the next run to r.csv."""
    (tmp_path / "r.csv.partial").write_text("rows a killed run measured\n")
    before = listing(tmp_path)
    r = run("--scenario", "copy", "--csv", "r.csv", env=NO_GPU, cwd=tmp_path)
    assert_usage_error(r, "r.csv.partial exists")
    assert listing(tmp_path) == before


def test_compare_keeps_a_partial_file_it_did_not_make(tmp_path):
    a, b = two_csvs(tmp_path)
    (tmp_path / "out.md.partial").write_text("someone's file\n")
    before = listing(tmp_path)
    r = run("compare", a, b, "--markdown", "out.md", cwd=tmp_path)
    assert_usage_error(r, "out.md.partial exists")
    assert listing(tmp_path) == before


def test_audit_keeps_a_partial_file_it_did_not_make(tmp_path):
    k = records(tmp_path)
    (tmp_path / "a.json.partial").write_text("someone's file\n")
    r = run("audit", "-q", "--from", k, "--json", "a.json", cwd=tmp_path)
    assert_usage_error(r, "a.json.partial exists")
    assert (tmp_path / "a.json.partial").read_text() == "someone's file\n"
    assert not (tmp_path / "a.json").exists()
