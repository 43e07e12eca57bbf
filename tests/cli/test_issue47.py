"""Issue 47: bad input gets one line on stderr and exit 2 before any GPU work; a gate that
could not check fails. Items 5, 7, 10 (the audit's part), 12 and 13."""
import os
import subprocess

from conftest import BIN, NO_GPU, run


def one_line(r, code, message):
    assert r.returncode == code, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("syncbench: ")
    assert message in lines[0], lines[0]


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
