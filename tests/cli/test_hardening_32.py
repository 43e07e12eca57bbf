"""Issue 32, items 4, 5, 11 and 13: a suite file's line is read whole or refused (text after a
header, CR-only line endings); a samples file named to `compare` is always read and checked;
without a driver every run says libcuda.so.1 was not found; `compare` refuses numbers and keys
with blanks around them, as the command line does."""
import pytest

from conftest import NO_GPU, ROOT, run
from conftest import assert_one_line as one_line
from hidden_libs import empty_file, library_files, run_hidden  # noqa: F401 (fixture)
from synth_runs import SAMPLES_HEADER, noise, row, write_run


# ---- item 4: suite files drop no setting ----

def test_text_after_a_header_is_refused_not_dropped(tmp_path):
    """inih ignores what follows a header's ']': `[small-gemm] iters=5` planned iters=1000."""
    ini = tmp_path / "x.ini"
    ini.write_text("[copy]\nmax_time = 0.5\n[small-gemm] iters=5\n")
    r = run("--config", ini, env=NO_GPU)  # no --dry-run: refused before any GPU work
    one_line(r, 2, f"{ini}:3: text after the header [small-gemm]: 'iters=5' (a key goes on a "
                   "line of its own")
    one_line(run("--config", ini, "--dry-run", env=NO_GPU), 2, f"{ini}:3: text after")


def test_cr_only_line_endings_are_refused_not_read_as_defaults(tmp_path):
    ini = tmp_path / "mac.ini"
    ini.write_bytes(b"[small-gemm]\riters = 5\rwarmup = 3\r")
    one_line(run("--config", ini, env=NO_GPU), 2,
             f"{ini}:1: carriage return without a line feed (CR-only line endings?)")
    # a CR inside a line too (the value "5\rwarmup = 3" would have been read as one)
    ini.write_bytes(b"[small-gemm]\niters = 5\rwarmup = 3\n")
    one_line(run("--config", ini, "--dry-run", env=NO_GPU), 2, f"{ini}:2: carriage return")


@pytest.mark.parametrize("text", [
    b"[small-gemm]\r\niters = 5\r\n",          # CRLF
    b"[small-gemm] ; five\niters = 5\n",       # a comment after the header
    b"[small-gemm]\t# five\niters = 5",        # and without a final line end
    b"[small-gemm]  \niters = 5\r",            # blanks after it; a CR as the last byte
], ids=["crlf", "semicolon", "hash", "blanks"])
def test_what_is_read_as_before(tmp_path, text):
    ini = tmp_path / "ok.ini"
    ini.write_bytes(text)
    r = run("--config", ini, "--dry-run", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    assert "iters=5" in r.stdout and "iters=1000" not in r.stdout, r.stdout


# ---- item 5: a samples file named is always read ----

def nan_samples(tmp_path):
    f = tmp_path / "nan.samples.csv"
    f.write_text(SAMPLES_HEADER + "r1,copy,p,b=1,GBps,1,nan\n")
    return f


@pytest.mark.parametrize("option", ["--base-samples", "--current-samples"])
def test_a_named_samples_file_is_read_when_the_other_run_has_none(tmp_path, option):
    """Neither CSV has samples beside it: the file named was never read, NaNs passed."""
    a = write_run(tmp_path / "a", [row("copy", "p", "b=1", "GBps", "higher", noise(10, .05, 10))],
                  samples=False)
    b = write_run(tmp_path / "b",
                  [row("copy", "p", "b=1", "GBps", "higher", noise(10, .05, 10, 1))], samples=False)
    bad = nan_samples(tmp_path)
    one_line(run("compare", a, b, option, bad, "-q"), 2,
             f"{bad}:2: value 'nan' is not a finite number")
    # the other run having samples beside it changes nothing
    write_run(tmp_path / ("b" if option == "--base-samples" else "a"),
              [row("copy", "p", "b=1", "GBps", "higher", noise(10, .05, 10, 2))])
    one_line(run("compare", a, b, option, bad, "-q"), 2,
             f"{bad}:2: value 'nan' is not a finite number")


def test_a_good_named_samples_file_without_the_other_still_compares(tmp_path):
    a = write_run(tmp_path / "a", [row("copy", "p", "b=1", "GBps", "higher", noise(10, .05, 10))])
    b = write_run(tmp_path / "b",
                  [row("copy", "p", "b=1", "GBps", "higher", noise(10, .05, 10, 1))], samples=False)
    r = run("compare", a, b, "--base-samples", tmp_path / "a.samples.csv", "-q")
    assert r.returncode == 0, r.stderr
    assert "summary rule: samples not found" in r.stdout, r.stdout


# ---- item 11: one message for no driver ----

NO_DRIVER = ("syncbench: no usable CUDA device: the NVIDIA driver is not installed "
             "(libcuda.so.1 not found)")


@pytest.mark.parametrize("args", [
    [],
    ["--scenario", "collective"],
    ["--scenario", "cross-device"],
    ["--scenario", "small-gemm"],
    ["--scenario", "copy", "--device", "1"],
], ids=lambda a: " ".join(a) or "plain")
def test_no_driver_says_libcuda_whatever_runs(request, args):
    """The multi-GPU scenarios counted the GPUs through cudart first, which said "CUDA driver
    version is insufficient for CUDA runtime version"."""
    if library_files(["libcuda.so*"]):  # a driver here: hide it
        r = run_hidden(["libcuda.so*"], request.getfixturevalue("empty_file"), *args,
                       timeout=120, cwd=ROOT)
    else:
        r = run(*args, timeout=120)
    assert r.returncode == 3, r.stderr
    assert r.stderr.splitlines() == [NO_DRIVER + "; run on a machine with an NVIDIA GPU"]


# ---- item 13: compare refuses padded values, as --iters ' 5' is ----

def padded_run(tmp_path, column, value):
    f = write_run(tmp_path / "p", [row("copy", "p", "b=1", "GBps", "higher", [10.0, 10.0])],
                  samples=False)
    head, line = f.read_text().splitlines()
    cells = line.split(",")
    cells[head.split(",").index(column)] = value
    f.write_text(head + "\n" + ",".join(cells) + "\n")
    return f


@pytest.mark.parametrize("column,value,shown", [
    ("median", " 10.0", "' 10.0'"),
    ("median", "\t10.0", "'\\t10.0'"),
    ("mean", "10.0 ", "'10.0 '"),
    ("reps", " 2", "' 2'"),
    ("scenario", " copy", "' copy'"),
])
def test_padded_values_are_refused_naming_file_row_and_column(tmp_path, column, value, shown):
    good = write_run(tmp_path / "g", [row("copy", "p", "b=1", "GBps", "higher", [10.0, 10.0])],
                     samples=False)
    bad = padded_run(tmp_path, column, value)
    number = bad.read_text().splitlines()[0].split(",").index(column) + 1
    want = f"{bad}:2: {column} {shown} has a blank before or after it (column {number})"
    one_line(run("compare", good, bad), 2, want)
    one_line(run("compare", bad, good), 2, want)


def test_padded_samples_and_header_are_refused(tmp_path):
    a = write_run(tmp_path / "a", [row("copy", "p", "b=1", "GBps", "higher", noise(10, .05, 10))])
    s = tmp_path / "a.samples.csv"
    lines = s.read_text().splitlines()
    lines[3] = lines[3].rsplit(",", 1)[0] + ", 9.5"
    s.write_text("\n".join(lines) + "\n")
    one_line(run("compare", a, a), 2, f"{s}:4: value ' 9.5' has a blank before or after it")
    a.write_text(a.read_text().replace(",median,", ", median,", 1))
    one_line(run("compare", a, a), 2, f"{a}:1: column 15's name ' median' has a blank")


def test_blank_lines_and_quoted_inner_blanks_still_read(tmp_path):
    a = write_run(tmp_path / "a", [row("copy", "p", "b=1", "GBps", "higher", [10.0, 10.0])],
                  samples=False)
    text = a.read_text()
    head, line = text.splitlines()
    a.write_text(head + "\n  \n\t\n" + line.replace("NVIDIA H100 80GB HBM3",
                                                   '"NVIDIA H100 80GB HBM3"') + "\n   ")
    r = run("compare", a, a, "-q")
    assert r.returncode == 0, r.stderr
    assert "1 same" in r.stdout, r.stdout
