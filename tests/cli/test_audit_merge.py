"""`syncbench audit` across ranks, no GPU: the view of one audit's ranks, and `audit --merge` of
the --json reports of two machines (ranks 0-1 and 2-3, rank 3 the straggler in most instances),
each report made by `syncbench audit --from DIR --json OUT` from a synthetic record folder (the
real report format); the straggler and the waits checked against numbers computed here from the
synthetic data; bad inputs: exit 2, one line, nothing written."""
import csv
import json
import statistics

import pytest

from conftest import assert_usage_error, run

STEP_NS = 10_000_000  # instance k of a range runs from k * STEP_NS for 9 ms

# blocked microseconds per train_step instance; rank 3 blocks least in every instance but
# instance 3, where rank 0 does; rank 1 has one instance more than the others
BLOCKED = {
    0: [1500, 1620, 1480, 40, 1710, 1555, 1490, 1600],
    1: [1450, 1600, 1500, 1200, 1690, 1500, 1530, 1580, 1400],
    2: [1520, 1590, 1470, 1180, 1700, 1540, 1510, 1620],
    3: [30, 25, 40, 1210, 35, 20, 45, 33],
}


def proc_lines(pid, rank, blocked_us, name="train_step"):
    """One process's record stream (src/record/records.h): instance k of `name` holds one
    cudaStreamSynchronize of blocked_us[k] microseconds."""
    lines = [json.dumps({"t": "proc", "v": 1, "pid": pid, "ppid": 1, "rank": rank,
                         "local_rank": rank % 2 if rank >= 0 else -1,
                         "cmd": "python3 train.py", "clock_ns": 0, "mono_ns": 0,
                         "mode": "count", "kernels": 0})]
    for k, us in enumerate(blocked_us):
        t0 = k * STEP_NS
        lines.append(json.dumps({"t": "range", "tid": 1, "id": k + 1, "name": name,
                                 "start": t0, "end": t0 + 9_000_000, "depth": 0}))
        lines.append(json.dumps({"t": "call", "api": "cudaStreamSynchronize_v3020", "dom": "rt",
                                 "tid": 1, "ctx": 1, "corr": k + 1, "start": t0 + 1000,
                                 "end": t0 + 1000 + us * 1000, "ranges": [[k + 1, name]],
                                 "stack": -1}))
    lines.append(json.dumps({"t": "end", "clock_ns": 10**9, "mono_ns": 10**9, "why": "exit",
                             "dropped": 0}))
    return "\n".join(lines) + "\n"


def audit_report(tmp_path, name, procs, host=None):
    """A --json report of the records of `procs` [(pid, rank, blocked_us)], made by
    `syncbench audit --from`; host: the machine it stands for (written into its ranks)."""
    folder = tmp_path / f"{name}-records"
    folder.mkdir()
    for pid, rank, blocked in procs:
        (folder / f"proc-{pid}.jsonl").write_text(proc_lines(pid, rank, blocked))
    out = tmp_path / f"{name}.json"
    r = run("audit", "--from", folder, "--json", out)
    assert r.returncode == 0, r.stderr
    if host:
        rep = json.loads(out.read_text())
        for rank in rep["ranks"]["ranks"]:
            rank["host"] = host
        out.write_text(json.dumps(rep))
    return out, r.stderr


def machines(tmp_path):
    a, _ = audit_report(tmp_path, "a", [(100, 0, BLOCKED[0]), (101, 1, BLOCKED[1])], "node-a")
    b, _ = audit_report(tmp_path, "b", [(200, 2, BLOCKED[2]), (201, 3, BLOCKED[3])], "node-b")
    return a, b


def expected(blocked):
    """The rule, from the data: per matched instance the rank that blocked least alone arrived
    last; the others' mean wait is every rank's excess over the least / (ranks - 1).
    {rank: (instances, median wait us, total wait us)}, [straggler per instance], matched."""
    ranks = sorted(blocked)
    matched = min(len(v) for v in blocked.values())
    per, who = {}, []
    for k in range(matched):
        vals = {r: blocked[r][k] for r in ranks}
        least = min(vals.values())
        at = [r for r in ranks if vals[r] == least]
        excess = sum(v - least for v in vals.values())
        who.append(at[0] if len(at) == 1 else None)
        if len(at) == 1:
            per.setdefault(at[0], []).append((excess / (len(ranks) - 1), excess))
    return ({r: (len(x), statistics.median(w for w, _ in x), sum(e for _, e in x))
             for r, x in per.items()}, who, matched)


def straggler_lines(name, want, matched):
    """The table's lines for a range, the straggler of the most instances first."""
    order = sorted(want, key=lambda r: (-want[r][0], r))
    lines = []
    for i, rank in enumerate(order):
        n, med, tot = want[rank]
        lines.append(f"{name + ': ' if i == 0 else ' ' * (len(name) + 2)}rank {rank} arrived last "
                     f"in {n} of {matched} instances; the others waited {med / 1e3:.3f} ms per "
                     f"instance for it (median), {tot / 1e3:.3f} ms in all\n")
    return "".join(lines)


def test_one_audit_shows_its_ranks_side_by_side(tmp_path):
    """One machine's audit (--from): the section names the straggler of its two ranks."""
    _, table = audit_report(tmp_path, "a", [(100, 0, BLOCKED[0]), (101, 1, BLOCKED[1])])
    want, _, matched = expected({0: BLOCKED[0], 1: BLOCKED[1]})
    assert "\nacross ranks (" in table, table
    assert want[1][0] == 5 and want[0][0] == 3  # rank 1 blocked least in 5 of 8
    assert "\n" + straggler_lines("train_step", want, matched) in table, table
    assert "instances matched by order up to the shortest count, 8 (rank 1 has 9)" in table


def test_one_rank_makes_no_section(tmp_path):
    _, table = audit_report(tmp_path, "a", [(100, 0, BLOCKED[0]), (99, -1, BLOCKED[1])])
    assert "across ranks" not in table and "arrived last" not in table, table


def test_merge_of_two_machines(tmp_path):
    a, b = machines(tmp_path)
    out_json, out_csv = tmp_path / "merged.json", tmp_path / "merged.csv"
    # options after the reports, as before them
    r = run("audit", "--merge", a, b, "--json", out_json, "--csv", out_csv)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""
    view = r.stdout
    want, who, matched = expected(BLOCKED)
    assert matched == 8 and want[3][0] == 7 and want[0][0] == 1
    assert view.startswith("syncbench audit --merge: 2 reports, 4 ranks\n"), view
    assert f"  {a}: 2 ranks" in view and f"  {b}: 2 ranks" in view
    # each rank's blocked time and host
    rows = {int(line.split()[0]): line.split() for line in view.splitlines()
            if line[:9].strip().isdigit()}
    assert sorted(rows) == [0, 1, 2, 3], view
    for rank, cols in rows.items():
        assert cols[-1] == ("node-a" if rank < 2 else "node-b"), cols
        assert float(cols[3]) == pytest.approx(sum(BLOCKED[rank]) / 1e3, abs=5e-4), cols
    assert "\n" + straggler_lines("train_step", want, matched) in view, view
    assert "instances matched by order up to the shortest count, 8 (rank 1 has 9)" in view

    rep = json.loads(out_json.read_text())
    assert rep["tool"] == "syncbench audit" and rep["format"] == 1
    assert [m["file"] for m in rep["merged"]] == [str(a), str(b)]
    ranks = rep["ranks"]["ranks"]
    assert [x["rank"] for x in ranks] == [0, 1, 2, 3]
    assert [x["host"] for x in ranks] == ["node-a", "node-a", "node-b", "node-b"]
    assert [x["report"] for x in ranks] == [str(a), str(a), str(b), str(b)]
    assert [x["pid"] for x in ranks] == [100, 101, 200, 201]
    for x in ranks:
        assert x["ranges"][0]["instance_blocked_ns"] == [us * 1000 for us in BLOCKED[x["rank"]]]
    (g,) = rep["ranks"]["ranges"]
    assert g["name"] == "train_step" and g["ranks"] == [0, 1, 2, 3]
    assert g["instances"] == 8 and g["instances_per_rank"] == [8, 9, 8, 8] and g["tied"] == 0
    assert g["instance_straggler"] == who
    got = {s["rank"]: (s["instances"], s["wait_median_us"], s["wait_total_us"])
           for s in g["stragglers"]}
    assert got.keys() == want.keys()
    for rank, (n, med, tot) in want.items():
        assert got[rank][0] == n
        assert got[rank][1] == pytest.approx(med, rel=1e-9)
        assert got[rank][2] == pytest.approx(tot, rel=1e-9)
    assert g["stragglers"][0]["rank"] == 3  # most instances first

    with open(out_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 8 * 4
    row = next(x for x in rows if x["instance"] == "3" and x["rank"] == "2")
    assert row["host"] == "node-b" and row["pid"] == "200" and row["straggler"] == "0"
    assert float(row["blocked_us"]) == 1180 and float(row["least_us"]) == 40
    assert float(row["wait_us"]) == 1140


def test_merge_is_the_same_in_any_order_and_merges_again(tmp_path):
    a, b = machines(tmp_path)
    ab, ba = tmp_path / "ab.json", tmp_path / "ba.json"
    assert run("audit", "--merge", "-q", "--json", ab, a, b).returncode == 0
    r = run("audit", "--merge", "--json", ba, b, a, "-q")
    assert r.returncode == 0 and r.stdout == "", r.stderr
    one, two = json.loads(ab.read_text()), json.loads(ba.read_text())
    assert one["ranks"]["ranges"] == two["ranks"]["ranges"]
    # a merged report merges again, with a third machine's
    c, _ = audit_report(tmp_path, "c", [(300, 4, [5] * 8), (301, 5, [900] * 8)], "node-c")
    r = run("audit", "--merge", ab, c)
    assert r.returncode == 0, r.stderr
    assert "6 ranks" in r.stdout.splitlines()[0]
    assert "train_step: rank 4 arrived last in" in r.stdout, r.stdout


def test_json_to_stdout_keeps_the_view_on_stderr(tmp_path):
    a, b = machines(tmp_path)
    r = run("audit", "--merge", a, b, "--json", "-")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ranks"]["ranges"][0]["stragglers"][0]["rank"] == 3
    assert "train_step: rank 3 arrived last" in r.stderr


def bad_reports(tmp_path):
    """name -> (the report files to merge, what the one line must say)."""
    a, b = machines(tmp_path)
    not_json = tmp_path / "not.json"
    not_json.write_text("{\"tool\": \"syncbench audit\",\n")
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"tool": "syncbench compare", "rows": []}))
    newer = tmp_path / "newer.json"
    rep = json.loads(a.read_text())
    rep["format"] = 2
    newer.write_text(json.dumps(rep))
    old = tmp_path / "old.json"
    del rep["ranks"]
    rep["format"] = 1
    old.write_text(json.dumps(rep))
    copy = tmp_path / "a-again.json"
    copy.write_text(a.read_text())
    no_ranks, _ = audit_report(tmp_path, "plain", [(500, -1, [100, 200])])
    one_rank, _ = audit_report(tmp_path, "one", [(600, 7, [100, 200])])
    broken = tmp_path / "broken.json"
    rep = json.loads(b.read_text())
    rep["ranks"]["ranks"][1]["ranges"][0]["instance_blocked_ns"][2] = "x"
    broken.write_text(json.dumps(rep))
    return {
        "missing file": ([a, tmp_path / "nope.json"],
                         f"audit: --merge: {tmp_path / 'nope.json'}: No such file or directory"),
        "not JSON": ([a, not_json], f"{not_json}: not JSON (line 2"),
        "not an audit report": ([a, other], f"{other}: not a syncbench audit report"),
        "a format it does not know": ([newer, b], f"{newer}: report format 2"),
        "a report without ranks": ([old, b], f"{old}: no \"ranks\""),
        "duplicate rank": ([a, b, copy],
                           f"rank 0 is in {a} (host node-a, pid 100) and in {copy}"),
        "one report only, no ranks": ([no_ranks], f"no ranks in {no_ranks}"),
        "reports with one rank in all": ([no_ranks, one_rank], f"only rank 7 ({one_rank})"),
        "the same report twice": ([a, tmp_path / "." / "a.json"], "are the same report"),
        "a bad field": ([a, broken],
                        f"{broken}: ranks.ranks[1].ranges[0].instance_blocked_ns[2]: not a whole "
                        "number"),
        "a folder": ([a, tmp_path], f"{tmp_path}: a folder, not a report"),
    }


@pytest.mark.parametrize("case", ["missing file", "not JSON", "not an audit report",
                                  "a format it does not know", "a report without ranks",
                                  "duplicate rank", "one report only, no ranks",
                                  "reports with one rank in all", "the same report twice",
                                  "a bad field", "a folder"])
def test_bad_reports(tmp_path, case):
    files, message = bad_reports(tmp_path)[case]
    out_json, out_csv = tmp_path / "out.json", tmp_path / "out.csv"
    r = run("audit", "--merge", *files, "--json", out_json, "--csv", out_csv)
    assert_usage_error(r, message)
    assert not out_json.exists() and not out_csv.exists()
    assert not list(tmp_path.glob("*.partial"))


@pytest.mark.parametrize("args,message", [
    (("--merge",), "--merge: no report"),
    (("--merge", "a.json", "--gpu-activity"), "--merge: --gpu-activity does not apply"),
    (("--merge", "--max-syncs", "0", "a.json"), "--merge: --max-syncs does not apply"),
    (("--merge", "a.json", "--from", "/tmp"), "--merge: --from does not apply"),
    (("--merge", "a.json", "--json"), "option '--json' needs a value"),
    (("--merge", "a.json", "--bogus"), "unknown option '--bogus'"),
])
def test_merge_usage_errors(args, message):
    assert_usage_error(run("audit", *args), message)


def test_an_output_that_is_a_report_is_refused(tmp_path):
    a, b = machines(tmp_path)
    before = b.read_text()
    r = run("audit", "--merge", a, b, "--json", b)
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert b.read_text() == before


def test_help_names_the_merge():
    r = run("audit", "--help")
    assert r.returncode == 0
    assert "syncbench audit --merge A.json B.json" in r.stdout
    assert "--merge" in r.stdout
