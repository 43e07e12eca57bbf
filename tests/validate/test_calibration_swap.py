"""tests/gpu/calibration_swap.py on the CPU, against a stand-in syncbench whose figure for the
marked line is the records' own part (a file in the kept folder) plus the calibration's part
(calibration.json's launch_plain_ns in us): each cell must pair one audit's records with another
audit's calibration. And its refusals (exit 2) before any analysis."""
import json
import pathlib
import sys

import pytest

TESTS = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS / "gpu"))

import calibration_swap as cs  # noqa: E402  (after the path)
import replay_suite as rs  # noqa: E402

# `syncbench audit ... --from DIR --json REPORT`: one process holding the marked line's site
STAND_IN = """\
import json, pathlib, sys
a = sys.argv[1:]
d = pathlib.Path(a[a.index("--from") + 1])
if (d / "fail.txt").exists():
    print("the records are broken", file=sys.stderr)
    sys.exit(3)
figure = float((d / "own.txt").read_text()) + \\
    json.loads((d / "calibration.json").read_text())["launch_plain_ns"] / 1000
site = {"site": "tests/audit/torch_train.py:%s in timed" % (d / "line.txt").read_text(),
        "calls": 10, "save_per_call_us_typical": figure}
json.dump({"processes": [{"pid": 1, "rank": -1, "predicted": {"sites": [site]}}]},
          open(a[a.index("--json") + 1], "w"))
"""


@pytest.fixture
def suite(tmp_path, monkeypatch):
    line = rs.marked_line(rs.script_path(next(e for e in rs.ENTRIES if e.name == "train-gpu")))[0]
    records = tmp_path / "records"
    for k, (own, cal) in enumerate([(300, 1000), (200, 5000)], 1):
        d = records / f"train-gpu-{k}"
        d.mkdir(parents=True)
        (d / "own.txt").write_text(str(own))
        (d / "line.txt").write_text(str(line))
        (d / "calibration.json").write_text(json.dumps({"launch_plain_ns": cal}))
    row = {"name": "train-gpu", "line": line, "measured": 250.0, "verdict": "within",
           "audits": [{"audit": 1, "steps": 10}, {"audit": 2, "steps": 10}]}
    path = tmp_path / "suite.json"
    path.write_text(json.dumps([row, {**row, "name": "eval", "audits": row["audits"][:1]}]))
    stand_in = tmp_path / "syncbench"
    stand_in.write_text(f"#!{sys.executable}\n{STAND_IN}")
    stand_in.chmod(0o755)
    monkeypatch.setattr(rs, "BIN", str(stand_in))
    return path, records


def test_each_cell_pairs_records_with_a_calibration(suite, tmp_path, capsys):
    path, records = suite
    assert cs.main([str(path), "--records", str(records), "--out", str(tmp_path / "out")]) == 0
    swaps = json.loads((tmp_path / "out" / "swap.json").read_text())
    assert [s["name"] for s in swaps] == ["train-gpu"]  # eval: one audit, nothing to swap
    # a line: the audit's own part; a column: the calibration's part (1 and 5 us)
    assert swaps[0]["cells"] == [[301.0, 305.0], [201.0, 205.0]]
    assert swaps[0]["audits"] == ["train-gpu-1", "train-gpu-2"]
    assert "train-gpu-2          201          205" in capsys.readouterr().out
    # the links and the calibration's copy go once read; the records keep their own
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "swap.json", "train-gpu-1+train-gpu-1.json", "train-gpu-1+train-gpu-2.json",
        "train-gpu-2+train-gpu-1.json", "train-gpu-2+train-gpu-2.json"]
    assert json.loads((records / "train-gpu-1" / "calibration.json").read_text()) == {
        "launch_plain_ns": 1000}


def test_a_failed_analysis_is_an_empty_cell_with_why(suite, tmp_path, capsys):
    path, records = suite
    (records / "train-gpu-2" / "fail.txt").write_text("")
    assert cs.main([str(path), "--records", str(records), "--out", str(tmp_path / "out")]) == 0
    swaps = json.loads((tmp_path / "out" / "swap.json").read_text())
    assert swaps[0]["cells"] == [[301.0, 305.0], [None, None]]
    err = capsys.readouterr().err
    assert "train-gpu-2 with train-gpu-1's calibration: audit --from: exit 3" in err
    assert "the records are broken" in err


@pytest.mark.parametrize("args, why", [
    (["nope.json"], "no suite file"),
    (["SUITE", "--only", "eval"], "has two audits or more among eval"),
    (["SUITE", "--only", "nope"], "no entry nope"),
    (["SUITE", "--records", "EMPTY"], "no kept records with a calibration.json"),
    (["BROKEN"], "is not a suite's JSON"),
    (["SUITE", "NO-BINARY"], "no syncbench to run at"),
])
def test_bad_input_is_refused_before_any_analysis(suite, tmp_path, capsys, monkeypatch, args,
                                                  why):
    path, records = suite
    (tmp_path / "empty").mkdir()
    (tmp_path / "broken.json").write_text("[{")
    if "NO-BINARY" in args:
        monkeypatch.setattr(cs.rs, "BIN", str(tmp_path / "no-syncbench"))
        args.remove("NO-BINARY")
    args = [str(path) if x == "SUITE" else str(tmp_path / "empty") if x == "EMPTY"
            else str(tmp_path / "broken.json") if x == "BROKEN" else x for x in args]
    if "--records" not in args:
        args += ["--records", str(records)]
    with pytest.raises(SystemExit) as e:
        cs.main(args + ["--out", str(tmp_path / "out")])
    assert e.value.code == 2 and why in capsys.readouterr().err
    assert not (tmp_path / "out").exists()
