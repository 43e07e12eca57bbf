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


# ---- item 3: $GITHUB_STEP_SUMMARY is an output like any other ----

def test_compare_refuses_a_step_summary_that_is_an_input(tmp_path):
    a, b = two_csvs(tmp_path)
    r = run("compare", a, b, "--ci", "github", env={"GITHUB_STEP_SUMMARY": str(a)})
    assert_usage_error(r, "GITHUB_STEP_SUMMARY")
    assert a.read_text() == HEADER + ROW


def test_compare_refuses_a_step_summary_that_is_another_output(tmp_path):
    a, b = two_csvs(tmp_path)
    r = run("compare", a, b, "--ci", "github", "--markdown", "s.md", cwd=tmp_path,
            env={"GITHUB_STEP_SUMMARY": "./s.md"})
    assert_usage_error(r, "GITHUB_STEP_SUMMARY")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]


def test_a_step_summary_on_an_input_is_no_matter_without_github(tmp_path):
    a, b = two_csvs(tmp_path)
    r = run("compare", a, b, "--ci", "none", env={"GITHUB_STEP_SUMMARY": str(a)})
    assert r.returncode == 0, r.stderr
    assert a.read_text() == HEADER + ROW


@pytest.mark.parametrize("name", ["proc-7.jsonl", "new.md"])
def test_audit_refuses_a_step_summary_in_the_from_folder(tmp_path, name):
    k = records(tmp_path)
    before = listing(k)
    r = run("audit", "-q", "--from", k, "--ci", "github",
            env={"GITHUB_STEP_SUMMARY": str(k / name)})
    assert_usage_error(r, "GITHUB_STEP_SUMMARY")
    assert listing(k) == before


def test_audit_refuses_a_step_summary_its_command_reads(tmp_path):
    (tmp_path / "in.txt").write_text("input\n")
    r = run("audit", "--ci", "github", "--", "sh", "-c", 'touch ran.txt; cat "$1"', "sh", "in.txt",
            cwd=tmp_path, env={"GITHUB_STEP_SUMMARY": "in.txt"})
    assert_usage_error(r, "GITHUB_STEP_SUMMARY")
    assert listing(tmp_path) == {"in.txt": b"input\n"}


# ---- item 4: an audit output that the command names, or syncbench's own files ----

@pytest.mark.parametrize("cmd", [["cat", "--file=in.txt"], ["sh", "-c", "cat in.txt"],
                                 ["bash", "-ec", "wc -l <in.txt;touch ran.txt"],
                                 ["env", "X=1", "sh", "-c", "cat 'in.txt'"]])
def test_audit_refuses_an_output_its_command_names(tmp_path, cmd):
    (tmp_path / "in.txt").write_text("input\n")
    r = run("audit", "--json", "in.txt", "--", *cmd, cwd=tmp_path)
    assert_usage_error(r, "in.txt")
    assert listing(tmp_path) == {"in.txt": b"input\n"}


def own_copy(tmp_path):
    """syncbench and its two libraries copied to tmp/bin: the real ones stay safe should the
    refusal not hold."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    build = os.path.dirname(BIN)
    # the libraries where the tests take them (make test-asan's binary has none beside it)
    where = {"syncbench": BIN,
             "libsyncbench_audit.so": os.environ.get("SYNCBENCH_AUDIT_LIB") or
             os.path.join(build, "libsyncbench_audit.so"),
             "libsyncbench_waits.so": os.environ.get("SYNCBENCH_WAITS_LIB") or
             os.path.join(build, "libsyncbench_waits.so")}
    for name, path in where.items():
        shutil.copy2(path, bin_dir / name)
    return bin_dir


@pytest.mark.parametrize("name", ["syncbench", "libsyncbench_audit.so", "libsyncbench_waits.so"])
@pytest.mark.parametrize("opt", ["--json", "--csv"])
def test_audit_refuses_to_write_over_syncbench_s_own_files(tmp_path, name, opt):
    bin_dir = own_copy(tmp_path)
    before = listing(bin_dir)
    r = subprocess.run([str(bin_dir / "syncbench"), "audit", opt, str(bin_dir / name), "--",
                        "true"], capture_output=True, text=True, timeout=60)
    assert_usage_error(r, name)
    assert listing(bin_dir) == before


def test_audit_refuses_the_library_syncbench_audit_lib_names(tmp_path):
    lib = tmp_path / "inject.so"
    shutil.copy2(os.environ.get("SYNCBENCH_AUDIT_LIB") or
                 os.path.join(os.path.dirname(BIN), "libsyncbench_audit.so"), lib)
    before = lib.read_bytes()
    r = run("audit", "--csv", "./inject.so", "--", "true", cwd=tmp_path,
            env={"SYNCBENCH_AUDIT_LIB": str(lib)})
    assert_usage_error(r, "inject.so")
    assert lib.read_bytes() == before
