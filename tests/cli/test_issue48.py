"""Issue 48: compare reads syncbench's JSON (item 4), --threshold takes 5% (item 5), short
options users guess and lists never cut (item 6), the dashboard exports (item 8)."""
import json

from conftest import BIN, NO_GPU, ROOT, run
from conftest import assert_one_line as one_line


# ---- item 6: -v is nobody's; -V is the version; lists are whole ----

def test_dash_v_is_not_variant():
    """`syncbench -v --dry-run` was "unknown variant '--dry-run'" with a list cut at 512."""
    one_line(run("-v", "--dry-run", env=NO_GPU), 2,
             "unknown option '-v' (--variant is spelled out; --version is -V)")


def test_dash_capital_v_is_the_version():
    for opt in ("-V", "--version"):
        r = run(opt, env=NO_GPU)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("syncbench "), r.stdout


def test_variant_list_is_never_cut():
    r = run("--variant", "zzzzzzzzzz", "--dry-run", env=NO_GPU)
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip()
    assert "(one of: " in line and line.endswith(")"), line
    listed = line.split("(one of: ", 1)[1][:-1].split(", ")
    r = run("--list", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    # every variant of every scenario is in the message, the last one included
    for name in ("copy-p2p", "async", "sync-stream"):
        assert name in listed, listed
    assert len(line) > 512, len(line)
    assert len(listed) == len(set(listed))


def test_variant_still_spelled_out_works():
    r = run("--variant", "async", "--scenario", "small-gemm", "--dry-run", env=NO_GPU)
    assert r.returncode == 0, r.stderr


# ---- item 5: --threshold takes 5%; a bare number below 1 is refused ----

GATE = ROOT / "results" / "h100" / "gate"


def test_threshold_takes_a_percent_sign():
    a, b = GATE / "ci1.csv", GATE / "ci2.csv"
    plain = run("compare", a, b, "-q", "--threshold", "5", env=NO_GPU)
    sign = run("compare", a, b, "-q", "--threshold", "5%", env=NO_GPU)
    assert sign.returncode == plain.returncode, sign.stderr
    assert sign.stdout == plain.stdout
    assert "threshold 5 %" in sign.stdout


def test_a_bare_fraction_is_refused_with_the_hint():
    """--threshold 0.05 meant 0.05 % and turned two clean runs into 4 REGRESSION rows."""
    a, b = GATE / "ci1.csv", GATE / "ci2.csv"
    one_line(run("compare", a, b, "--threshold", "0.05", env=NO_GPU), 2,
             "compare: --threshold 0.05: ambiguous: a bare number is a percentage, and 0.05 "
             "reads as a fraction too; did you mean 5%? (write 0.05% for 0.05 %)")
    one_line(run("compare", a, b, "--threshold-for", "GBps=0.12", env=NO_GPU), 2,
             "did you mean 12%?")
    r = run("compare", a, b, "-q", "--threshold-for", "GBps=12%", env=NO_GPU)
    assert r.returncode in (0, 1), r.stderr


def test_compare_help_says_which():
    r = run("compare", "--help", env=NO_GPU)
    assert "5% or 5" in r.stdout and "between 0 and 1 is refused" in r.stdout, r.stdout


# ---- item 4: compare reads syncbench's JSON, by content ----

def as_json(csv_path, out):
    """The CSV's rows in the shape of `syncbench --json` (src/sinks/json.c)."""
    import csv
    rows = list(csv.DictReader(open(csv_path)))
    doc = {"syncbench": {"version": "0.1.0", "git_revision": "x"},
           "run_id": rows[0]["run_id"], "command_line": "syncbench --json x.json",
           "environment": {"gpu": {"name": rows[0]["gpu"]}}, "rows": []}
    for r in rows:
        d = {k: r[k] for k in ("timestamp", "scenario", "variant", "params")}
        d.update(iters=int(r["iters"]), reps=int(r["reps"]), metric=r["metric"],
                 unit=r["unit"], better=r["better"])
        for k in ("median", "mean", "stddev", "min", "max", "p05", "p95", "cv"):
            d[k] = float(r[k])
        d["flags"] = [f for f in r["flags"].split(";") if f]
        doc["rows"].append(d)
    out.write_text(json.dumps(doc, indent=2))
    return out


def test_compare_reads_json_like_csv(tmp_path):
    """`compare a.json b.json` said "not a syncbench CSV?"."""
    a = as_json(GATE / "ci1.csv", tmp_path / "ci1.json")
    b = as_json(GATE / "ci2.csv", tmp_path / "ci2.json")
    want = run("compare", GATE / "ci1.csv", GATE / "ci2.csv", "-q", env=NO_GPU)
    # no samples beside the JSONs: the summary rule, as for CSVs without them
    for x, y in ((a, b), (a, GATE / "ci2.csv"), (GATE / "ci1.csv", b)):
        r = run("compare", x, y, "-q", "--base-samples", GATE / "ci1.samples.csv",
                "--current-samples", GATE / "ci2.samples.csv", env=NO_GPU)
        assert (r.returncode, r.stdout) == (want.returncode, want.stdout), r.stderr


def test_samples_beside_a_json_follow_the_csv_rule(tmp_path):
    import shutil
    a = as_json(GATE / "ci1.csv", tmp_path / "ci1.json")
    shutil.copy(GATE / "ci1.samples.csv", tmp_path / "ci1.samples.csv")
    want = run("compare", GATE / "ci1.csv", GATE / "ci2.csv", "-q", env=NO_GPU)
    r = run("compare", a, GATE / "ci2.csv", "-q", env=NO_GPU)
    assert (r.returncode, r.stdout) == (want.returncode, want.stdout), r.stderr
    assert "on samples" in r.stdout


def test_json_is_told_by_content_not_name(tmp_path):
    a = as_json(GATE / "ci1.csv", tmp_path / "named.csv")
    r = run("compare", a, GATE / "ci2.csv", "-q", env=NO_GPU)
    assert r.returncode in (0, 1) and "compare: 42 rows:" in r.stdout, r.stderr
    other = tmp_path / "other.json"
    other.write_text('{"benchmarks": []}')
    one_line(run("compare", other, GATE / "ci2.csv", env=NO_GPU), 2,
             f"{other}: a JSON object without syncbench's \"syncbench\" and \"rows\"")
    bad = json.loads(a.read_text())
    bad["rows"][1]["median"] = "abc"
    a.write_text(json.dumps(bad))
    one_line(run("compare", a, GATE / "ci2.csv", env=NO_GPU), 2,
             f"{a}: row 2: median is not a number")
