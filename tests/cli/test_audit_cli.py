"""`syncbench audit` where no GPU is needed: usage errors (exit 2, one line), a command that is
not found (127) or not executable (126), CMD's exit status and signal passed through, a command
that never initializes CUDA (exit 0, said so; empty reports), and the CUPTI injection library's
entry point."""
import csv
import json
import os
import re
import subprocess

import pytest

from conftest import AUDIT_CSV_COLUMNS, BIN, NO_GPU, ROOT, assert_usage_error, run

AUDIT_LIB = os.environ.get("SYNCBENCH_AUDIT_LIB", str(ROOT / "build" / "libsyncbench_audit.so"))
CSV_COLUMNS = AUDIT_CSV_COLUMNS


def audit(*args, env=None, **kw):
    return run("audit", *args, env=env, timeout=120, **kw)


@pytest.mark.parametrize("args", [
    (),                                    # no command at all
    ("--",),                               # nothing after --
    ("--max-syncs", "3"),                  # options but no command
    ("--bogus", "--", "/bin/true"),        # unknown option
    ("--max-syncs", "x", "--", "/bin/true"),
    ("--max-syncs", "-1", "--", "/bin/true"),
    ("--max-syncs", "", "--", "/bin/true"),
    ("--top", "x", "--", "/bin/true"),
    ("--depth", "x", "--", "/bin/true"),
    ("--range", "train_step", "--", "/bin/true"),  # --range without --max-syncs: nothing to gate
    ("--csv",),                            # an option missing its value
    ("--max-syncs", "1", "--range", "x" * 512, "--", "/bin/true"),  # longer than names are kept
    ("--range", "", "--max-syncs", "1", "--", "/bin/true"),
])
def test_usage_errors(args):
    r = audit(*args, env=NO_GPU)
    assert_usage_error(r, "")


def test_help():
    r = audit("--help")
    assert r.returncode == 0, r.stderr
    text = r.stdout + r.stderr
    for opt in ("--max-syncs", "--range", "--top", "--csv", "--json", "--trace", "--keep",
                "--depth", "--quiet"):
        assert opt in text, opt


def test_command_not_found():
    r = audit("--", "/nonexistent/cmd", env=NO_GPU)
    assert r.returncode == 127, r.stderr
    assert "/nonexistent/cmd" in r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_command_not_executable(tmp_path):
    f = tmp_path / "script.sh"
    f.write_text("#!/bin/sh\nexit 0\n")
    os.chmod(f, 0o644)
    r = audit("--", f, env=NO_GPU)
    assert r.returncode == 126, r.stderr
    assert str(f) in r.stderr
    assert len(r.stderr.splitlines()) == 1, r.stderr


def test_no_cuda_command(tmp_path):
    csv_path, json_path = tmp_path / "a.csv", tmp_path / "a.json"
    r = audit("--csv", csv_path, "--json", json_path, "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    assert re.search(r"never initiali[sz]ed", r.stderr, re.IGNORECASE), r.stderr
    with open(csv_path, newline="") as f:
        assert f.readline().strip() == CSV_COLUMNS
        assert list(csv.reader(f)) == []
    rep = json.loads(json_path.read_text())
    assert rep["tool"] == "syncbench audit" and rep["format"] == 1
    assert rep["processes"] == [] and rep["rows"] == [] and rep["gate"] is None
    assert "/bin/true" in json.dumps(rep["command"])


def test_no_cuda_fails_a_gate_unless_allowed():
    """A gate that watched nothing does not pass (issue 47, item 7): a CI job whose GPU went
    missing must not go green; --allow-no-cuda asks for that pass."""
    r = audit("--max-syncs", "0", "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 1, r.stderr
    assert "audit gate: FAILED: no process initialized CUDA" in r.stderr
    r = audit("--max-syncs", "0", "--allow-no-cuda", "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 0, r.stderr


def test_a_range_gate_fails_when_the_range_was_never_entered():
    """A gate that checked nothing must not pass: a command that never uses CUDA never entered
    the range either."""
    r = audit("--max-syncs", "0", "--range", "train_step", "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 1, r.stderr
    assert "no process initialized CUDA" in r.stderr
    r = audit("--max-syncs", "0", "--range", "train_step", "--allow-no-cuda", "--", "/bin/true",
              env=NO_GPU)
    assert r.returncode == 1, r.stderr
    assert "never entered" in r.stderr


@pytest.mark.parametrize("first,second", [
    ("{d}/a.csv", "{d}/./a.csv"),
    ("-", "/dev/stdout"),
])
def test_two_outputs_to_one_file_are_refused(tmp_path, first, second):
    r = audit("--csv", first.format(d=tmp_path), "--json", second.format(d=tmp_path), "--",
              "sh", "-c", "echo ran", env=NO_GPU)
    assert_usage_error(r, "write the same file")


def test_keep_refuses_a_folder_with_records(tmp_path):
    """Every proc-*.jsonl in the folder is read: an earlier audit's records would be counted
    again, so such a folder is refused before CMD runs."""
    (tmp_path / "proc-123.jsonl").write_text('{"t":"proc","pid":123}\n')
    r = audit("--keep", tmp_path, "--", "sh", "-c", "echo ran", env=NO_GPU)
    assert_usage_error(r, "holds an earlier audit's records")
    empty = tmp_path / "new"
    r = audit("--keep", empty, "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    assert empty.is_dir()


def test_sigterm_reaches_every_process_of_the_run(tmp_path):
    """SIGTERM to the audit goes to CMD and to what CMD started, so a CI job's timeout stops
    the whole tree; the audit then reports and exits with CMD's status."""
    marker = tmp_path / "pids"
    p = subprocess.Popen([BIN, "audit", "-q", "--", "sh", "-c",
                          f"sleep 30 & echo $! > {marker}; wait"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(100):
        if marker.exists() and marker.read_text().strip():
            break
        subprocess.run(["sleep", "0.05"])
    child = int(marker.read_text())
    p.terminate()
    out, err = p.communicate(timeout=20)
    assert p.returncode == 143, err
    assert not os.path.exists(f"/proc/{child}") or open(f"/proc/{child}/stat").read().split()[2] == "Z"


def test_csv_to_stdout():
    r = audit("--csv", "-", "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [CSV_COLUMNS]


def test_exit_status_passed_through():
    r = audit("--", "sh", "-c", "exit 5", env=NO_GPU)
    assert r.returncode == 5, r.stderr
    # a gate that passes leaves CMD's failure as it is
    r = audit("--max-syncs", "0", "--", "sh", "-c", "exit 5", env=NO_GPU)
    assert r.returncode == 5, r.stderr


def test_cmd_output_and_arguments_untouched():
    r = audit("-q", "--", "sh", "-c", 'printf "%s|" "$@"', "sh", "a b", "--max-syncs", "",
              env=NO_GPU)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "a b|--max-syncs||"


def test_killed_command():
    r = audit("--", "sh", "-c", "kill -TERM $$", env=NO_GPU)
    assert r.returncode == 128 + 15, r.stderr


def test_quiet():
    r = audit("-q", "--", "/bin/true", env=NO_GPU)
    assert r.returncode == 0
    assert r.stdout == "" and r.stderr == ""


def test_injection_library_exports_its_entry_point():
    assert os.path.exists(AUDIT_LIB), f"{AUDIT_LIB} not built"
    r = subprocess.run(["nm", "-D", "--defined-only", AUDIT_LIB], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert re.search(r"^\S+ T InitializeInjection$", r.stdout, re.MULTILINE), r.stdout[:2000]


def test_installed_layout_finds_its_library(tmp_path):
    """make install puts the library in PREFIX/lib/syncbench/, beside PREFIX/bin/syncbench: the
    binary finds it there with no SYNCBENCH_AUDIT_LIB; with neither, one line and exit 3."""
    import shutil
    bindir, libdir = tmp_path / "bin", tmp_path / "lib" / "syncbench"
    bindir.mkdir()
    shutil.copy(BIN, bindir / "syncbench")
    env = {k: v for k, v in os.environ.items() if k != "SYNCBENCH_AUDIT_LIB"}
    r = subprocess.run([bindir / "syncbench", "audit", "--", "/bin/true"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 3, r.stderr
    assert len(r.stderr.splitlines()) == 1 and "injection library" in r.stderr, r.stderr
    libdir.mkdir(parents=True)
    shutil.copy(AUDIT_LIB, libdir / "libsyncbench_audit.so")
    r = subprocess.run([bindir / "syncbench", "audit", "--", "/bin/true"], capture_output=True,
                       text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert re.search(r"never initiali[sz]ed", r.stderr)


def test_a_grandchild_whose_parent_lives_gets_sigterm_too(tmp_path):
    """The shell traps SIGTERM and stays; its sleep is a grandchild of the audit, not an
    orphan: it gets SIGTERM as well, so the run ends at once instead of after the sleep."""
    import time
    p = subprocess.Popen([BIN, "audit", "-q", "--", "sh", "-c",
                          'trap "echo trapped" TERM; sleep 30; echo end'],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    t0 = time.monotonic()
    p.terminate()
    out, err = p.communicate(timeout=20)
    assert time.monotonic() - t0 < 10, (out, err)
    assert "trapped" in out and "end" in out, (out, err)
    assert p.returncode == 0, err


def test_an_ignored_sighup_stays_ignored(tmp_path):
    """Under nohup (SIGHUP ignored) the audit neither catches nor passes SIGHUP on, and the
    command keeps the ignored disposition it would have had without the audit."""
    import time
    p = subprocess.Popen(["nohup", BIN, "audit", "-q", "--", "sleep", "1"], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.3)
    p.send_signal(1)  # SIGHUP
    out, err = p.communicate(timeout=20)
    assert p.returncode == 0, err


def test_a_command_killed_by_sigint_kills_the_audit_by_sigint():
    """As without the audit, a shell loop stops on Ctrl-C: the audit reports, then dies of the
    command's SIGINT. A command that exits 130 is an exit code, not an interruption."""
    r = audit("--", "sh", "-c", "kill -INT $$", env=NO_GPU)
    assert r.returncode == -2, r.stderr
    r = audit("-q", "--", "sh", "-c", "exit 130", env=NO_GPU)
    assert r.returncode == 130, r.stderr
    assert "interrupted" not in r.stderr


# ---- --from DIR: kept records reported again, nothing run -------------------------------------

def replay_records(folder):
    """A process recorded with --gpu-activity: 5 steps of a 100 us kernel and a stream sync."""
    folder.mkdir()
    lines = ['{"t":"proc","v":1,"pid":100,"ppid":1,"rank":-1,"local_rank":-1,"cmd":"app",'
             '"clock_ns":0,"mono_ns":0,"mode":"count","kernels":1,"launches":1}']
    for i in range(5):
        h, c = 112000 * i, 2 * i + 1
        lines += [f'{{"t":"api","api":"cudaLaunchKernel_v7000","dom":"rt","tid":1,"corr":{c},'
                  f'"start":{h},"end":{h + 2000}}}',
                  f'{{"t":"kernel","dev":0,"ctx":1,"stream":7,"corr":{c},"start":{h + 5000},'
                  f'"end":{h + 105000}}}',
                  f'{{"t":"call","api":"cudaStreamSynchronize_v3020","dom":"rt","tid":1,"ctx":1,'
                  f'"corr":{c + 1},"start":{h + 3000},"end":{h + 110000},"ranges":[],"stack":-1}}',
                  f'{{"t":"sync","type":"stream","ctx":1,"stream":7,"corr":{c + 1},"sync_id":-1,'
                  f'"start":{h + 3000},"end":{h + 110000}}}']
    lines.append('{"t":"end","clock_ns":600000,"mono_ns":600000,"why":"exit","dropped":0}')
    (folder / "proc-100.jsonl").write_text("\n".join(lines) + "\n")


def test_from_reports_kept_records_with_the_prediction(tmp_path):
    replay_records(tmp_path / "recs")
    j = tmp_path / "r.json"
    r = run("audit", "--from", tmp_path / "recs", "--json", j, "--max-syncs", "0")
    assert r.returncode == 1, r.stderr  # the gate: 5 syncs
    # a GPU-bound loop: 4 gaps of 11 us and the last wake-up, 5 us
    assert "removing all 5 syncs would save 0.049 ms of wall time" in r.stderr, r.stderr
    assert "then gpu-bound" in r.stderr
    assert "removing them would save 0.049 ms of wall time" in r.stderr
    pred = json.loads(j.read_text())["processes"][0]["predicted"]
    assert abs(pred["save_wall_us"] - 49) < 1e-6 and pred["bound"] == "gpu"


@pytest.mark.parametrize("args,message", [
    (("--from", "/nonexistent-records"), "--from /nonexistent-records: No such file"),
    (("--from", "/etc/passwd"), "--from /etc/passwd: not a folder"),
    (("--from", "/tmp", "--", "true"), "--from DIR reports kept records: no CMD"),
    (("--from", "/tmp", "--gpu-activity"), "recording options"),
])
def test_from_bad_input(args, message):
    assert_usage_error(run("audit", *args), message)
