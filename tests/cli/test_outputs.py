"""Output paths are checked before any GPU work: the same file twice, an output that is also an
input, a file name the file system cannot hold, a folder that cannot be written are exit 2 with
one line and nothing created.

Runs hide every GPU (CUDA_VISIBLE_DEVICES=""): had the binary touched CUDA before checking its
outputs, it would exit 3, not 2. The last tests need a GPU and run a short measurement."""
import csv
import json
import os
import shutil

import pytest

from conftest import NO_GPU, ROOT, assert_usage_error, gpu_available, run
QUICK = ["--scenario", "copy", "--variant", "h2d-pinned", "--set", "bytes=1MiB",
         "--max-time", "0.2", "--warmup-time", "0.1"]


@pytest.mark.parametrize("json_path", ["out.csv", "./out.csv", "link.csv", "sub/../out.csv"])
def test_same_file_for_csv_and_json(tmp_path, json_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.csv").symlink_to("out.csv")
    r = run("--scenario", "copy", "--csv", "out.csv", "--json", json_path, env=NO_GPU,
            cwd=tmp_path)
    assert_usage_error(r, f"--json {json_path}: same file as --csv out.csv")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.csv", "sub"]


def test_csv_onto_the_config_file(tmp_path):
    ini = tmp_path / "suite.ini"
    shutil.copy(ROOT / "configs" / "ci.ini", ini)
    before = ini.read_text()
    r = run("--config", ini, "--csv", tmp_path / "." / "suite.ini", env=NO_GPU)
    assert_usage_error(r, "is also an input")
    assert ini.read_text() == before
    assert [p.name for p in tmp_path.iterdir()] == ["suite.ini"]


@pytest.mark.parametrize("name", ["x" * 252 + ".csv", "x" * 190 + "-{gpu}.csv"])
def test_file_name_too_long_before_the_gpu(tmp_path, name):
    r = run("--scenario", "copy", "--csv", tmp_path / name, env=NO_GPU)
    assert_usage_error(r, "file name too long")
    assert list(tmp_path.iterdir()) == []


def test_folder_not_writable(tmp_path):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        if os.access(locked, os.W_OK):
            pytest.skip("this user writes into a mode-500 folder anyway (root)")
        r = run("--scenario", "copy", "--csv", locked / "out.csv", env=NO_GPU)
        assert_usage_error(r, "is not writable")
        assert list(locked.iterdir()) == []
    finally:
        locked.chmod(0o700)


HEADER = ("run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,"
          "metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n")
ROW = "r,t,h,GPU,d,13.0,copy,h2d-pinned,p=1,10,20,GBps,GB/s,higher,55,55,0.1,55,55,55,55,0.2,\n"


def test_compare_markdown_onto_an_input(tmp_path):
    a = tmp_path / "a.csv"
    b = tmp_path / "b.csv"
    a.write_text(HEADER + ROW)
    b.write_text(HEADER + ROW)
    r = run("compare", a, b, "--markdown", a)
    assert r.returncode == 2, r.stdout + r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert a.read_text() == HEADER + ROW
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "b.csv"]


# ---- with a GPU: write-through targets, symlinks, the commit ----

gpu = pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine")


@gpu
def test_write_error_is_exit_1_one_line():
    r = run(*QUICK, "--csv", "/dev/full", "--quiet")
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines() == [
        "syncbench: --csv /dev/full: write failed: No space left on device"]


@gpu
def test_outputs_committed_through_a_symlink(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "real.csv").write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to("data/real.csv")
    r = run(*QUICK, "--csv", link, "--json", tmp_path / "{gpu}-{date}.json",
            "--markdown", tmp_path / "run.md")
    assert r.returncode == 0, r.stderr
    assert "GB/s" in r.stdout  # the table
    assert link.is_symlink()
    with open(link, newline="") as f:
        rows = list(csv.DictReader(f))
    assert rows and rows[0]["scenario"] == "copy"
    [doc] = tmp_path.glob("*.json")
    assert len(json.loads(doc.read_text())["rows"]) == len(rows)
    assert "| copy | h2d-pinned |" in (tmp_path / "run.md").read_text()
    assert not list(tmp_path.rglob("*.partial"))


@gpu
def test_csv_to_stdout_prints_no_table():
    r = run(*QUICK, "--csv", "-")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(HEADER)
    assert "cv %" not in r.stdout
