"""Issue 47: bad input gets one line on stderr and exit 2 before any GPU work; a gate that
could not check fails. Items 5, 7, 10 (the audit's part), 12 and 13."""
import os
import subprocess

from conftest import BIN, NO_GPU, ROOT, run
from conftest import assert_one_line as one_line


# ---- item 5: a suite read from a pipe keeps its keys ----

def test_a_suite_from_a_pipe_is_read_once():
    """`--config <(printf ...)` planned the defaults: the headers were scanned, the file
    rewound (a pipe cannot be) and inih found nothing left."""
    text = b"[small-gemm]\nvariants=async\niters=5\n"
    r = subprocess.run([BIN, "--dry-run", "--config", "/dev/stdin"], input=text,
                       capture_output=True, env={**os.environ, **NO_GPU},
                       timeout=60)
    assert r.returncode == 0, r.stderr
    rows = r.stdout.decode().splitlines()[1:]
    assert rows and all("iters=5" in x and " async " in f" {x} " for x in rows), r.stdout
    assert len(rows) == 1, r.stdout


def test_a_suite_from_a_pipe_still_reports_its_errors():
    r = subprocess.run([BIN, "--dry-run", "--config", "/dev/stdin"],
                       input=b"[small-gemm]\niters=5\nbogus=1\n", capture_output=True,
                       text=False, env={**os.environ, **NO_GPU}, timeout=60)
    assert r.returncode == 2, r.stderr
    assert b"/dev/stdin:3: unknown key 'bogus'" in r.stderr, r.stderr


# ---- item 7: a gate that watched nothing does not pass ----

FAKE = str(ROOT / "build" / "tests" / "fake_cuda")
FAKE_CUPTI = ROOT / "build" / "tests" / "fake-cupti"


def fake_cupti_env():
    old = os.environ.get("LD_LIBRARY_PATH")
    return {"LD_LIBRARY_PATH": str(FAKE_CUPTI) + (":" + old if old else "")}


def test_an_empty_record_folder_is_refused(tmp_path):
    """`audit --from EMPTY --max-syncs 0` said "passed ... nothing was watched", exit 0."""
    empty = tmp_path / "recs"
    empty.mkdir()
    (empty / "calibration.json").write_text("{}\n")  # not a process's record
    for gate in (("--max-syncs", "0"), ()):
        one_line(run("audit", "--from", empty, *gate, env=NO_GPU), 2,
                 f"audit: --from {empty}: no records (proc-*.jsonl)")


def test_a_command_that_never_used_cuda_fails_the_gate(tmp_path):
    """A CI job whose GPU went missing (or whose script fell back to the CPU) must not go
    green: the gate watched nothing."""
    j = tmp_path / "a.json"
    r = run("audit", "--json", j, "--max-syncs", "0", "--", "true", env=NO_GPU)
    assert r.returncode == 1, r.stderr
    assert "audit gate: FAILED: no process initialized CUDA" in r.stderr, r.stderr
    assert "--allow-no-cuda" in r.stderr, r.stderr
    assert j.exists()  # the report is written all the same
    # CMD's own failure still wins
    assert run("audit", "--max-syncs", "0", "--", "sh", "-c", "exit 5",
               env=NO_GPU).returncode == 5


def test_allow_no_cuda_asks_for_that_pass(tmp_path):
    r = run("audit", "--max-syncs", "0", "--allow-no-cuda", "--", "true", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    assert "audit gate: passed" in r.stderr and "nothing was watched" in r.stderr, r.stderr
    one_line(run("audit", "--allow-no-cuda", "--", "true", env=NO_GPU), 2,
             "--allow-no-cuda needs --max-syncs N")


def test_a_cuda_process_whose_records_vanished_fails_the_gate(tmp_path):
    """The status socket heard the process start CUDA; no record came: unwatched, not 0."""
    r = run("audit", "--max-syncs", "0", "--", "sh", "-c",
            f'{FAKE}; rm -f "$SYNCBENCH_AUDIT_DIR"/proc-*.jsonl', env=fake_cupti_env())
    assert r.returncode == 1, r.stderr
    assert "audit gate: FAILED: pid" in r.stderr and "record file is missing" in r.stderr, \
        r.stderr
    # --allow-no-cuda is no excuse: that process did use CUDA
    r = run("audit", "--max-syncs", "0", "--allow-no-cuda", "--", "sh", "-c",
            f'{FAKE}; rm -f "$SYNCBENCH_AUDIT_DIR"/proc-*.jsonl', env=fake_cupti_env())
    assert r.returncode == 1, r.stderr


# ---- item 10: the audit opens only regular files ----

def fifo(path):
    os.mkfifo(path)
    return path


def kept(tmp_path, frames=None):
    from ci_records import TORCH_ITEM, Site, write_records
    site = Site(None, 0, "", "", 2, native=frames or TORCH_ITEM)
    return write_records(tmp_path / "K", [site])


def refused_as_not_regular(k, name):
    """`audit --from K` refuses K/NAME in one line, exit 2, and returns."""
    one_line(run("audit", "-q", "--from", k, timeout=10), 2, f"{k}/{name}: not a regular file")


def test_a_record_that_is_a_fifo_is_refused(tmp_path):
    """`audit --from D` with D/proc-1.jsonl a FIFO never returned (open waited for a writer)."""
    k = kept(tmp_path)
    fifo(k / "proc-1.jsonl")
    refused_as_not_regular(k, "proc-1.jsonl")


def test_a_record_linked_to_a_device_is_refused(tmp_path):
    """A link to /dev/urandom: lines that never end in a record that never ends."""
    k = kept(tmp_path)
    (k / "proc-1.jsonl").symlink_to("/dev/urandom")
    refused_as_not_regular(k, "proc-1.jsonl")


def test_a_calibration_that_is_a_fifo_is_refused(tmp_path):
    k = kept(tmp_path)
    fifo(k / "calibration.json")
    refused_as_not_regular(k, "calibration.json")


def test_a_library_that_is_a_fifo_is_not_opened(tmp_path):
    """A stack record naming a FIFO as its library: the symbolizer waited on it forever. The
    frame stays unnamed; the report is made."""
    lib = fifo(tmp_path / "libfifo.so")
    k = kept(tmp_path, frames=[str(lib), "", 64, 140000000000000])
    j = tmp_path / "a.json"
    r = run("audit", "-q", "--from", k, "--json", j, timeout=10)
    assert r.returncode == 0, r.stderr
    assert "libfifo.so" in j.read_text()


def test_a_merge_report_that_is_a_fifo_is_refused(tmp_path):
    from test_audit_merge import audit_report
    a, _ = audit_report(tmp_path, "a", [(7, 0, [100]), (8, 1, [100])])
    f = fifo(tmp_path / "fifo.json")
    one_line(run("audit", "--merge", a, f, timeout=10), 2,
             f"audit: --merge: {f}: not a regular file")


# ---- item 12: SYNCBENCH_WAITS_LIB is checked as SYNCBENCH_AUDIT_LIB is ----

AUDIT_LIB = ROOT / "build" / "libsyncbench_audit.so"


def audit_with_waits(tmp_path, waits):
    env = {**fake_cupti_env(), "SYNCBENCH_WAITS_LIB": str(waits)}
    return run("audit", "--", "touch", tmp_path / "ran", env=env, timeout=60)


def test_a_waits_lib_that_is_no_waits_library_is_refused(tmp_path):
    """/tmp, /etc/passwd or another library: the command started and every process printed
    ld.so's errors. Now exit 3 before the command, as for SYNCBENCH_AUDIT_LIB."""
    for waits, why in ((tmp_path, "not a regular file"),
                       ("/etc/passwd", ""),  # dlerror's words: invalid ELF header, ...
                       (AUDIT_LIB, "not syncbench's waits library")):
        r = audit_with_waits(tmp_path, waits)
        one_line(r, 3, "(SYNCBENCH_WAITS_LIB)")
        assert why in r.stderr, r.stderr
        assert not (tmp_path / "ran").exists()


def test_the_real_waits_lib_is_taken(tmp_path):
    r = audit_with_waits(tmp_path, ROOT / "build" / "libsyncbench_waits.so")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "ran").exists()


# ---- item 13: a record reads only Python sources ----

def test_a_frame_naming_a_file_that_is_not_python_shows_no_line(tmp_path):
    """A hostile record whose Python frame names /etc/shadow line 1 printed that line: the
    source text of a frame is read only from a regular *.py file."""
    from ci_records import Site, write_records
    secret = tmp_path / "shadow"
    py = tmp_path / "train.py"
    k = write_records(tmp_path / "K", [Site(str(secret), 1, "<module>", "root:SECRET:1", 2),
                                       Site(str(py), 3, "step", "loss.item()", 1)])
    j = tmp_path / "a.json"
    r = run("audit", "--from", k, "--json", j, "--csv", tmp_path / "a.csv")
    assert r.returncode == 0, r.stderr
    assert "SECRET" not in r.stderr + r.stdout + j.read_text() + \
        (tmp_path / "a.csv").read_text()
    assert "loss.item()" in r.stderr  # a Python source still shows its line
    # a link named *.py to a file that is not is still a *.py path: only its text is shown,
    # which the user put there; a FIFO named *.py is not read
    os.mkfifo(tmp_path / "fifo.py")
    k2 = write_records(tmp_path / "K2", [Site(str(py), 3, "step", "loss.item()", 1)])
    recs = (k2 / "proc-7.jsonl").read_text().replace(str(py), str(tmp_path / "fifo.py"))
    (k2 / "proc-7.jsonl").write_text(recs)
    assert run("audit", "-q", "--from", k2, timeout=10).returncode == 0
