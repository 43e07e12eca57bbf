"""plot/plot.py on the committed CSV of a real H100 run (results/h100/default.csv), on parts of
it, and on bad input. No GPU needed."""
import csv
import os
import struct
import subprocess
import sys

import pytest

from conftest import ROOT

pytest.importorskip("matplotlib")

PLOT = str(ROOT / "plot" / "plot.py")
RUN_CSV = ROOT / "results" / "h100" / "default.csv"
ALL = {"forced_sync_gemm.png", "overhead_share.png", "readback.png", "copies.png",
       "double_buffer.png"}


def plot(csv_path, out):
    return subprocess.run([sys.executable, PLOT, str(csv_path), "-o", str(out)],
                          capture_output=True, text=True)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def subset(tmp_path, keep):
    with open(RUN_CSV, newline="") as f:
        reader = csv.DictReader(f)
        rows = [r for r in reader if keep(r)]
        fields = reader.fieldnames
    path = tmp_path / "subset.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return path


def test_every_figure_from_a_real_run(tmp_path):
    r = plot(RUN_CSV, tmp_path)
    assert r.returncode == 0, r.stderr
    assert set(os.listdir(tmp_path)) == ALL
    assert sorted(os.path.basename(p) for p in r.stdout.split()) == sorted(ALL)
    for name in ALL:
        w, h = png_size(tmp_path / name)
        assert 700 <= w <= 2500 and 350 <= h <= 1500, (name, w, h)
        assert os.path.getsize(tmp_path / name) > 20_000, name  # drawn, not blank


def test_only_the_figures_whose_rows_are_there(tmp_path):
    r = plot(subset(tmp_path, lambda row: row["scenario"] == "copy"), tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert os.listdir(tmp_path / "out") == ["copies.png"]
    r = plot(subset(tmp_path, lambda row: row["scenario"] in ("readback", "double-buffer")),
             tmp_path / "out2")
    assert r.returncode == 0, r.stderr
    assert set(os.listdir(tmp_path / "out2")) == {"readback.png", "double_buffer.png"}


def one_line_exit_2(r, fragment):
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("plot.py: ") and fragment in lines[0], lines[0]


def test_missing_columns(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("scenario,variant,params,metric\nsmall-gemm,async,m=1,wall\n")
    one_line_exit_2(plot(bad, tmp_path / "out"), "missing columns timestamp, gpu, median")


def test_not_a_csv(tmp_path):
    bad = tmp_path / "image.csv"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    one_line_exit_2(plot(bad, tmp_path / "out"), "image.csv")
    assert not (tmp_path / "out").exists() or os.listdir(tmp_path / "out") == []


def test_no_such_file(tmp_path):
    one_line_exit_2(plot(tmp_path / "nope.csv", tmp_path / "out"), "cannot open")


def test_nothing_to_plot(tmp_path):
    only = subset(tmp_path, lambda row: row["scenario"] == "big-gemm"
                  and row["variant"] == "async")
    one_line_exit_2(plot(only, tmp_path / "out"), "no rows any figure can use")
