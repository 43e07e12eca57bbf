"""CI that reads the verdicts (issue 37, docs/ci.md), no GPU: under GitHub Actions
(GITHUB_ACTIONS=true, a temporary GITHUB_STEP_SUMMARY) a failing audit gate annotates each
offending Python line and a regressing compare each REGRESSION, exactly; both append Markdown to
the step summary (never truncating it, never past GitHub's 1 MiB); --junit writes JUnit XML
that validates against the schema CI tools accept, with the right suites, cases, failures and
counts; --ci overrides the environment; bad --ci and --junit values are one line and exit 2
before anything runs; hostile names come out escaped."""
import os
import re
import subprocess

import pytest

from ci_records import Site, check_junit, write_records
from conftest import BIN, assert_usage_error, run
from synth_runs import noise, row, write_run
from test_escaping import raw_controls

ITEM_FIX = ("keep it on the GPU: accumulate and read every N steps (or once after the loop); "
            "several values: torch.stack them and read once (priced by: syncbench --scenario "
            "log-every)")
CPU_FIX = ("copy into a pinned buffer with non_blocking=True and read it after an event (double "
           "buffering), or keep the work on the GPU (priced by: syncbench --scenario "
           "double-buffer)")


def github(tmp_path, **extra):
    """The environment of a GitHub Actions step whose workspace is tmp_path/ws."""
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(tmp_path / "ws"),
           "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md")}
    env.update(extra)
    return env


def run_env(*args, env, cwd=None):
    """syncbench with exactly these CI variables (the rest of ours without any)."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")}
    full.update({k: v for k, v in env.items() if v is not None})
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, env=full,
                          timeout=300, cwd=cwd)


def gate_records(tmp_path, range_name=None):
    ws = tmp_path / "ws"
    return write_records(tmp_path / "K", [
        Site(ws / "train.py", 42, "step", "    loss = out.sum().item()", 3),
        Site(ws / "pkg" / "model.py", 7, "forward", "    host = x.cpu()", 2,
             native=["/usr/lib/libtorch_cpu.so", "at::native::_to_copy(at::Tensor const&)", 8, 9]),
        Site(None, 0, "", "", 1, native=["/opt/app/libsolver.so", "solver_wait", 64, 1]),
    ], range_name=range_name)


# ---- the audit's gate ----------------------------------------------------------------------

def test_a_failing_audit_gate_annotates_each_python_line(tmp_path):
    k = gate_records(tmp_path)
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "0", env=github(tmp_path))
    assert r.returncode == 1, r.stderr
    assert r.stdout.splitlines() == [
        "::error file=train.py,line=42,title=syncbench audit gate::3 blocking calls "
        "(sync-stream): scalar read: .item()%0Afix: " + ITEM_FIX,
        "::error file=pkg/model.py,line=7,title=syncbench audit gate::2 blocking calls "
        "(sync-stream): copy to host: .cpu()%0Afix: " + CPU_FIX,
    ]  # the native site (libsolver.so) gets none
    assert "audit gate: FAILED: 6 blocking calls, more than --max-syncs 0" in r.stderr


def test_a_range_gate_titles_its_annotations_with_the_range(tmp_path):
    k = gate_records(tmp_path, range_name="train_step")
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "0", "--range", "train_step",
                "--top", "1", env=github(tmp_path))
    assert r.returncode == 1, r.stderr
    assert r.stdout.splitlines() == [
        "::error file=train.py,line=42,title=syncbench audit gate%3A range train_step::3 "
        "blocking calls (sync-stream): scalar read: .item()%0Afix: " + ITEM_FIX]


def test_a_gate_failed_by_native_sites_only_annotates_its_verdict(tmp_path):
    k = write_records(tmp_path / "K", [Site(None, 0, "", "", 2, native=["/opt/libx.so", "w", 1,
                                                                        2])])
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "1", env=github(tmp_path))
    assert r.returncode == 1, r.stderr
    assert r.stdout == ("::error title=syncbench audit gate::audit gate: FAILED: 2 blocking "
                        "calls, more than --max-syncs 1\n")


def test_a_site_outside_the_workspace_is_named_in_its_message(tmp_path):
    k = gate_records(tmp_path)
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "0", "--top", "1",
                env=github(tmp_path, GITHUB_WORKSPACE=str(tmp_path / "elsewhere")),
                cwd=tmp_path / "K")
    assert r.returncode == 1, r.stderr
    assert r.stdout == (f"::error title=syncbench audit gate::{tmp_path}/ws/train.py:42 in step: "
                        "3 blocking calls (sync-stream): scalar read: .item()%0Afix: "
                        + ITEM_FIX + "\n")


def test_a_passing_gate_annotates_nothing_and_summarizes(tmp_path):
    k = gate_records(tmp_path)
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "6", env=github(tmp_path))
    assert r.returncode == 0, r.stderr
    assert r.stdout == ""
    md = (tmp_path / "summary.md").read_text()
    assert md.startswith("### syncbench audit: passed\n\n`python3 train.py`\n\n```text\n"
                         "audit gate: passed: 6 blocking calls (max 6)\n```\n"), md
    assert "| count |" not in md


def test_the_audit_summary_is_markdown_appended(tmp_path):
    k = gate_records(tmp_path)
    (tmp_path / "summary.md").write_text("## an earlier step's summary\n")
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "0", env=github(tmp_path),
                cwd=tmp_path / "ws")
    assert r.returncode == 1, r.stderr
    md = (tmp_path / "summary.md").read_text()
    head = ("## an earlier step's summary\n### syncbench audit: FAILED\n\n`python3 train.py`\n\n"
            "```text\naudit gate: FAILED: 6 blocking calls, more than --max-syncs 0\n"
            "  top sites:\n")
    assert md.startswith(head), md
    table = md[md.index("| count |"):].split("\n\n")[0].splitlines()
    assert table[:3] == [
        "| count | class | site | what | fix |",
        "| ---: | --- | --- | --- | --- |",
        "| 3 | sync-stream | train.py:42 in step | scalar read: .item() | "
        + ITEM_FIX.split(" (priced by")[0] + " |"], table
    assert table[4].startswith("| 1 | sync-stream | libsolver.so!solver_wait | "), table
    assert "\n<details><summary>The audit's report</summary>\n\n```text\nsyncbench audit: " \
           "python3 train.py (wall " in md
    assert md.endswith("```\n\n</details>\n"), md[-200:]


def test_no_gate_still_summarizes_the_table(tmp_path):
    k = gate_records(tmp_path)
    r = run_env("audit", "-q", "--from", k, env=github(tmp_path))
    assert r.returncode == 0 and r.stdout == "", r.stderr
    md = (tmp_path / "summary.md").read_text()
    assert md.startswith("### syncbench audit\n\n`python3 train.py`\n\n```text\nsyncbench audit:")


def test_without_a_summary_file_it_is_skipped_quietly(tmp_path):
    k = gate_records(tmp_path)
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "0",
                env=github(tmp_path, GITHUB_STEP_SUMMARY=None))
    assert r.returncode == 1
    assert len(r.stdout.splitlines()) == 2
    assert "warning" not in r.stderr and "GITHUB_STEP_SUMMARY" not in r.stderr, r.stderr


def test_an_unwritable_summary_is_a_warning_not_a_failure(tmp_path):
    k = gate_records(tmp_path)
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "6",
                env=github(tmp_path, GITHUB_STEP_SUMMARY=str(tmp_path / "no" / "such.md")))
    assert r.returncode == 0, r.stderr
    assert "syncbench: warning: GITHUB_STEP_SUMMARY " in r.stderr, r.stderr


@pytest.mark.parametrize("env,ci,annotated", [
    ({}, None, False),                            # not under GitHub Actions: off
    ({}, "github", True),                         # asked for
    ({"GITHUB_ACTIONS": "true"}, "none", False),  # turned off
    ({"GITHUB_ACTIONS": "false"}, None, False),
])
def test_ci_overrides_the_environment(tmp_path, env, ci, annotated):
    k = gate_records(tmp_path)
    summary = tmp_path / "summary.md"
    base = {"GITHUB_WORKSPACE": str(tmp_path / "ws"), "GITHUB_STEP_SUMMARY": str(summary)}
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "0", *(["--ci", ci] if ci else []),
                env={**base, **env})
    assert r.returncode == 1, r.stderr
    assert r.stdout.startswith("::error file=train.py,line=42,") == annotated, r.stdout
    assert summary.exists() == annotated
    c = compare_runs(tmp_path)
    r = run_env("compare", *c, "-q", *(["--ci", ci] if ci else []), env={**base, **env})
    assert r.returncode == 1
    assert ("::error title=" in r.stdout) == annotated, r.stdout


def test_annotations_leave_a_report_on_stdout_whole(tmp_path):
    """--json - takes stdout: the annotations go to stderr (the runner reads both)."""
    k = gate_records(tmp_path)
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "0", "--json", "-",
                env=github(tmp_path))
    assert r.returncode == 1
    assert r.stdout.startswith("{") and "::error" not in r.stdout
    assert "\n::error file=train.py,line=42," in "\n" + r.stderr


# ---- compare -------------------------------------------------------------------------------

P = "m=512;n=512;k=512;dtype=fp16;tf32=0"
GEMM = ("small-gemm", "sync-stream", P, "kernel_us")
COPY = ("copy", "h2d-pinned", "bytes=64MiB", "GBps")
WAIT = ("readback", "pending-pinned", "pending_us=1000", "wait_us")


def compare_runs(tmp_path, names=(GEMM, COPY, WAIT)):
    """A regression (the GEMM, +10 %), a row the same, an inconclusive one (a huge spread)."""
    gemm, copy, wait = names
    base = write_run(tmp_path / "base", [
        row(*gemm, "lower", noise(100, 0.01, seed=1)),
        row(*copy, "higher", noise(50, 0.01, seed=2)),
        row(*wait, "lower", noise(100, 0.8, seed=3))], run_id="rb")
    cur = write_run(tmp_path / "cur", [
        row(*gemm, "lower", noise(110, 0.01, seed=11)),
        row(*copy, "higher", noise(50, 0.01, seed=12)),
        row(*wait, "lower", noise(100, 0.8, seed=13))], run_id="rc")
    return base, cur


REGRESSION_LINE = (
    "::error title=syncbench compare%3A small-gemm sync-stream kernel_us::REGRESSION: kernel_us "
    "99.87 -> 110.0 us, +10.18 %25 (99 %25 CI [+9.85, +10.81] %25, threshold 5 %25); params "
    + P)
INCONCLUSIVE_TEXT = (
    "inconclusive: wait_us 110.8 -> 107.6 us, -2.88 %25 (99 %25 CI [-39.83, +59.22] %25, "
    "threshold 5 %25); params pending_us=1000%0Athe samples neither show nor exclude a change of "
    "the threshold's size: measure again with more repetitions (syncbench --min-reps N)")


def test_a_regressing_compare_annotates_each_regression(tmp_path):
    base, cur = compare_runs(tmp_path)
    r = run_env("compare", base, cur, "-q", env=github(tmp_path))
    assert r.returncode == 1, r.stderr
    lines = r.stdout.splitlines()
    assert lines[-2:] == [
        REGRESSION_LINE,
        "::warning title=syncbench compare%3A readback pending-pinned wait_us::"
        + INCONCLUSIVE_TEXT], lines
    r = run_env("compare", base, cur, "-q", "--strict", env=github(tmp_path))
    assert r.stdout.splitlines()[-1] == ("::error title=syncbench compare%3A readback "
                                         "pending-pinned wait_us::" + INCONCLUSIVE_TEXT)


def test_a_clean_compare_annotates_nothing(tmp_path):
    base, _ = compare_runs(tmp_path)
    r = run_env("compare", base, base, "-q", env=github(tmp_path))
    assert r.returncode == 0 and "::" not in r.stdout, r.stdout


def test_the_compare_summary_is_its_markdown_appended(tmp_path):
    base, cur = compare_runs(tmp_path)
    summary = tmp_path / "summary.md"
    summary.write_text("earlier\n")
    r = run_env("compare", base, cur, "--markdown", tmp_path / "cmp.md", env=github(tmp_path))
    assert r.returncode == 1
    md = (tmp_path / "cmp.md").read_text()
    assert summary.read_text() == "earlier\n" + md
    assert md.startswith("### syncbench compare\n\nbaseline `")
    assert (f"| small-gemm | sync-stream | {P} | kernel_us | 99.87 | 110.0 | +10.18 | "
            "[+9.85,+10.81] | **REGRESSION** |") in md.splitlines()
    assert "\ncompare: 3 rows: 1 REGRESSION, 0 slower, 0 faster, 1 same, " in md


def test_the_summary_never_passes_github_s_limit(tmp_path):
    """Appended to a summary 1 MiB less 300 bytes long: cut at a line with a note, the file
    at most 1 MiB, what was there untouched."""
    base, cur = compare_runs(tmp_path)
    summary = tmp_path / "summary.md"
    earlier = ("x" * 99 + "\n") * ((1 << 20) // 100 - 3)
    summary.write_text(earlier)
    r = run_env("compare", base, cur, "-q", env=github(tmp_path))
    assert r.returncode == 1
    text = summary.read_text()
    assert len(text.encode()) <= 1 << 20
    assert text.startswith(earlier) and len(text) > len(earlier)
    assert text.endswith("> syncbench: the rest of this summary was cut here: GitHub keeps at "
                         "most 1 MiB of summary per step.\n"), text[len(earlier):]
    summary.write_text("x" * ((1 << 20) - 10))  # no room even for the note: left as it is
    r = run_env("compare", base, cur, "-q", env=github(tmp_path))
    assert len(summary.read_bytes()) == (1 << 20) - 10
    assert "GITHUB_STEP_SUMMARY" in r.stderr and "1 MiB" in r.stderr


# ---- JUnit ---------------------------------------------------------------------------------

def test_compare_junit_has_a_case_per_row(tmp_path):
    base, cur = compare_runs(tmp_path)
    out = tmp_path / "compare.xml"
    r = run("compare", base, cur, "-q", "--junit", out)
    assert r.returncode == 1, r.stderr
    cases = check_junit(out)
    assert {k: v[0] for k, v in cases.items()} == {
        ("small-gemm", f"sync-stream {P} kernel_us"): "failed",
        ("copy", "h2d-pinned bytes=64MiB GBps"): "passed",
        ("readback", "pending-pinned pending_us=1000 wait_us"): "skipped"}
    fail = cases[("small-gemm", f"sync-stream {P} kernel_us")][1]
    assert fail.get("type") == "REGRESSION"
    assert fail.get("message") == REGRESSION_LINE.split("::")[-1].replace("%25", "%")
    skip = cases[("readback", "pending-pinned pending_us=1000 wait_us")][1]
    assert skip.get("message").startswith("inconclusive: the samples neither show nor exclude")
    assert "-2.88 %" in skip.text and "base.csv" in skip.text
    r = run("compare", base, cur, "-q", "--strict", "--junit", out)
    strict = check_junit(out)
    assert strict[("readback", "pending-pinned pending_us=1000 wait_us")][0] == "failed"


def test_audit_junit_has_a_case_for_the_gate(tmp_path):
    k = gate_records(tmp_path, range_name="train_step")
    out = tmp_path / "audit.xml"
    r = run("audit", "-q", "--from", k, "--max-syncs", "0", "--range", "train_step",
            "--junit", out, cwd=tmp_path / "ws")
    assert r.returncode == 1, r.stderr
    cases = check_junit(out)
    assert list(cases) == [("syncbench audit", "range train_step")]
    verdict, fail = cases[("syncbench audit", "range train_step")]
    assert verdict == "failed" and fail.get("type") == "max-syncs"
    assert fail.get("message") == ("audit gate: FAILED: 6 of 6 instances of range 'train_step' "
                                   "made more than 0 blocking calls; the worst: pid 7, 1")
    body = fail.text
    for line in ("train.py:42 in step", "3 blocking calls (sync-stream): scalar read: .item()",
                 "fix: " + ITEM_FIX, "pkg/model.py:7 in forward",
                 "libsolver.so!solver_wait", "1 blocking call (sync-stream): explicit sync: "):
        assert any(x.startswith(line) for x in body.splitlines()), (line, body)
    r = run("audit", "-q", "--from", k, "--max-syncs", "6", "--junit", out)
    assert r.returncode == 0, r.stderr
    cases = check_junit(out)
    assert list(cases.values())[0][0] == "passed"
    assert list(cases)[0] == ("syncbench audit", "run python3 train.py")


def test_the_junit_check_catches_wrong_files(tmp_path):
    """The checks themselves: a count off by one, a failure without its message in the body, a
    time that is not a number, an element the format has not: each is caught."""
    base, cur = compare_runs(tmp_path)
    good = tmp_path / "good.xml"
    run("compare", base, cur, "-q", "--junit", good)
    check_junit(good)
    text = good.read_text()
    bad = [text.replace('tests="3" failures="1"', 'tests="3" failures="2"', 1),
           text.replace('skipped="1" time', 'skipped="0" time'),
           re.sub(r'(<failure [^>]*>)REGRESSION', r'\1', text),
           text.replace('time="0.000"', 'time="soon"', 1),
           text.replace("<skipped ", "<skip ").replace("</skipped>", "</skip>"),
           text.replace('classname="copy" name="h2d-pinned bytes=64MiB GBps"',
                        f'classname="small-gemm" name="sync-stream {P} kernel_us"')]
    for i, t in enumerate(bad):
        path = tmp_path / f"bad{i}.xml"
        path.write_text(t)
        with pytest.raises(AssertionError):
            check_junit(path)


# ---- bad input: one line, exit 2, nothing run ----------------------------------------------

@pytest.mark.parametrize("args,message", [
    (["--ci", "foo"], "audit: --ci foo: expected github or none"),
    (["--max-syncs", "0", "--junit", "no/such/a.xml"], "--junit no/such/a.xml: folder 'no/such' "
                                                       "does not exist"),
    (["--junit", "a.xml"], "audit: --junit needs --max-syncs N (the gate it reports)"),
    (["--max-syncs", "0", "--junit", "out.json", "--json", "out.json"],
     "audit: --json out.json and --junit out.json write the same file"),
    (["--max-syncs", "0", "--junit", "ran.sh"], "--junit ran.sh: is also an input"),
    (["--max-syncs", "0", "--keep", "D", "--junit", "D/a.xml"], "is in the --keep folder"),
])
def test_bad_ci_options_stop_the_audit_before_its_command(tmp_path, args, message):
    (tmp_path / "D").mkdir()
    (tmp_path / "ran.sh").write_text("#!/bin/sh\ntouch ran.txt\n")
    (tmp_path / "ran.sh").chmod(0o755)
    r = run("audit", *args, "--", "./ran.sh", cwd=tmp_path)
    assert_usage_error(r, message)
    assert not (tmp_path / "ran.txt").exists()


def test_a_junit_path_in_the_from_folder_is_refused(tmp_path):
    k = gate_records(tmp_path)
    before = sorted(p.name for p in k.iterdir())
    assert_usage_error(run("audit", "--from", k, "--max-syncs", "0", "--junit", k / "j.xml"),
                       "is in the --from folder")
    assert sorted(p.name for p in k.iterdir()) == before


@pytest.mark.parametrize("args,message", [
    (["--ci", "foo"], "compare: --ci foo: expected github or none"),
    (["--ci"], "--ci"),
    (["--junit", "no/such/c.xml"], "--junit no/such/c.xml: folder 'no/such' does not exist"),
    (["--junit", "{base}"], "is also an input"),
    (["--junit", "{out}", "--markdown", "{out}"], "same file as --markdown"),
])
def test_bad_ci_options_of_compare(tmp_path, args, message):
    base, cur = compare_runs(tmp_path)
    args = [a.format(base=base, out=tmp_path / "o.xml") for a in args]
    r = run("compare", base, cur, *args, env={"CUDA_VISIBLE_DEVICES": ""}, cwd=tmp_path)
    assert_usage_error(r, message)


def test_the_merge_refuses_the_ci_options(tmp_path):
    assert_usage_error(run("audit", "--merge", "a.json", "b.json", "--junit", "j.xml"),
                       "--merge: --junit does not apply")


# ---- hostile names -------------------------------------------------------------------------

HOSTILE = "we%ird,na:me\n\x1b[31m\x07\u009b"
HOSTILE_PROPERTY = "we%25ird%2Cna%3Ame%0A\\x1b[31m\\x07\\xc2\\x9b"
HOSTILE_DATA = "we%25ird,na:me%0A\\x1b[31m\\x07\\xc2\\x9b"


def test_hostile_file_and_range_names_come_out_escaped(tmp_path):
    ws = tmp_path / "ws"
    k = write_records(tmp_path / "K", [
        Site(ws / (HOSTILE + ".py"), 42, "st,ep", "loss.item()", 2)], range_name=HOSTILE)
    junit = tmp_path / "j.xml"
    r = run_env("audit", "-q", "--from", k, "--max-syncs", "0", "--range", HOSTILE,
                "--junit", junit, env=github(tmp_path))
    assert r.returncode == 1, r.stderr
    assert r.stdout == (f"::error file={HOSTILE_PROPERTY}.py,line=42,title=syncbench audit gate"
                        f"%3A range {HOSTILE_PROPERTY}::2 blocking calls (sync-stream): scalar "
                        f"read: .item()%0Afix: {ITEM_FIX}\n")
    assert not raw_controls((r.stdout + r.stderr).encode())
    md = (tmp_path / "summary.md").read_bytes()
    assert not raw_controls(md.replace(b"\n", b" ")) and b"\\x1b[31m" in md
    cases = check_junit(junit)
    (name, fail), = [(k[1], v[1]) for k, v in cases.items()]
    assert name == "range we%ird,na:me\n\\x1b[31m\\x07\\xc2\\x9b"
    assert not raw_controls(junit.read_bytes().replace(b"\n", b" "))


def test_hostile_compare_names_come_out_escaped(tmp_path):
    # a CSV field of synth_runs is not quoted: no comma, no line break in it
    names = ((HOSTILE.replace(",", ";").replace("\n", "") + "gemm", "v", "p=1", "kernel_us"),
             ("copy", "h2d", "bytes=1", "GBps"), ("rb", "w", "q=1", "wait_us"))
    base, cur = compare_runs(tmp_path, names)
    junit = tmp_path / "c.xml"
    r = run_env("compare", base, cur, "-q", "--junit", junit, env=github(tmp_path))
    assert r.returncode == 1, r.stderr
    title = HOSTILE_PROPERTY.replace("%2C", ";").replace("%0A", "")
    assert f"::error title=syncbench compare%3A {title}gemm v kernel_us::REGRESSION: " \
           in r.stdout, r.stdout
    assert not raw_controls(r.stdout.encode())
    check_junit(junit)
    assert not raw_controls(junit.read_bytes().replace(b"\n", b" "))
    assert not raw_controls((tmp_path / "summary.md").read_bytes().replace(b"\n", b" "))


# ---- the pytest plugin ---------------------------------------------------------------------

PLUGIN_TEST = """
    import syncbench
    from syncbench import _naming

    class Block:  # what a closed no_syncs block hands SyncError: its sites, named by the audit
        def __init__(self, sites):
            self.sites = sites

    def test_step():
        raise syncbench.SyncError("host-blocking CUDA calls", Block(_naming.sites_of({stream!r})))

    def test_clean():
        pass
"""


def plugin_run(tmp_path, stream, env):
    from test_python_package import NO_DEVICE, pytest_run
    (tmp_path / "t").mkdir()
    path = f"{os.path.dirname(os.path.abspath(BIN))}:{os.environ.get('PATH', '')}"
    return pytest_run(tmp_path / "t", PLUGIN_TEST.format(stream=stream),
                      env={**NO_DEVICE, **env, "PATH": path})  # the analyzer on PATH


def test_the_pytest_plugin_annotates_as_the_audit_does(tmp_path):
    """A test failed by SyncError annotates each Python line of its sites under GitHub Actions:
    the same file, line, message and escaping as `syncbench audit`'s (a hostile file name
    included), its title naming the test; none for the native site."""
    ws = tmp_path / "ws"
    k = write_records(tmp_path / "K", [
        Site(ws / (HOSTILE + ".py"), 42, "step", "loss.item()", 2),
        Site(ws / "pkg" / "model.py", 7, "forward", "host = x.cpu()", 1,
             native=["/usr/lib/libtorch_cpu.so", "at::native::_to_copy(at::Tensor const&)", 8, 9]),
        Site(None, 0, "", "", 1, native=["/opt/app/libsolver.so", "solver_wait", 64, 1])])
    audit = run_env("audit", "-q", "--from", k, "--max-syncs", "0", env=github(tmp_path))
    assert audit.returncode == 1 and len(audit.stdout.splitlines()) == 2, audit.stdout
    r = plugin_run(tmp_path, (k / "proc-7.jsonl").read_bytes(), github(tmp_path))
    assert r.returncode == 1 and "1 failed, 1 passed" in r.stdout, r.stdout + r.stderr
    title = "title=syncbench no_syncs%3A test_inner.py%3A%3Atest_step::"
    got = [line for line in r.stdout.splitlines() if line.startswith("::")]
    assert got == [line.replace("title=syncbench audit gate::", title)
                   for line in audit.stdout.splitlines()], (got, audit.stdout)
    assert got[0].startswith(f"::error file={HOSTILE_PROPERTY}.py,line=42,")
    assert not raw_controls(r.stdout.encode())


def test_the_pytest_plugin_annotates_only_under_github_actions(tmp_path):
    k = write_records(tmp_path / "K", [Site(tmp_path / "ws" / "a.py", 3, "f", "x.item()", 1)])
    r = plugin_run(tmp_path, (k / "proc-7.jsonl").read_bytes(), {"GITHUB_ACTIONS": "false"})
    assert r.returncode == 1 and "1 failed, 1 passed" in r.stdout, r.stdout + r.stderr
    assert "::error" not in r.stdout


def test_the_python_escaper_is_the_c_one(tmp_path):
    """syncbench._text.workflow_escape against sb_gh_escape: compare's title (a property) and
    message (data) of a regression whose scenario and params hold every kind of piece a CSV
    field can (%, :, C0, DEL, C1, a character kept), and the hard-coded form of the rest (\\r,
    \\n, ,), which test_hostile_file_and_range_names_come_out_escaped holds the C side to."""
    from test_python_package import py
    scenario, params = "a%b:d\x1b[1m\x7f\u0085\u00e9", "p=a%b:c\x07"
    names = ((scenario, "v", params, "kernel_us"), COPY, WAIT)
    base, cur = compare_runs(tmp_path, names)
    c = run_env("compare", base, cur, "-q", env=github(tmp_path))
    line = [x for x in c.stdout.splitlines() if x.startswith("::error")][0]
    title, message = line[len("::error title="):].split("::", 1)
    r = py(f"""
        from syncbench._text import workflow_escape
        print(workflow_escape({"syncbench compare: " + scenario + " v kernel_us"!r}, prop=True))
        print(workflow_escape({params!r}))
        print(workflow_escape("a%b\\rc\\nd,e:f", prop=True))
    """)
    assert r.returncode == 0, r.stderr
    want_title, want_params, rest = r.stdout.splitlines()
    assert title == want_title and message.endswith("; params " + want_params), (line, r.stdout)
    assert "\\x1b[1m\\x7f\\xc2\\x85\u00e9" in title
    assert rest == "a%25b%0Dc%0Ad%2Ce%3Af"


# ---- the audit's --markdown (one writer file and one registry row) ---------------------------

def test_the_audit_writes_its_report_as_a_markdown_table(tmp_path):
    k = gate_records(tmp_path)
    out = tmp_path / "audit.md"
    r = run_env("audit", "-q", "--from", k, "--markdown", str(out), "--ci", "none",
                env=dict(os.environ))
    assert r.returncode == 0, r.stderr
    text = out.read_text()
    assert text.startswith("### syncbench audit\n\n`")
    lines = text.splitlines()
    head = next(i for i, line in enumerate(lines) if line.startswith("| pid"))
    assert [c.strip() for c in lines[head].strip("|").split("|")] == [
        "pid", "class", "site", "calls", "blocked ms", "saving ms", "operation", "fix"]
    body = lines[head + 2:]
    assert len(body) == 3
    assert any("train.py:42" in row and "scalar read: .item()" in row for row in body)
    assert not (tmp_path / "audit.md.partial").exists()


# ---- log injection (issue 47 item 9) -------------------------------------------------------

STOP = "::stop-commands::tok"
OWN_COMMAND = re.compile(r"::(error|warning)( [^:]*)?::")


def assert_no_injection(text):
    """No line begins with `::` but syncbench's own `::error`/`::warning`, whose properties
    carry no raw `:` (the title's text escaped): outside text never starts a line, so that
    GitHub runs nothing of it (`::stop-commands::tok` would silence every command after it)."""
    for line in text.splitlines():
        if line.startswith("::"):
            assert OWN_COMMAND.match(line), line


@pytest.mark.parametrize("out", [[], ["--verdicts", "-"], ["--junit", "-"],
                                 ["--markdown", "-"]])
def test_compare_names_cannot_inject_workflow_commands(tmp_path, out):
    names = ((STOP, STOP, "p=1", "kernel_us"), ("copy", "h2d", "bytes=1", "GBps"),
             (STOP + "rb", STOP + "w", "q=1", "wait_us"))
    base, cur = compare_runs(tmp_path, names)
    r = run_env("compare", base, cur, *out, env=github(tmp_path), cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert_no_injection(r.stdout)
    assert_no_injection(r.stderr)
    assert STOP in r.stdout  # the names are there, only never at a line's start
    own = [x for x in r.stdout.splitlines() if x.startswith("::")]
    assert [x.split("::")[1] for x in own] == ["error title=syncbench compare%3A %3A%3Astop-"
                                               "commands%3A%3Atok %3A%3Astop-commands%3A%3Atok "
                                               "kernel_us",
                                               "warning title=syncbench compare%3A %3A%3Astop-"
                                               "commands%3A%3Atokrb %3A%3Astop-commands%3A%3Atokw "
                                               "wait_us"], own


@pytest.mark.parametrize("out", [[], ["--csv", "-"], ["--junit", "-"], ["--markdown", "-"],
                                 ["--json", "-"]])
def test_audit_names_cannot_inject_workflow_commands(tmp_path, out):
    ws = tmp_path / "ws"
    k = write_records(tmp_path / "K", [
        Site(ws / (STOP + ".py"), 42, STOP, STOP, 2),
        Site(None, 0, "", "", 1, native=[STOP + ".so", STOP, 64, 1])], range_name=STOP, cmd=STOP)
    r = run_env("audit", "--from", k, "--max-syncs", "0", "--range", STOP, *out,
                env=github(tmp_path), cwd=tmp_path)
    assert r.returncode == 1, r.stderr
    assert_no_injection(r.stdout)
    assert_no_injection(r.stderr)
    assert STOP in r.stdout + r.stderr
    own = [x for x in (r.stdout + r.stderr).splitlines() if x.startswith("::")]
    assert own and all(x.startswith("::error file=%3A%3Astop-commands%3A%3Atok.py,line=42,title="
                                    "syncbench audit gate%3A range %3A%3Astop-commands") for x
                       in own), own
