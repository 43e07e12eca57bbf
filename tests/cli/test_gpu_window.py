"""The window of GPU activity (--gpu-activity-range NAME[@DOMAIN][:FIRST[-LAST]],
--gpu-activity-steps FIRST[-LAST]) without a GPU:

- bad input is one line and exit 2, before the audited command starts;
- the injection library switches the GPU's activity on at the first instance's beginning and off
  at the last's end, and writes the "gwindow" record: tests/inject/fake_cuda plays NVTX ranges
  through tests/inject/fake_cupti.c, which logs what is switched (FAKE_CUPTI_LOG) and grants it
  (FAKE_CUPTI_ACCEPT=1); the launches' API records stay on until CUDA has a context (the fake
  plays its creation), then follow the window, and are written for the launches inside the
  window only (one launch in each instance, an API record with FAKE_CUPTI_API_RECORDS=1);
- the analyzer, on record folders written here: the GPU's figures come from the window and are
  scaled to the run by its calls (a window of identical steps predicts what the whole run's
  recording does), bubbles and waits are judged inside it only, and every report says so."""
import csv
import io
import json
import os

import pytest

from conftest import ROOT, assert_usage_error, require_built, run

FAKE = str(ROOT / "build" / "tests" / "fake_cuda")
FAKE_CUPTI = ROOT / "build" / "tests" / "fake-cupti"
GATED = ["kernels", "memcpy", "memset", "events", "syncs"]  # what the window switches


# ---- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("args,message", [
    (("--gpu-activity-range", "step:7-3"), "the first instance (7) is after the last (3)"),
    (("--gpu-activity-range", "step:0"), "the first instance must be from 1 to 1000000000"),
    (("--gpu-activity-range", "step:2-0"), "the last instance must be from 1"),
    (("--gpu-activity-range", "step:3-"), "no last instance"),
    (("--gpu-activity-range", "step:3-7-9"), "not a whole number"),
    (("--gpu-activity-range", ":3"), "no range name"),
    (("--gpu-activity-range", "@NCCL"), "no range name"),
    (("--gpu-activity-range", ""), "no range name"),
    (("--gpu-activity-range", "x" * 512), "longer than 511 bytes"),
    (("--gpu-activity-range",), "--gpu-activity-range needs a value before \"--\""),
    (("--gpu-activity-steps", "3"), "--gpu-activity-steps needs the range a step is"),
    (("--gpu-activity-steps", "0", "--range", "s"), "--gpu-activity-steps 0: the first"),
    (("--gpu-activity-steps", "5-2", "--range", "s"), "is after the last"),
    (("--gpu-activity-steps", "x", "--range", "s"), "not a whole number"),
    (("--gpu-activity-range", "a", "--gpu-activity-steps", "1", "--range", "a"),
     "both name the window"),
    (("--gpu-activity-range", "a", "--trace", "t.json"),
     "--trace records the GPU's activity over the whole run"),
    (("--gpu-activity-steps", "2", "--range", "s", "--trace", "t.json"), "--trace records"),
])
def test_bad_window_is_one_line_before_the_command_starts(tmp_path, args, message):
    mark = tmp_path / "ran"
    r = run("audit", *args, "--", "sh", "-c", f"touch {mark}", env={"CUDA_VISIBLE_DEVICES": ""},
            cwd=tmp_path)
    assert_usage_error(r, message)
    assert not mark.exists()


def test_from_refuses_a_window(tmp_path):
    for opt in (("--gpu-activity-range", "step:2"), ("--gpu-activity-steps", "2", "--range", "s")):
        assert_usage_error(run("audit", "--from", tmp_path, *opt), "recording options")


def test_steps_need_a_baseline_per_step(tmp_path):
    b = tmp_path / "b.ini"
    b.write_text("[syncbench]\nversion = 1\nper = run\n")
    mark = tmp_path / "ran"
    r = run("audit", "--baseline", b, "--gpu-activity-steps", "2", "--", "sh", "-c",
            f"touch {mark}", env={"CUDA_VISIBLE_DEVICES": ""})
    assert_usage_error(r, "counts per run, not per step")
    assert not mark.exists()


def test_help_names_the_window_options():
    r = run("audit", "--help")
    assert r.returncode == 0
    for opt in ("--gpu-activity-range NAME[@DOM][:N[-M]]", "--gpu-activity-steps N[-M]"):
        assert opt in r.stdout, r.stdout


# ---- the injection library, on the fake CUPTI ---------------------------------------------------

@pytest.fixture(scope="module")
def fake_built():
    require_built(FAKE, FAKE_CUPTI / "libcupti.so.13")


def fake_audit(tmp_path, opts, ranges, extra_env=None):
    """fake_cuda's NVTX ranges audited with opts: (result, records, the fake CUPTI's log)."""
    tmp_path.mkdir(exist_ok=True)
    log, keep = tmp_path / "cupti.log", tmp_path / "recs"
    old = os.environ.get("LD_LIBRARY_PATH")
    env = {"LD_LIBRARY_PATH": str(FAKE_CUPTI) + (":" + old if old else ""),
           "FAKE_CUPTI_LOG": str(log), "FAKE_CUPTI_ACCEPT": "1",
           "SYNCBENCH_ACTIVITY_CALIBRATE": "0", **(extra_env or {})}
    r = run("audit", *opts, "--keep", keep, "--", FAKE, "ranges", *ranges, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    (f,) = keep.glob("proc-*.jsonl")
    recs = [json.loads(x) for x in f.read_text().splitlines()]
    check = run("__record-schema", "--check", f, timeout=60)
    assert check.returncode == 0, check.stdout + check.stderr
    return r, recs, log.read_text().splitlines()


def switched(log):
    """The log from the first push on, as ("push NAME" | "pop" | "context" | "on" | "off" |
    "launches on" | "launches off"): "on"/"off" where every gated kind was enabled/disabled
    together, "launches on"/"off" where every launch function's API records were."""
    out, i = [], next(k for k, x in enumerate(log) if x.startswith("push"))
    while i < len(log):
        x = log[i]
        for verb, tag in (("enable", "on"), ("disable", "off")):
            if x == f"{verb} {GATED[0]}":
                group = log[i:i + len(GATED)]
                assert group == [f"{verb} {k}" for k in GATED], log[i:]
                out.append(tag)
                i += len(GATED)
                break
        else:
            if x.startswith(("push", "pop")) or x == "context":
                out.append(x)
            elif x == "flush-all":  # the exit's: not a switch
                pass
            elif x.startswith(("rt-api", "drv-api")):
                on = x.split()[-1]
                while i + 1 < len(log) and log[i + 1].startswith(("rt-api", "drv-api")):
                    i += 1
                    assert log[i].split()[-1] == on, log[i - 1:i + 1]
                out.append("launches " + ("on" if on == "1" else "off"))
            else:
                assert 0, f"unexpected {x!r} in {log}"
            i += 1
    return out


def test_the_window_switches_the_activity_at_its_instances(fake_built, tmp_path):
    r, recs, log = fake_audit(tmp_path, ("--gpu-activity-range", "step:2-3"),
                              ("warm", "1", "step", "4"))
    # every kind asked for at the start (so that a refusal is said then), the gated ones off at
    # once; the streams stay on
    head = log[:log.index(next(x for x in log if x.startswith("push")))]
    assert [f"disable {k}" for k in GATED] == [x for x in head if x.startswith("disable")]
    # the launches, by function: on at the start and until CUDA has a context (switched off
    # before it, CUPTI 13 recorded none switched on again), then off at the range's first
    # instance before the window, on with it and off after; what comes outside the window's
    # bounds is dropped
    assert any(x.startswith("rt-api") and x.endswith(" 1") for x in head)
    assert not any(x.startswith("rt-api") and x.endswith(" 0") for x in head)
    assert head[-1] == "context"
    assert "enable streams" in head and "disable streams" not in log
    assert switched(log) == ["push warm", "pop", "push step", "launches off", "pop", "push step",
                             "on", "launches on", "pop", "push step", "pop", "off",
                             "launches off", "push step", "pop"]
    proc, gw = recs[0], [x for x in recs if x["t"] == "gwindow"]
    assert proc["window"] == "step:2-3" and len(gw) == 1
    steps = [x for x in recs if x["t"] == "range" and x["name"] == "step"]
    gw = gw[0]
    assert (gw["range"], gw["first"], gw["last"]) == ("step", 2, 3) and "dom" not in gw
    assert steps[1]["start"] <= gw["start"] <= steps[1]["end"]
    assert steps[2]["end"] <= gw["end"] <= steps[3]["start"]
    assert gw["tid"] == steps[1]["tid"]
    assert "GPU activity recorded in a window only: step:2-3" in r.stderr


def test_the_launches_stay_on_until_cuda_has_a_context(fake_built, tmp_path):
    """Switched off before CUDA's first context, CUPTI 13 recorded no launch once they were on
    again (the H200): instances before the context leave the launches on; the first after it
    turns them off, before the window opens."""
    _, _, log = fake_audit(tmp_path, ("--gpu-activity-range", "step:4-5"),
                           ("step", "2", "context", "1", "step", "4"))
    assert switched(log) == ["push step", "pop", "push step", "pop", "context", "push step",
                             "launches off", "pop", "push step", "on", "launches on", "pop",
                             "push step", "pop", "off", "launches off", "push step", "pop"]
    # no context at all (the resource callback never came): the launches are never switched
    _, _, log = fake_audit(tmp_path / "none", ("--gpu-activity-range", "step:2-2"),
                           ("step", "3", "context", "0"))
    assert not [x for x in switched(log) if x.startswith("launches")], log


def test_without_a_window_nothing_is_switched(fake_built, tmp_path):
    _, recs, log = fake_audit(tmp_path, ("--gpu-activity",), ("step", "3"),
                              extra_env={"SYNCBENCH_AUDIT_WINDOW": "step:1-2"})
    # the launcher hands no window it was not given, whatever the environment held
    assert "window" not in recs[0] and not [x for x in recs if x["t"] == "gwindow"]
    assert not [x for x in log if x.startswith("disable")]
    assert switched(log) == ["push step", "pop"] * 3


def test_a_domain_counts_its_own_ranges_only(fake_built, tmp_path):
    _, recs, log = fake_audit(tmp_path, ("--gpu-activity-range", "step@dom:2"),
                              ("step", "2", "step@dom", "3"))
    assert switched(log) == ["push step", "pop"] * 2 + [
        "push step@dom", "launches off", "pop", "push step@dom", "on", "launches on", "pop",
        "off", "launches off", "push step@dom", "pop"]
    (gw,) = [x for x in recs if x["t"] == "gwindow"]
    assert gw["dom"] == "dom" and recs[0]["window"] == "step@dom:2-2"
    # any domain (no @): every "step" counts; the default domain (@): the plain ones only
    _, _, log = fake_audit(tmp_path / "any", ("--gpu-activity-range", "step:3"),
                           ("step", "2", "step@dom", "2"))
    assert switched(log)[5:11] == ["push step@dom", "on", "launches on", "pop", "off",
                                   "launches off"]
    _, _, log = fake_audit(tmp_path / "dflt", ("--gpu-activity-range", "step@:2"),
                           ("step@dom", "2", "step", "2"))
    assert switched(log)[4:] == ["push step", "launches off", "pop", "push step", "on",
                                 "launches on", "pop", "off", "launches off"]


def test_a_window_never_opened_or_open_at_the_exit(fake_built, tmp_path):
    r, recs, log = fake_audit(tmp_path, ("--gpu-activity-range", "step:5-6"), ("step", "3"))
    (gw,) = [x for x in recs if x["t"] == "gwindow"]
    assert (gw["start"], gw["end"]) == (-1, -1) and "on" not in switched(log)
    assert "GPU window step:5-6 never opened (3 instances of step begun)" in r.stderr
    r, recs, log = fake_audit(tmp_path / "open", ("--gpu-activity-range", "step:2-9"),
                              ("step", "3+"))
    (gw,) = [x for x in recs if x["t"] == "gwindow"]
    assert gw["start"] > 0 and gw["end"] == -1 and "off" not in switched(log)
    assert recs[-1]["t"] == "end" and recs.index(recs[-1]) > recs.index(gw)
    assert "still open at the exit" in r.stderr


def test_the_steps_form_takes_the_step_range(fake_built, tmp_path):
    _, recs, log = fake_audit(tmp_path, ("--range", "step", "--gpu-activity-steps", "2-3"),
                              ("warm", "2", "step", "4"))
    assert recs[0]["window"] == "step:2-3"
    assert switched(log)[4:] == ["push step", "launches off", "pop", "push step", "on",
                                 "launches on", "pop", "push step", "pop", "off",
                                 "launches off", "push step", "pop"]
    # the baseline file's range, when --range is not given
    b = tmp_path / "b.ini"
    b.write_text("[syncbench]\nversion = 1\nper = step\nrange = step\n")
    _, recs, _ = fake_audit(tmp_path / "b", ("--baseline", b, "--gpu-activity-steps", "4"),
                            ("step", "4"))
    assert recs[0]["window"] == "step:4-4"


def launches_in(tmp_path, opts, ranges):
    """The "api" records and the records of an audit of fake_cuda's ranges, one launch in each
    instance: the fake CUPTI gives each its API record (FAKE_CUPTI_API_RECORDS), at the exit."""
    _, recs, _ = fake_audit(tmp_path, opts, ranges, extra_env={"FAKE_CUPTI_API_RECORDS": "1"})
    return [x for x in recs if x["t"] == "api"], recs


def test_the_launches_outside_the_window_are_dropped(fake_built, tmp_path):
    played = ("warm", "1", "step", "4")
    # without a window: every launch, each inside its own instance
    api, recs = launches_in(tmp_path / "all", ("--gpu-activity",), played)
    instances = [x for x in recs if x["t"] == "range"]
    assert [x["name"] for x in instances] == ["warm"] + ["step"] * 4
    assert [(x["api"], x["dom"], x["corr"]) for x in api] == \
        [("cudaLaunchKernel_v7000", "rt", c) for c in range(1, 6)]
    assert all(r["start"] < a["start"] <= a["end"] < r["end"] for a, r in zip(api, instances))
    # step:2-3: the launches of steps 2 and 3 only, inside the window's bounds
    api, recs = launches_in(tmp_path / "win", ("--gpu-activity-range", "step:2-3"), played)
    (gw,) = [x for x in recs if x["t"] == "gwindow"]
    steps = [x for x in recs if x["t"] == "range" and x["name"] == "step"]
    # warm's (1) came before the first context's first step: recorded, and dropped by the
    # bounds; step 1's (2) and step 4's (5) not recorded, the launches off
    assert [x["corr"] for x in api] == [3, 4]
    assert all(gw["start"] <= a["start"] <= gw["end"] for a in api)
    assert all(r["start"] < a["start"] < r["end"] for a, r in zip(api, steps[1:3]))
    # a window still open at the exit: from its opening on
    api, recs = launches_in(tmp_path / "open", ("--gpu-activity-range", "step:2-9"),
                            ("step", "3+"))
    (gw,) = [x for x in recs if x["t"] == "gwindow"]
    assert gw["end"] == -1 and [x["corr"] for x in api] == [2, 3]
    assert all(a["start"] >= gw["start"] for a in api)
    # a window that never opens: none
    api, recs = launches_in(tmp_path / "never", ("--gpu-activity-range", "step:5-6"), played)
    (gw,) = [x for x in recs if x["t"] == "gwindow"]
    assert gw["start"] == -1 and api == []
    assert [x["name"] for x in recs if x["t"] == "range"] == ["warm"] + ["step"] * 4


# ---- the analyzer, on records written here ------------------------------------------------------

PERIOD = 112000


def write_records(folder, steps=40, window=None, outside_site=False, opened=True):
    """A process of `steps` identical steps (NVTX "step"): a 100 us kernel launched, a stream
    sync that waits for it (site train.py:step). With window (first, last): the GPU's records of
    those steps only, and the gwindow record (start -1 when not opened). outside_site: a device
    sync of its own site (train.py:log) in the first five steps, outside any window."""
    folder.mkdir(parents=True)
    proc = {"t": "proc", "v": 1, "pid": 100, "ppid": 1, "rank": -1, "local_rank": -1,
            "cmd": "app", "clock_ns": 0, "mono_ns": 0, "mode": "count", "kernels": 1,
            "launches": 1, "symsize": 1}
    if window:
        proc["window"] = f"step:{window[0]}-{window[1]}"
    lines = [proc,
             {"t": "pystack", "id": 1, "frames": [["train.py", "step", 10]]},
             {"t": "pystack", "id": 2, "frames": [["train.py", "log", 20]]}]
    base = 10000
    for i in range(steps):
        h, c, n = base + PERIOD * i, 3 * i + 1, i + 1
        if not window or window[0] <= n <= window[1]:
            lines += [{"t": "api", "api": "cudaLaunchKernel_v7000", "dom": "rt", "tid": 1,
                       "corr": c, "start": h, "end": h + 2000},
                      {"t": "kernel", "dev": 0, "ctx": 1, "stream": 7, "corr": c,
                       "start": h + 5000, "end": h + 105000},
                      {"t": "sync", "type": "stream", "ctx": 1, "stream": 7, "corr": c + 1,
                       "sync_id": -1, "start": h + 3000, "end": h + 110000}]
        lines.append({"t": "call", "api": "cudaStreamSynchronize_v3020", "dom": "rt", "tid": 1,
                      "ctx": 1, "corr": c + 1, "start": h + 3000, "end": h + 110000,
                      "ranges": [[i, "step"]], "stack": -1, "py": 1})
        if outside_site and n <= 5:
            lines.append({"t": "call", "api": "cudaDeviceSynchronize_v3020", "dom": "rt",
                          "tid": 1, "ctx": 1, "corr": c + 2, "start": h + 110100,
                          "end": h + 110500, "ranges": [[i, "step"]], "stack": -1, "py": 2})
        lines.append({"t": "range", "tid": 1, "id": i, "name": "step", "start": h - 1000,
                      "end": h + 111000, "depth": 0})
    if window:
        start = base + PERIOD * (window[0] - 1) - 900 if opened else -1
        end = base + PERIOD * (window[1] - 1) + 111500 if opened else -1
        lines.append({"t": "gwindow", "range": "step", "first": window[0], "last": window[1],
                      "start": start, "end": end, "tid": 1})
    end = base + PERIOD * steps
    lines.append({"t": "end", "clock_ns": end, "mono_ns": end, "why": "exit", "dropped": 0})
    (folder / "proc-100.jsonl").write_text("".join(json.dumps(o) + "\n" for o in lines))
    return folder


def report(folder, *opts):
    """(stderr, JSON, CSV rows, Markdown, trace) of --from folder."""
    out = folder.parent / (folder.name + "-out")
    out.mkdir()
    r = run("audit", "--from", folder, "--json", out / "r.json", "--csv", out / "r.csv",
            "--markdown", out / "r.md", "--trace", out / "t.json", *opts)
    assert r.returncode in (0, 1), r.stderr
    rows = list(csv.DictReader(io.StringIO((out / "r.csv").read_text())))
    return (r, json.loads((out / "r.json").read_text()), rows, (out / "r.md").read_text(),
            json.loads((out / "t.json").read_text()))


def site(proc, name):
    (s,) = [x for x in proc["predicted"]["sites"] if x["site"].startswith(name)]
    return s


def test_a_window_of_identical_steps_predicts_the_whole_recordings_figures(tmp_path):
    _, full, full_rows, _, _ = report(write_records(tmp_path / "full"))
    r, win, rows, md, trace = report(write_records(tmp_path / "win", window=(11, 30)))
    fp, wp = full["processes"][0], win["processes"][0]
    # per call the window saves what the whole run does: scaled by its calls, the same total
    assert wp["predicted"]["save_us"] == pytest.approx(fp["predicted"]["save_us"], rel=1e-9)
    assert wp["predicted"]["save_us"] == pytest.approx(40 * 11)
    assert (wp["predicted"]["calls"], wp["predicted"]["window_calls"]) == (40, 20)
    # the replay plays the window alone: its syncs and GPU operations
    assert (wp["predicted"]["model"]["syncs"], wp["predicted"]["model"]["gpu_operations"]) == \
        (20, 20)
    assert (fp["predicted"]["model"]["syncs"], fp["predicted"]["model"]["gpu_operations"]) == \
        (40, 40)
    assert "window_calls" not in fp["predicted"] and fp["predicted"]["scaled_from"] is None
    s = site(wp, "train.py:10")
    assert (s["calls"], s["window_calls"]) == (40, 20)
    assert s["save_us"] == pytest.approx(site(fp, "train.py:10")["save_us"])
    # bubbles: the window's calls', scaled to the run's: the whole recording's sum
    assert float(rows[0]["bubble_total_us"]) == pytest.approx(
        float(full_rows[0]["bubble_total_us"]))
    assert win["rows"][0]["bubble_total_us"] == pytest.approx(full["rows"][0]["bubble_total_us"])
    # GPU busy is the window's share
    assert wp["gpu_busy_pct"] == pytest.approx(fp["gpu_busy_pct"], abs=0.5)
    w = wp["gpu_window"]
    assert w == {"spec": "step:11-30", "range": "step", "domain": None, "first": 11, "last": 30,
                 "opened": True, "open_at_exit": False, "span_s": pytest.approx(20 * 1.12e-4, rel=0.01),
                 "range_instances": 40, "scaled_by": "calls"}
    assert fp["gpu_window"] is None
    assert wp["predicted"]["scaled_from"] == "window"
    assert win["total"]["predicted_scaled_from"] == "window"
    assert full["total"]["predicted_scaled_from"] is None
    # each report says so
    assert "GPU activity recorded in a window only: step:11-30" in r.stderr
    assert "GPU busy 89.3 % (in its GPU window)" in r.stderr
    assert "removing all 40 syncs would save 0.440 ms" in r.stderr
    assert "[scaled from the 20 in the GPU window]" in r.stderr
    assert "bubble ms, saves ms: from the GPU window, scaled to the run by its calls" in r.stderr
    assert {x["gpu_window"] for x in rows} == {"step:11-30"}
    assert {x["gpu_window"] for x in full_rows} == {""}
    assert "`saving ms` from the GPU window `step:11-30`, scaled to the run by its calls" in md
    marks = [e for e in trace["traceEvents"] if e.get("cat") == "gpu_window"]
    assert len(marks) == 1 and marks[0]["name"] == "GPU window step:11-30"
    syncs = [e for e in trace["traceEvents"] if e.get("cat") == "sync"]
    assert len(syncs) == 40
    assert all(e["args"].get("save_scaled_from") == "window" for e in syncs)
    # the bubble of a sync outside the window is not known: none given
    assert sum("bubble_us" in e["args"] for e in syncs) == 20


def test_a_site_the_window_never_saw_has_no_figure(tmp_path):
    r, win, rows, md, _ = report(write_records(tmp_path / "w", window=(11, 30), outside_site=True),
                                 "--max-syncs", "0")
    p = win["processes"][0]
    log = site(p, "train.py:20")
    assert (log["calls"], log["window_calls"], log["save_us"]) == (5, 0, None)
    (row,) = [x for x in rows if x["site"].startswith("train.py:20")]
    assert row["site_save_us"] == "" and row["bubble_total_us"] == ""
    (jrow,) = [x for x in win["rows"] if x["site"].startswith("train.py:20")]
    assert jrow["site_save_us"] is None and jrow["bubble_total_us"] is None
    assert "| 5 |" in md and "train.py:20" in md
    # the table: unknown, and why; the gate's figure is the window's, scaled, and says so
    (line,) = [x for x in r.stderr.splitlines() if x.endswith("train.py:20 in log")]
    assert line.split()[:4] == ["5", "sync-device", "step", "unknown"], line
    assert "removing the site saves: unknown (no call inside the GPU window)" in r.stderr
    assert "removing them would save" in r.stderr and "(scaled from the GPU window)" in r.stderr


def test_a_window_that_never_opened_gives_no_gpu_figures(tmp_path):
    r, win, rows, _, _ = report(write_records(tmp_path / "n", window=(50, 60), opened=False))
    p = win["processes"][0]
    assert p["gpu_busy_pct"] is None and p["predicted"] is None
    assert p["gpu_window"]["opened"] is False and p["gpu_window"]["range_instances"] == 40
    assert "GPU window step:50-60 never opened (40 instances of step begun)" in r.stderr
    assert "pid 100: host blocked" in r.stderr and "GPU busy 0.0" not in r.stderr
    assert "from the GPU window" not in r.stderr
    assert "the launches were not recorded" not in r.stderr
    assert rows[0]["bubble_total_us"] == ""


@pytest.mark.parametrize("line", [
    {"t": "gwindow", "range": "step", "first": 1, "last": 1, "start": 500, "end": 100},
    {"t": "gwindow", "range": "step", "first": 0, "last": 1, "start": 100, "end": 500},
    {"t": "gwindow", "range": "step", "first": 3, "last": 2, "start": 100, "end": 500},
    {"t": "gwindow", "range": "step", "first": 1, "last": 1, "start": -1, "end": 500},
    {"t": "gwindow", "first": 1, "last": 1, "start": 100, "end": 500},
])
def test_a_malformed_window_record_is_skipped_and_counted(tmp_path, line):
    d = write_records(tmp_path / "m", steps=3)
    f = d / "proc-100.jsonl"
    lines = f.read_text().splitlines()
    f.write_text("\n".join(lines[:-1] + [json.dumps(line), lines[-1]]) + "\n")
    _, rep, _, _, _ = report(d)
    p = rep["processes"][0]
    assert p["malformed_lines"] == 1 and p["gpu_window"] is None
