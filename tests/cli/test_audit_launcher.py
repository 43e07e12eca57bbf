"""`syncbench audit`'s launcher without a GPU: tests/inject/fake_cuda stands in for a CUDA
program (it initializes the injection library as the driver would), so what the launcher does
with the records is tested here: the record folder is absolute, records that could not be
written fail the gate, only CUDA processes are waited for, outputs never overwrite CMD's
inputs."""
import json
import os
import subprocess
import time

import pytest

from conftest import BIN, ROOT, assert_usage_error, require_built, run

FAKE = str(ROOT / "build" / "tests" / "fake_cuda")
# A CUPTI that accepts the subscription (tests/inject/fake_cupti.c): the real one refuses on a
# machine without a driver, and a process it refuses is not watched (the gate fails).
FAKE_CUPTI = ROOT / "build" / "tests" / "fake-cupti"


@pytest.fixture(scope="module", autouse=True)
def fake_built():
    require_built(FAKE, FAKE_CUPTI / "libcupti.so.13")


def with_fake_cupti():
    old = os.environ.get("LD_LIBRARY_PATH")
    return {"LD_LIBRARY_PATH": str(FAKE_CUPTI) + (":" + old if old else "")}


def audit(*args, cwd=None, timeout=120, cupti="fake"):
    """cupti="fake": CUPTI accepts the subscription; "real": this machine's own CUPTI."""
    env = with_fake_cupti() if cupti == "fake" else None
    return run("audit", *args, cwd=cwd, timeout=timeout, env=env)


def procs(json_path):
    return json.loads(json_path.read_text())["processes"]


def test_a_fake_cuda_process_is_recorded_whole(tmp_path):
    """The stand-in itself: one process, records complete, the gate passes."""
    j = tmp_path / "a.json"
    r = audit("--json", j, "--max-syncs", "0", "--", FAKE)
    assert r.returncode == 0, r.stderr
    (p,) = procs(j)
    assert p["records_incomplete"] is None and p["complete"], p
    assert "audit gate: passed" in r.stderr


def test_relative_keep_with_a_command_that_changes_folder(tmp_path):
    """--keep recs with `cd model && prog`: the records land in ./recs, not model/recs, and
    the report sees the process (a relative folder handed on as typed lost them)."""
    (tmp_path / "model").mkdir()
    j = tmp_path / "a.json"
    r = audit("--keep", "recs", "--json", j, "--max-syncs", "0", "--",
              "sh", "-c", f"cd model && {FAKE}", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    kept = list((tmp_path / "recs").glob("proc-*.jsonl"))
    assert len(kept) == 1, r.stderr
    assert not (tmp_path / "model" / "recs").exists()
    assert len(procs(j)) == 1


def test_records_the_disk_refused_fail_the_gate(tmp_path):
    """A full disk (here: a file size limit of 0 with SIGXFSZ ignored, so write(2) fails with
    EFBIG as on ENOSPC): the file holds nothing, the launcher hears the lines were lost, the
    report says so and the gate fails (it passed with "no end record")."""
    j = tmp_path / "a.json"
    r = audit("--keep", tmp_path / "recs", "--json", j, "--max-syncs", "100", "--",
              "sh", "-c", f"trap '' XFSZ; ulimit -f 0; exec {FAKE}")
    assert r.returncode == 1, r.stderr
    assert "records incomplete" in r.stderr and "could not be written" in r.stderr, r.stderr
    assert "audit gate: FAILED" in r.stderr
    (p,) = procs(j)
    assert p["lost_lines"] >= 2 and p["records_incomplete"], p


def test_a_record_file_that_cannot_be_created_fails_the_gate(tmp_path):
    """The records folder made unwritable under the program (it removes it): the process is
    heard, reported as unrecorded, and the gate fails instead of "never initialized CUDA"."""
    recs = tmp_path / "recs"
    j = tmp_path / "a.json"
    r = audit("--keep", recs, "--json", j, "--max-syncs", "0", "--",
              "sh", "-c", f"rmdir {recs} && {FAKE}")
    assert r.returncode == 1, r.stderr
    assert "never initialized CUDA" not in r.stderr
    assert "could not be created" in r.stderr, r.stderr
    (p,) = procs(j)
    assert p["records_incomplete"].startswith("its record file could not be created"), p


def test_killed_process_fails_the_gate(tmp_path):
    """SIGKILL leaves no end record: the counts are a lower bound, the gate cannot pass."""
    r = audit("--max-syncs", "100", "--", "sh", "-c", f"{FAKE} 30 & sleep 1; kill -9 $!")
    assert r.returncode == 1, r.stderr
    assert "records incomplete" in r.stderr and "audit gate: FAILED" in r.stderr


def test_no_wait_for_processes_that_never_used_cuda(tmp_path):
    """`sh -c 'setsid sleep 100 & exit 0'`: the sleep never initialized CUDA; the audit
    reports after a short grace instead of waiting 30 s for it."""
    t0 = time.monotonic()
    try:
        # its output away from ours: the test waits for the pipes' end, not the audit
        r = audit("--", "sh", "-c", "setsid sleep 97 >/dev/null 2>&1 & exit 0")
        took = time.monotonic() - t0
    finally:
        subprocess.run(["pkill", "-f", "sleep 97"], capture_output=True)
    assert r.returncode == 0, r.stderr
    assert took < 15, took
    assert "never initialized CUDA" in r.stderr


def test_cuda_processes_left_behind_are_waited_for(tmp_path):
    """A CUDA process CMD started in the background and did not wait for is still reported."""
    j = tmp_path / "a.json"
    r = audit("--json", j, "--", "sh", "-c", f"{FAKE} 3 & sleep 1; exit 0")
    assert r.returncode == 0, r.stderr
    (p,) = procs(j)
    assert p["complete"] and p["records_incomplete"] is None, p


def test_output_that_is_the_audited_program_is_refused(tmp_path):
    victim = tmp_path / "victim.sh"
    victim.write_text("#!/bin/sh\nexit 0\n")
    victim.chmod(0o755)
    r = audit("--csv", "victim.sh", "--", "./victim.sh", cwd=tmp_path)
    assert_usage_error(r, "is also an input")
    assert victim.read_text() == "#!/bin/sh\nexit 0\n"


def test_output_that_is_an_argument_file_is_refused(tmp_path):
    script = tmp_path / "train.py"
    script.write_text("print(1)\n")
    r = audit("--json", script, "--", "python3", script)
    assert_usage_error(r, "is also an input")
    assert script.read_text() == "print(1)\n"


@pytest.mark.parametrize("opt", ["--csv", "--json", "--trace", "--keep"])
def test_double_dash_is_no_path(tmp_path, opt):
    """`audit --csv -- true` wrote a file named "--"."""
    r = audit(opt, "--", "true", cwd=tmp_path)
    assert_usage_error(r, f"{opt} needs a value")
    assert not (tmp_path / "--").exists()


def test_missing_library_names_the_build_folder(tmp_path):
    """Without the injection library the message names the path beside the binary (where
    make builds it), not only the installed one."""
    lone = tmp_path / "bin"
    lone.mkdir()
    binary = lone / "syncbench"
    binary.write_bytes(open(BIN, "rb").read())
    binary.chmod(0o755)
    env = dict(os.environ)
    env.pop("SYNCBENCH_AUDIT_LIB", None)
    r = subprocess.run([str(binary), "audit", "--", "true"], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 3, r.stderr
    assert str(lone / "libsyncbench_audit.so") in r.stderr, r.stderr


def real_cupti_refuses():
    """Whether this machine's CUPTI refuses to subscribe in fake_cuda (no driver here)."""
    r = audit("--", FAKE, cupti="real")
    return "CUPTI refused to subscribe" in r.stderr


@pytest.mark.parametrize("how", ["refused", "another-subscriber"])
def test_a_gate_over_a_process_cupti_did_not_watch_fails(tmp_path, how):
    """Issue 32, item 1: CUPTI refused the subscription (no driver here; another profiler
    holding it on a GPU machine, tests/gpu/test_audit.py): the gate passed with "0 blocking
    calls" and the JSON said complete. Now the gate fails in one line saying why, the table
    says the process was not watched, and the JSON marks it incomplete. "another-subscriber":
    the same from a record stream that says so (the message CUPTI's
    MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED gives), read back with --from."""
    j = tmp_path / "a.json"
    if how == "refused":
        if not real_cupti_refuses():
            pytest.skip("this machine's CUPTI subscribes: tests/gpu covers another subscriber")
        r = audit("--json", j, "--max-syncs", "0", "--", FAKE, cupti="real")
    else:
        recs = tmp_path / "recs"
        recs.mkdir()
        why = ("another CUPTI subscriber holds the callbacks (the PyTorch profiler, Nsight "
               "Systems or another tool: CUPTI allows one): blocking calls cannot be recorded: "
               "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED")
        lines = [{"t": "proc", "v": 1, "pid": 7, "ppid": 1, "rank": -1, "local_rank": -1,
                  "cmd": "python3 train.py", "clock_ns": 0, "mono_ns": 0, "mode": "count"},
                 {"t": "unwatched", "why": why},
                 {"t": "end", "clock_ns": 1000, "mono_ns": 1000, "why": "exit", "dropped": 0}]
        (recs / "proc-7.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
        r = audit("--from", recs, "--json", j, "--max-syncs", "0")
    assert r.returncode == 1, r.stderr
    gate = [x for x in r.stderr.splitlines() if x.startswith("audit gate:")]
    assert len(gate) == 1 and "FAILED" in gate[0] and "nothing was checked" in gate[0], r.stderr
    assert "passed" not in r.stderr
    assert "not watched" in r.stderr
    (p,) = procs(j)
    assert p["complete"] is False and "not recorded" in p["records_incomplete"], p


def test_a_refused_subscription_in_old_records_still_fails_the_gate(tmp_path):
    """Records kept by an earlier syncbench said a refused subscription only in a "warn"
    record: --from reads that as not watched too, never as 0 blocking calls."""
    recs = tmp_path / "recs"
    recs.mkdir()
    lines = [{"t": "proc", "v": 1, "pid": 8, "ppid": 1, "rank": -1, "local_rank": -1,
              "cmd": "prog", "clock_ns": 0, "mono_ns": 0, "mode": "count"},
             {"t": "warn", "msg": "CUPTI refused to subscribe: blocking calls cannot be "
                                  "recorded: CUPTI_ERROR_UNKNOWN"},
             {"t": "end", "clock_ns": 1000, "mono_ns": 1000, "why": "exit", "dropped": 0}]
    (recs / "proc-8.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    r = audit("-q", "--from", recs, "--max-syncs", "0")
    assert r.returncode == 1 and "nothing was checked" in r.stderr, r.stderr


def test_a_watched_process_without_syncs_still_passes(tmp_path):
    """The other side: the same program watched (CUPTI accepted) passes the gate."""
    r = audit("-q", "--max-syncs", "0", "--", FAKE)
    assert r.returncode == 0 and "audit gate: passed: 0 blocking calls" in r.stderr, r.stderr
