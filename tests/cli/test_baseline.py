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


def test_skip_first_needs_a_baseline(tmp_path):
    r = audit("--skip-first", "2", "--", "true", cwd=tmp_path)
    assert r.returncode == 2 and "--skip-first needs --baseline" in r.stderr, r.stderr


def test_the_python_package_reads_the_file_the_audit_wrote(tmp_path):
    """One format for both sides: the baseline --update-baseline writes loads in the Python
    package's reader (the pytest plugin's --syncbench-baseline), every site with its key."""
    import importlib.util
    root = pathlib.Path(__file__).resolve().parents[2]
    spec = importlib.util.spec_from_file_location(
        "sb_baseline", root / "python" / "syncbench" / "_baseline.py")
    bl = tmp_path / "syncs.ini"
    update(tmp_path, loop(tmp_path), bl, "--range", "train_step")
    try:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
    except ImportError:  # a relative import of the package: load it as the package does
        import sys
        sys.path.insert(0, str(root / "python"))
        from syncbench import _baseline as mod
    base = mod.load(bl, plugin=False)
    texts = sorted(s.text for s in base.sites)
    assert texts == ["acc = x.max().item()", "loss = x.sum().item()"], texts
