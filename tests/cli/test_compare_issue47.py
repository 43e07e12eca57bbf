"""`syncbench compare` against issue 47's probe: a gate with no row to judge fails, units and
samples that disagree with their rows are refused, --rerun writes only what the suite reader
takes, the per-file input ceiling, and messages that name the right line, path and reason."""
import os
import subprocess

import pytest

from conftest import BIN, run
from synth_runs import HEADER, noise, row, write_run

GEMM = ("small-gemm", "sync-stream", "m=512;n=512;k=512;dtype=fp16;tf32=0", "kernel_us")


def one_line_error(r, code, message):
    assert r.returncode == code, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert message in lines[0], lines[0]


# ---- item 6: a gate with nothing to judge fails ----

def test_no_row_in_common_fails_the_gate(tmp_path):
    base = write_run(tmp_path / "b", [row(*GEMM, "lower", noise(10, 0.01, seed=i)) for i in
                                      range(1)] +
                     [row("copy", "h2d-pinned", "bytes=64MiB", "GBps", "higher", noise(50, 0.01))])
    cur = write_run(tmp_path / "c", [row("readback", "pending-pinned", "pending_us=1000",
                                         "wait_us", "lower", noise(100, 0.01))], run_id="r2")
    for extra in ([], ["--strict"]):
        r = run("compare", base, cur, *extra)
        one_line_error(r, 1, "compare: no row in both files to judge")
        assert "1 new, 2 missing" in r.stdout
    # --subset with only new rows: nothing judged either
    r = run("compare", base, cur, "--subset")
    one_line_error(r, 1, "compare: no row in both files to judge")


# ---- item 8: units and samples ----

def test_mismatched_units_are_refused(tmp_path):
    base = write_run(tmp_path / "b", [row(*GEMM, "lower", noise(10, 0.01))])
    cur = write_run(tmp_path / "c", [row(*GEMM, "lower", noise(10, 0.01))], run_id="r2")
    cur.write_text(cur.read_text().replace(",kernel_us,us,", ",kernel_us,ms,"))
    out = tmp_path / "v.csv"
    r = run("compare", base, cur, "--verdicts", out)
    one_line_error(r, 2, "small-gemm sync-stream m=512;n=512;k=512;dtype=fp16;tf32=0 kernel_us: "
                         "unit 'us' in ")
    assert "'ms' in " in r.stderr and "c.csv:2" in r.stderr
    assert not out.exists() and not r.stdout


def test_samples_that_disagree_with_their_row_are_refused(tmp_path):
    base = write_run(tmp_path / "b", [row(*GEMM, "lower", noise(10, 0.01))])
    cur = write_run(tmp_path / "c", [row(*GEMM, "lower", noise(10, 0.01))], run_id="r1")
    # the CSV's median moved 10 -> 20, its samples file stayed
    lines = cur.read_text().splitlines(keepends=True)
    cells = lines[1].split(",")
    cells[14] = repr(float(cells[14]) * 2)
    lines[1] = ",".join(cells)
    cur.write_text("".join(lines))
    out = tmp_path / "v.csv"
    r = run("compare", base, cur, "--verdicts", out)
    one_line_error(r, 2, "c.samples.csv: the samples of small-gemm sync-stream")
    assert "c.csv:2" in r.stderr and "median" in r.stderr
    assert not out.exists() and not r.stdout


def test_samples_written_at_9_digits_agree_with_their_row(tmp_path):
    # the sink writes %.9g; the CSV's median is computed from the unrounded samples
    xs = [1.0000000004 + i * 1e-10 for i in range(4)] + [123456.78912345]
    base = write_run(tmp_path / "b", [row(*GEMM, "lower", xs)])
    samples = tmp_path / "b.samples.csv"
    text = samples.read_text().splitlines(keepends=True)
    samples.write_text(text[0] + "".join(
        ",".join(line.split(",")[:-1] + [f"{float(line.split(',')[-1]):.9g}"]) + "\n"
        for line in text[1:]))
    r = run("compare", base, base)
    assert r.returncode == 0, r.stderr


# ---- item 14: --rerun writes only what the suite reader accepts ----

@pytest.mark.parametrize("scenario,variant,params,what", [
    ("no-such", "sync-stream", "m=512", "unknown scenario 'no-such'"),
    ("small-gemm", "no-such", "m=512", "unknown variant 'no-such' of small-gemm"),
    ("small-gemm", "sync-stream", "nope=512", "unknown parameter 'nope' of small-gemm"),
    ("small-gemm", "sync-stream", "m=abc", "m=abc"),
])
def test_rerun_refuses_what_the_suite_reader_refuses(tmp_path, scenario, variant, params, what):
    key = (scenario, variant, params, "kernel_us")
    base = write_run(tmp_path / "b", [row(*key, "lower", noise(10, 0.01))])
    cur = write_run(tmp_path / "c", [row(*key, "lower", noise(20, 0.01))], run_id="r2")
    suite, md = tmp_path / "r.ini", tmp_path / "t.md"
    r = run("compare", base, cur, "--rerun", suite, "--markdown", md)
    one_line_error(r, 2, "compare: --rerun: ")
    assert what in r.stderr and "c.csv:2" in r.stderr
    assert not suite.exists() and not md.exists() and not r.stdout


def test_rerun_suite_of_known_rows_passes_dry_run(tmp_path):
    base = write_run(tmp_path / "b", [row(*GEMM, "lower", noise(10, 0.01))])
    cur = write_run(tmp_path / "c", [row(*GEMM, "lower", noise(20, 0.01))], run_id="r2")
    suite = tmp_path / "r.ini"
    assert run("compare", base, cur, "--rerun", suite).returncode == 1
    dry = run("--config", suite, "--dry-run")
    assert dry.returncode == 0, dry.stderr


# ---- item 15: a per-file ceiling memory allows, checked before reading ----

def test_a_file_over_the_ceiling_is_refused_before_reading(tmp_path):
    big = tmp_path / "big.csv"
    with open(big, "wb") as f:
        f.truncate((256 << 20) + 1)  # sparse: costs no disk
    small = write_run(tmp_path / "c", [row(*GEMM, "lower", noise(10, 0.01))])
    r = run("compare", big, small)
    one_line_error(r, 2, f"{big}: larger than 256 MiB, the most compare reads")
    # a pipe has no size: the bytes are counted as read
    # (made by a shell: 256 MiB of text in this process would raise every later child's max RSS,
    # which a child inherits from its parent at fork, and test_plot.py measures it)
    r = subprocess.run(["sh", "-c", "{ echo scenario,variant,params,metric,better,median,mean,"
                        "stddev,cv; head -c 268435456 /dev/zero | tr '\\0' '\\n'; } | "
                        '"$0" compare /dev/stdin "$1"', BIN, small],
                       capture_output=True, text=True, timeout=120)
    one_line_error(r, 2, "/dev/stdin: larger than 256 MiB, the most compare reads")


# the row ceiling (2 million) is tested in tests/unit/test_compare.c (too_many_rows): its
# ~500 MB would stay in this worker's children's max RSS, which other tests measure

# ---- item 17: messages ----

def test_cr_only_line_ends_count_as_lines(tmp_path):
    good = write_run(tmp_path / "g", [row(*GEMM, "lower", noise(10, 0.01))], samples=False)
    lines = good.read_text().splitlines()
    bad = lines[1].split(",")
    bad[14] = "abc"
    cr = tmp_path / "cr.csv"
    cr.write_bytes("\r".join([lines[0], lines[1].replace("sync-stream", "async"),
                              ",".join(bad)]).encode() + b"\r")
    r = run("compare", cr, good)
    one_line_error(r, 2, f"{cr}:3: median 'abc' is not a number")
    # CRLF stays one line end
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes("\r\n".join([lines[0], lines[1].replace("sync-stream", "async"),
                                  ",".join(bad)]).encode() + b"\r\n")
    one_line_error(run("compare", crlf, good), 2, f"{crlf}:3: median 'abc' is not a number")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_junit_write_error_names_the_path_and_the_reason(tmp_path):
    # enough rows that the report fills stdio's buffer: the write fails inside the writer
    base = write_run(tmp_path / "b", [row("small-gemm", "async", f"m={i}", "kernel_us", "lower",
                                          noise(10, 0.01, n=5)) for i in range(200)])
    r = run("compare", base, base, "-q", "--junit", "/dev/full")
    one_line_error(r, 1, "--junit /dev/full: write failed: No space left on device")
