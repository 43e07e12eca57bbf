"""The sync baseline (issue 46, docs/baseline.md), no GPU: records of a training loop with Python
stacks and NVTX steps, as `--keep` leaves them, held to a baseline file with --from. A new
`.item()` fails with its site named (and annotated at its line); a line inserted above the syncs
is a moved site, reported, not failed; a known sync going from 1 to 2 per step fails; warm-up
steps are left out; --update-baseline writes a file its own run passes, keeping the notes; each
bad file is one line naming file and entry, exit 2, before anything runs."""
import json
import os
import pathlib
import subprocess

import pytest

from conftest import BIN, run

TORCH_ITEM = ["/usr/lib/libtorch_cuda.so", "at::native::_local_scalar_dense_cuda(at::Tensor const&)",
              4660, 140000000000000]


def write_loop(folder, ws, lines, steps, range_name="train_step", pid=7):
    """ws/train.py holding `lines` ({line: text}, all in function train_step) and
    folder/proc-PID.jsonl: steps, each a list of (line, tid) calls of cudaStreamSynchronize made
    at that line, each thread's calls inside its own instance of range_name."""
    ws.mkdir(parents=True, exist_ok=True)
    src = ws / "train.py"
    last = max(lines)
    src.write_text("".join(lines.get(i, "pass") + "\n" for i in range(1, last + 1)))
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    recs = [{"t": "proc", "v": 1, "pid": pid, "ppid": 1, "rank": -1, "local_rank": -1,
             "cmd": "python3 train.py", "clock_ns": 0, "mono_ns": 0, "mode": "count",
             "kernels": 0, "symsize": 1}]
    ids = {}
    for line in sorted(lines):
        ids[line] = len(ids) + 1
        recs.append({"t": "stack", "id": ids[line], "frames": [TORCH_ITEM]})
        recs.append({"t": "pystack", "id": ids[line], "frames": [[str(src), "train_step", line]]})
    corr = rid = 0
    for i, calls in enumerate(steps):
        t0 = (i + 1) * 100_000_000
        for tid in sorted({tid for _, tid in calls} or {1}):
            rid += 1
            recs.append({"t": "range", "tid": tid, "id": rid, "name": range_name, "start": t0,
                         "end": t0 + 90_000_000, "depth": 0})
            for k, (line, _) in enumerate(c for c in calls if c[1] == tid):
                corr += 1
                s = t0 + 1000 + k * 100_000
                recs.append({"t": "call", "api": "cudaStreamSynchronize_v3020", "dom": "rt",
                             "tid": tid, "ctx": 1, "corr": corr, "start": s, "end": s + 4000,
                             "ranges": [[rid, range_name]], "stack": ids[line],
                             "py": ids[line]})
    recs.append({"t": "end", "clock_ns": 10**10, "mono_ns": 10**10, "why": "exit", "dropped": 0})
    (folder / f"proc-{pid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return folder


LOOP = {10: "def train_step(x):", 12: "    loss = x.sum().item()", 14: "    acc = x.max().item()"}


def loop(tmp_path, name="K", lines=LOOP, steps=None, **kw):
    steps = steps if steps is not None else [[(12, 1), (14, 1)]] * 5
    return write_loop(tmp_path / name, tmp_path / "ws", lines, steps, **kw)


def audit(*args, cwd, env=None):
    full = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    full.update(env or {})
    return subprocess.run([BIN, "audit", "-q", *map(str, args)], capture_output=True, text=True,
                          env=full, timeout=300, cwd=cwd)


def update(tmp_path, k, path, *extra):
    r = audit("--from", k, "--update-baseline", path, *extra, cwd=tmp_path / "ws")
    assert r.returncode == 0, r.stderr
    return r


def test_update_writes_a_baseline_its_own_run_passes(tmp_path):
    k = loop(tmp_path)
    bl = tmp_path / "syncs.ini"
    r = update(tmp_path, k, bl, "--range", "train_step")
    assert "baseline written to" in r.stderr
    text = bl.read_text()
    assert text.startswith("# syncbench sync baseline")
    assert "per = step\nrange = train_step\n" in text and "syncs_per_step = 2\n" in text
    assert "text = loss = x.sum().item()\n" in text and "budget = 1\n" in text
    assert "operation = scalar read: .item()\n" in text and "line = 12\n" in text
    r = audit("--from", k, "--baseline", bl, "--json", tmp_path / "r.json", cwd=tmp_path / "ws")
    assert r.returncode == 0, r.stderr
    assert "audit gate: passed: baseline" in r.stderr and "2 -> 2 per step" in r.stderr
    b = json.loads((tmp_path / "r.json").read_text())["baseline"]
    assert b["passed"] and b["per"] == "step" and b["range"] == "train_step"
    assert b["syncs_per_step"] == {"base": 2, "now": 2} and b["new"] == [] and b["gone"] == []


def test_a_new_item_fails_with_its_site_named_and_annotated(tmp_path):
    bl = tmp_path / "syncs.ini"
    update(tmp_path, loop(tmp_path), bl, "--range", "train_step")
    lines = {**LOOP, 16: "    extra = x.min().item()"}
    k2 = loop(tmp_path, "K2", lines, [[(12, 1), (14, 1), (16, 1)]] * 5)
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path / "ws"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    r = audit("--from", k2, "--baseline", bl, "--json", tmp_path / "r.json",
              "--junit", tmp_path / "j.xml", cwd=tmp_path / "ws", env=env)
    assert r.returncode == 1, r.stderr
    assert "audit gate: FAILED: baseline" in r.stderr
    assert "2 -> 3 per step: +1 at train.py:16 (new)" in r.stderr
    assert "new      1/step  train.py:16 in train_step" in r.stderr
    ann = [l for l in r.stdout.splitlines() if l.startswith("::error")]
    assert len(ann) == 1 and ann[0].startswith("::error file=train.py,line=16,"), r.stdout
    assert "baseline: new site, not in" in ann[0]
    b = json.loads((tmp_path / "r.json").read_text())["baseline"]
    assert not b["passed"] and [s["line"] for s in b["new"]] == [16]
    assert b["new"][0]["text"] == "extra = x.min().item()"
    assert "train.py:16" in (tmp_path / "j.xml").read_text()


def test_a_line_inserted_above_is_moved_not_failed(tmp_path):
    bl = tmp_path / "syncs.ini"
    update(tmp_path, loop(tmp_path), bl, "--range", "train_step")
    lines = {10: "def train_step(x):", 11: "    x = x * 2", 13: "    loss = x.sum().item()",
             15: "    acc = x.max().item()"}
    k2 = loop(tmp_path, "K2", lines, [[(13, 1), (15, 1)]] * 5)
    r = audit("--from", k2, "--baseline", bl, "--json", tmp_path / "r.json", cwd=tmp_path / "ws")
    assert r.returncode == 0, r.stderr
    assert "moved    1/step (budget 1)  train.py:13 in train_step" in r.stderr
    assert "(was line 12)" in r.stderr
    b = json.loads((tmp_path / "r.json").read_text())["baseline"]
    assert sorted((s["base_line"], s["line"]) for s in b["moved"]) == [(12, 13), (14, 15)]


def test_a_known_sync_from_one_to_two_per_step_fails(tmp_path):
    bl = tmp_path / "syncs.ini"
    update(tmp_path, loop(tmp_path), bl, "--range", "train_step")
    steps = [[(12, 1), (14, 1)]] * 4 + [[(12, 1), (12, 1), (14, 1)]]
    k2 = loop(tmp_path, "K2", steps=steps)
    r = audit("--from", k2, "--baseline", bl, "--json", tmp_path / "r.json", cwd=tmp_path / "ws")
    assert r.returncode == 1, r.stderr
    assert "+1 at train.py:12 (2, budget 1)" in r.stderr
    assert "over     2/step (budget 1)  train.py:12 in train_step" in r.stderr
    b = json.loads((tmp_path / "r.json").read_text())["baseline"]
    assert [s["line"] for s in b["over_budget"]] == [12]


def test_warm_up_steps_are_left_out(tmp_path):
    bl = tmp_path / "syncs.ini"
    warm = [[(12, 1), (12, 1), (12, 1), (14, 1)]] * 2 + [[(12, 1), (14, 1)]] * 5
    k = loop(tmp_path, steps=warm)
    update(tmp_path, k, bl, "--range", "train_step", "--skip-first", "2")
    assert "skip_first = 2\n" in bl.read_text() and "budget = 3" not in bl.read_text()
    r = audit("--from", k, "--baseline", bl, cwd=tmp_path / "ws")
    assert r.returncode == 0, r.stderr
    r = audit("--from", k, "--baseline", bl, "--skip-first", "0", cwd=tmp_path / "ws")
    assert r.returncode == 1 and "(3, budget 1)" in r.stderr, r.stderr


def test_notes_survive_an_update(tmp_path):
    bl = tmp_path / "syncs.ini"
    k = loop(tmp_path)
    update(tmp_path, k, bl, "--range", "train_step")
    bl.write_text(bl.read_text().replace("line = 12\n", "line = 12\nnote = the loss we log\n"))
    update(tmp_path, k, bl)  # the file's range is kept
    text = bl.read_text()
    assert "note = the loss we log\n" in text and "range = train_step\n" in text
    assert text.count("note =") == 1


def test_two_threads_are_counted_apart_with_thread(tmp_path):
    k = loop(tmp_path, lines={10: "def train_step(x):", 12: "    loss = x.sum().item()"},
             steps=[[(12, 1), (12, 1), (12, 2)]])
    site = ("file = train.py\nfunction = train_step\ntext = loss = x.sum().item()\n"
            "operation = scalar read: .item()\nbudget = {}\n")
    head = "[syncbench]\nversion = 1\nper = run\n"
    bl = tmp_path / "syncs.ini"

    def gate(*budgets):
        text = head
        for i, (thread, budget) in enumerate(budgets, 1):
            text += f"[site.{i}]\n" + site.format(budget) + (f"thread = {thread}\n" if thread else "")
        bl.write_text(text)
        return audit("--from", k, "--baseline", bl, cwd=tmp_path / "ws")

    assert gate(("", 3)).returncode == 0
    r = gate(("", 2))
    assert r.returncode == 1 and "(3, budget 2)" in r.stderr, r.stderr
    r = gate(("1", 2), ("2", 1))
    assert r.returncode == 0, r.stderr
    r = gate(("1", 1), ("2", 2))
    assert r.returncode == 1 and "(2, budget 1)" in r.stderr and "[thread 1]" in r.stderr, r.stderr


GOOD = """[syncbench]
version = 1
per = step
range = train_step
skip_first = 0

[site.1]
file = train.py
function = train_step
text = loss = x.sum().item()
operation = scalar read: .item()
library_line =
line = 12
budget = 1
"""


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("budget = 1", "budget = -1"), ":14: [site.1]: budget = -1: negative"),
    (lambda t: t.replace("version = 1", "version = 2"),
     ":2: [syncbench]: version 2: newer than this syncbench reads (1)"),
    (lambda t: t + "colour = red\n", ":15: [site.1]: unknown key 'colour'"),
    (lambda t: t.replace("operation = scalar read: .item()\n", ""),
     ":7: [site.1]: missing key 'operation'"),
    (lambda t: t + "\n[site.2]\n" + t.split("[site.1]\n")[1],
     ":16: [site.2]: the same site as [site.1] (line 7)"),
    (lambda t: t.replace("[syncbench]", "[syncbench"), ":1: section header without ']'"),
    (lambda t: t.replace("line = 12", "line = twelve"), ":13: [site.1]: line = twelve: expected a whole"),
    (lambda t: t.replace("per = step", "per = epoch"), ":3: [syncbench]: per = epoch"),
])
def test_a_bad_baseline_is_one_line_and_exit_2(tmp_path, edit, message):
    bl = tmp_path / "bad.ini"
    bl.write_text(edit(GOOD))
    k = loop(tmp_path)
    r = audit("--from", k, "--baseline", bl, cwd=tmp_path / "ws")
    assert r.returncode == 2 and len(r.stderr.splitlines()) == 1, r.stderr
    assert str(bl) + message in r.stderr, r.stderr
    # before the command starts: CMD never runs
    marker = tmp_path / "ran"
    r = audit("--baseline", bl, "--", "touch", marker, cwd=tmp_path / "ws")
    assert r.returncode == 2 and not marker.exists(), r.stderr


def test_the_good_baseline_passes(tmp_path):
    bl = tmp_path / "ok.ini"
    bl.write_text(GOOD.replace("line = 12", "line = 12\nnote = the loss we log"))
    r = audit("--from", loop(tmp_path), "--baseline", bl, cwd=tmp_path / "ws")
    assert r.returncode == 1, r.stderr  # acc (line 14) is not in it
    assert "+1 at train.py:14 (new)" in r.stderr


def test_update_refuses_an_input_of_the_run(tmp_path):
    k = loop(tmp_path)
    r = audit("--from", k, "--update-baseline", k / "proc-7.jsonl", cwd=tmp_path / "ws")
    assert r.returncode == 2 and "--from" in r.stderr, r.stderr
    bl = tmp_path / "syncs.ini"
    update(tmp_path, k, bl, "--range", "train_step")
    r = audit("--from", k, "--baseline", bl, "--update-baseline", bl, cwd=tmp_path / "ws")
    assert r.returncode == 2 and "is also an input" in r.stderr, r.stderr
    src = tmp_path / "ws" / "train.py"
    before = src.read_text()
    r = audit("--update-baseline", src, "--", "cat", src, cwd=tmp_path / "ws")
    assert r.returncode == 2 and "input" in r.stderr and src.read_text() == before, r.stderr


def test_an_edited_line_is_changed_and_a_removed_one_gone(tmp_path):
    bl = tmp_path / "syncs.ini"
    update(tmp_path, loop(tmp_path), bl, "--range", "train_step")
    edited = {**LOOP, 14: "    acc = x.amax().item()"}
    r = audit("--from", loop(tmp_path, "K2", edited), "--baseline", bl, "--json",
              tmp_path / "r.json", cwd=tmp_path / "ws")
    assert r.returncode == 1 and "+1 at train.py:14 (changed)" in r.stderr, r.stderr
    assert "was: acc = x.max().item() (line 14)" in r.stderr
    b = json.loads((tmp_path / "r.json").read_text())["baseline"]
    assert [s["base_text"] for s in b["changed"]] == ["acc = x.max().item()"] and b["gone"] == []
    r = audit("--from", loop(tmp_path, "K3", steps=[[(12, 1)]] * 5), "--baseline", bl,
              cwd=tmp_path / "ws")
    assert r.returncode == 0, r.stderr
    assert "gone     train.py:14 in train_step (budget 1)" in r.stderr and "2 -> 1 per step" in r.stderr


def test_a_proposed_update_beside_the_baseline_keeps_its_way_of_counting(tmp_path):
    """--baseline A --update-baseline B (B new: the update a CI job hands a reviewer) writes B
    as an update of A would be: A's per, range and skip_first, its notes; the gate is A's."""
    bl = tmp_path / "syncs.ini"
    warm = [[(12, 1), (12, 1), (14, 1)]] * 2 + [[(12, 1), (14, 1)]] * 5
    update(tmp_path, loop(tmp_path, steps=warm), bl, "--range", "train_step", "--skip-first", "2")
    bl.write_text(bl.read_text().replace("line = 12\n", "line = 12\nnote = the loss we log\n"))
    lines = {**LOOP, 16: "    extra = x.min().item()"}
    k2 = loop(tmp_path, "K2", lines, warm[:2] + [[(12, 1), (14, 1), (16, 1)]] * 5)
    new = tmp_path / "syncs.new.ini"
    r = audit("--from", k2, "--baseline", bl, "--update-baseline", new, cwd=tmp_path / "ws")
    assert r.returncode == 1 and "+1 at train.py:16 (new)" in r.stderr, r.stderr
    text = new.read_text()
    assert "per = step\nrange = train_step\nskip_first = 2\n" in text, text
    assert "note = the loss we log\n" in text and "text = extra = x.min().item()\n" in text, text
    r = audit("--from", k2, "--baseline", new, cwd=tmp_path / "ws")
    assert r.returncode == 0, r.stderr


def test_skip_first_needs_a_baseline(tmp_path):
    r = audit("--skip-first", "2", "--", "true", cwd=tmp_path)
    assert r.returncode == 2 and "--skip-first needs --baseline" in r.stderr, r.stderr


def _package():
    """syncbench (python/) with its analyzer this tree's build/syncbench."""
    import sys
    root = pathlib.Path(__file__).resolve().parents[2]
    if str(root / "python") not in sys.path:
        sys.path.insert(0, str(root / "python"))
    import syncbench
    from syncbench import _native
    _native._lib_path = str(pathlib.Path(BIN).resolve().parent / "libsyncbench_audit.so")
    return syncbench


def test_the_python_package_reads_the_file_the_audit_wrote(tmp_path):
    """One format for both sides: the per-step baseline --update-baseline writes (its range,
    skip_first, the numbers per step) loads in the Python package's reader (the pytest
    plugin's), every site with its key."""
    _package()
    from syncbench import _baseline
    bl = tmp_path / "syncs.ini"
    warm = [[(12, 1), (12, 1), (14, 1)]] * 2 + [[(12, 1), (14, 1)]] * 5
    update(tmp_path, loop(tmp_path, steps=warm), bl, "--range", "train_step", "--skip-first", "2")
    base = _baseline.load(bl)
    assert (base.per, base.range, base.skip_first) == ("step", "train_step", 2)
    assert base.syncs_per_step == 2 and base.blocked_us_per_step == 8.0
    texts = sorted((s.text, s.budget, s.line) for s in base.sites)
    assert texts == [("acc = x.max().item()", 1, 14), ("loss = x.sum().item()", 1, 12)], texts
    assert all(s.operation == "scalar read: .item()" and s.thread == "" and s.skip_first is None
               for s in base.sites)


def test_the_audit_reads_the_file_the_python_package_wrote(tmp_path):
    """... and the other way: what the plugin writes (a per-step file with a site's own
    skip_first, a thread and a note) is a baseline the audit reads and gates with."""
    _package()
    from syncbench import _baseline

    class Site:  # a call site as the analyzer names it (syncbench._naming.Site's fields)
        def __init__(self, source, line):
            self.where, self.function, self.source = f"train.py:{line} in train_step", \
                "train_step", source
            self.operation, self.via, self.line = "scalar read: .item()", "", line

    obs = _baseline.Observed("step", "train_step", 2)
    obs.add(_baseline.key_of(Site("    loss = x.sum().item()", 12), "train.py"), "", Site(
        "loss = x.sum().item()", 12), 1)
    acc = _baseline.key_of(Site("acc = x.max().item()", 14), "train.py")
    old = _baseline.Baseline("old", sites=[_baseline.Site("site.1", dict(
        file="train.py", function="train_step", text="acc = x.max().item()",
        operation="scalar read: .item()", library_line="", line=14, budget=1, skip_first=0,
        thread="", note="the accuracy ; logged"), "old")])
    obs.add(acc, "", Site("acc = x.max().item()", 14), 1, old.sites[0])
    obs.calls, obs.steps = 10, 5
    bl = tmp_path / "plugin.ini"
    _baseline.write(bl, obs, old)
    text = bl.read_text()
    assert "skip_first = 0\nnote = the accuracy\n" in text, text  # a value cut as C cuts it
    r = audit("--from", loop(tmp_path), "--baseline", bl, cwd=tmp_path / "ws")
    assert r.returncode == 0, r.stderr
    assert "2 -> 2 per step" in r.stderr and "3 steps of range 'train_step'" in r.stderr, r.stderr


# each edit of GOOD (a per-step file): the audit's reader and the package's agree (refused by
# both, or read by both)
AGREE = [
    lambda t: t,
    lambda t: t.replace("budget = 1", "budget = -1"),
    lambda t: t.replace("budget = 1", "budget = x"),
    lambda t: t.replace("version = 1", "version = 2"),
    lambda t: t.replace("version = 1", "version = 0"),
    lambda t: t.replace("version = 1\n", ""),
    lambda t: t.replace("per = step\n", ""),
    lambda t: t.replace("per = step", "per = epoch"),
    lambda t: t.replace("range = train_step", "range ="),
    lambda t: t.replace("per = step", "per = run").replace("range = train_step", "range ="),
    lambda t: t.replace("skip_first = 0", "skip_first = -2"),
    lambda t: t + "skip_first = 3\n",
    lambda t: t + "skip_first = x\n",
    lambda t: t + "thread = 4242\n",
    lambda t: t + "thread = main\n",
    lambda t: t + "note = the loss we log\n",
    lambda t: t + "colour = red\n",
    lambda t: t.replace("function = train_step\n", ""),
    lambda t: t.replace("function = train_step\n", "function =\n"),
    lambda t: t.replace("text = loss = x.sum().item()\n", ""),
    lambda t: t.replace("operation = scalar read: .item()\n", "operation =\n"),
    lambda t: t.replace("file = train.py\n", "file =\n"),
    lambda t: t.replace("library_line =\n", ""),
    lambda t: t.replace("line = 12\n", ""),
    lambda t: t.replace("line = 12", "line = twelve"),
    lambda t: t + "\n[site.2]\n" + t.split("[site.1]\n")[1],
    lambda t: t + "\n[site.2]\n" + t.split("[site.1]\n")[1] + "thread = 7\n",
    lambda t: t + "\n[site.1]\nfile = b.py\n",
    lambda t: t.replace("[site.1]", "[site.0]"),
    lambda t: t.replace("[site.1]", "[site.x]"),
    lambda t: t.replace("[site.1]", "[other]"),
    lambda t: t.replace("[syncbench]", "[syncbench"),
    lambda t: "key = 1\n" + t,
    lambda t: t.replace("range = train_step", "range = train_step\nrange = other"),
    lambda t: t.replace("skip_first = 0", "skip_first = 0\nsyncs_per_step = 2.5\n"
                        "blocked_us_per_step = 41.5"),
    lambda t: t.replace("skip_first = 0", "skip_first = 0\nsyncs_per_step = -1"),
    lambda t: t + "note = " + "x" * 193 + "\n",
    lambda t: t + "note = " + "x" * 192 + "\n",
    lambda t: t + "note = a\rb\n",
    lambda t: t + "note = a\0b\n",
    lambda t: "# a comment\n; another\n" + t,
]


@pytest.mark.parametrize("n", range(len(AGREE)))
def test_both_readers_refuse_the_same_files(tmp_path, n):
    _package()
    from syncbench import _baseline
    bl = tmp_path / "b.ini"
    bl.write_bytes(AGREE[n](GOOD).encode())
    r = audit("--from", loop(tmp_path), "--baseline", bl, cwd=tmp_path / "ws")
    try:
        _baseline.load(bl)
        python = None
    except _baseline.BaselineError as e:
        python = str(e)
    assert (r.returncode == 2) == (python is not None), (r.stderr, python)


def _steps_of(folder, range_name, pid=7):
    """The records of write_loop as the plugin's steps (syncbench._steps.Step): each instance
    of range_name its thread's calls, in order of start."""
    from syncbench import _steps
    lines = (folder / f"proc-{pid}.jsonl").read_text().splitlines()
    objs = [json.loads(line) for line in lines]
    stacks = [line for line, o in zip(lines, objs) if o["t"] in ("stack", "pystack")]
    ranges = sorted((o for o in objs if o["t"] == "range" and o["name"] == range_name),
                    key=lambda o: o["start"])
    steps = []
    for i, rng in enumerate(ranges):
        calls = [line for line, o in zip(lines, objs) if o["t"] == "call" and o["tid"] == rng["tid"]
                 and any(x[0] == rng["id"] for x in o.get("ranges", []))]
        step = _steps.Step(i, rng["tid"])
        step.blocking = len(calls)
        if calls:
            step.stream = ("\n".join([lines[0]] + stacks + calls + [lines[-1]]) + "\n").encode()
        steps.append(step)
    return steps


def _plugin_gate(folder, bl, skip=None, per_run=False):
    """Does the plugin's gate (syncbench._gate, as a marked test's steps meet it) fail these
    records against the baseline bl?"""
    _package()
    from syncbench import _baseline, _gate
    base = _baseline.load(bl)
    if per_run:
        class Whole:  # the test's block: every call of the run
            def __init__(self, steps):
                self._stream = _merge_streams([s.stream for s in steps if s.stream])
                self.blocking = sum(s.blocking for s in steps)

            def report(self, *a):
                return "failed"
        return _gate.judge(_gate.Mode(), Whole(_steps_of(folder, "train_step")), [], 0, [],
                           [base], "on every thread").failed
    mode = _gate.Mode("step", base.range, base.skip_first if skip is None else skip)
    return _gate.judge(mode, None, _steps_of(folder, base.range), 0, [], [base],
                       "on this thread").failed


def _merge_streams(streams):
    from syncbench import _merge
    return _merge(streams)


def test_the_plugin_gates_the_records_as_the_audit_does(tmp_path):
    """The same records (write_loop's, as the plugin's steps) held to the same baseline by the
    audit's gate (C) and the plugin's (Python): the same verdict for each case of issue 46."""
    bl = tmp_path / "syncs.ini"
    warm = [[(12, 1), (12, 1), (14, 1), (16, 1)]] * 2 + [[(12, 1), (14, 1)]] * 5
    lines = {**LOOP, 16: "    torch.cuda.synchronize()"}
    update(tmp_path, loop(tmp_path, "K0", lines, warm), bl, "--range", "train_step",
           "--skip-first", "2")
    # name: (the records (ws/train.py written with them: the analyzer reads it), --skip-first or
    # None, the audit's verdict: fails?)
    cases = {
        "the run that wrote it": (lambda: loop(tmp_path, "K1", lines, warm), None, False),
        "warm-up counted": (lambda: loop(tmp_path, "K1", lines, warm), 0, True),
        "a new item": (lambda: loop(tmp_path, "K2", {**lines, 18: "    extra = x.min().item()"},
                                    [[(12, 1), (14, 1), (18, 1)]] * 7), None, True),
        "a line inserted above": (lambda: loop(tmp_path, "K3", {10: "def train_step(x):",
                                                                 11: "    x = x * 2",
                                                                 13: "    loss = x.sum().item()",
                                                                 15: "    acc = x.max().item()"},
                                               [[(13, 1), (15, 1)]] * 7), None, False),
        "one to two a step": (lambda: loop(tmp_path, "K4", lines, [[(12, 1), (14, 1)]] * 6 +
                                           [[(12, 1), (12, 1), (14, 1)]]), None, True),
        "two to one": (lambda: loop(tmp_path, "K5", lines, [[(12, 1)]] * 7), None, False),
    }
    for name, (records, skip, fails) in cases.items():
        folder = records()
        extra = ("--skip-first", skip) if skip is not None else ()
        r = audit("--from", folder, "--baseline", bl, *extra, cwd=tmp_path / "ws")
        assert r.returncode == (1 if fails else 0), (name, r.stderr)
        assert _plugin_gate(folder, bl, skip) == fails, name


def test_the_plugin_counts_threads_apart_as_the_audit_does(tmp_path):
    k = loop(tmp_path, lines={10: "def train_step(x):", 12: "    loss = x.sum().item()"},
             steps=[[(12, 1), (12, 1), (12, 2)]])
    site = ("file = train.py\nfunction = train_step\ntext = loss = x.sum().item()\n"
            "operation = scalar read: .item()\nbudget = {}\n")
    bl = tmp_path / "syncs.ini"
    for budgets, fails in ([(("", 3)), False], [(("", 2)), True], [(("1", 2), ("2", 1)), False],
                           [(("1", 1), ("2", 2)), True], [(("2", 1), ("", 2)), False],
                           [(("2", 1), ("", 1)), True]):
        budgets = budgets if isinstance(budgets[0], tuple) else (budgets,)
        text = "[syncbench]\nversion = 1\nper = run\n"
        for i, (thread, budget) in enumerate(budgets, 1):
            text += f"[site.{i}]\n" + site.format(budget) + (f"thread = {thread}\n" if thread
                                                             else "")
        bl.write_text(text)
        r = audit("--from", k, "--baseline", bl, cwd=tmp_path / "ws")
        assert r.returncode == (1 if fails else 0), (budgets, r.stderr)
        assert _plugin_gate(k, bl, per_run=True) == fails, budgets
