"""plot/plot.py on the committed CSV of a real H100 run (results/h100/default.csv), on parts of
it, on a wide synthetic sweep, and on bad input: each bad input is one line and exit 2 and
leaves no PNG and no temporary file behind. No GPU needed."""
import csv
import os
import struct
import subprocess
import sys

import pytest

from conftest import ROOT, capped, plot_tool_patched

pytest.importorskip("matplotlib")

PLOT = str(ROOT / "plot" / "plot.py")
RUN_CSV = ROOT / "results" / "h100" / "default.csv"
ALL = {"forced_sync_gemm.png", "overhead_share.png", "readback.png", "copies.png",
       "double_buffer.png"}


def plot(csv_path, out):
    return subprocess.run([sys.executable, PLOT, str(csv_path), "-o", str(out)],
                          capture_output=True, text=True)


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    return struct.unpack(">II", head[16:24])


def subset(tmp_path, keep):
    with open(RUN_CSV, newline="") as f:
        reader = csv.DictReader(f)
        rows = [r for r in reader if keep(r)]
        fields = reader.fieldnames
    path = tmp_path / "subset.csv"
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return path


def test_every_figure_from_a_real_run(tmp_path):
    r = plot(RUN_CSV, tmp_path)
    assert r.returncode == 0, r.stderr
    assert set(os.listdir(tmp_path)) == ALL
    assert sorted(os.path.basename(p) for p in r.stdout.split()) == sorted(ALL)
    assert r.stderr == ""  # no notes, no warnings
    for name in ALL:
        w, h = png_size(tmp_path / name)
        assert 700 <= w <= 2500 and 350 <= h <= 1500, (name, w, h)
        assert os.path.getsize(tmp_path / name) > 20_000, name  # drawn, not blank


def test_only_the_figures_whose_rows_are_there(tmp_path):
    r = plot(subset(tmp_path, lambda row: row["scenario"] == "copy"), tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert os.listdir(tmp_path / "out") == ["copies.png"]
    r = plot(subset(tmp_path, lambda row: row["scenario"] in ("readback", "double-buffer")),
             tmp_path / "out2")
    assert r.returncode == 0, r.stderr
    assert set(os.listdir(tmp_path / "out2")) == {"readback.png", "double_buffer.png"}


def one_line(r, status, fragment):
    assert r.returncode == status, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("plot.py: ") and fragment in lines[0], lines[0]
    assert r.stdout == ""
    return lines[0]


def one_line_exit_2(r, fragment):
    return one_line(r, 2, fragment)


def test_missing_columns(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("scenario,variant,params,metric\nsmall-gemm,async,m=1,wall\n")
    one_line_exit_2(plot(bad, tmp_path / "out"), "missing columns timestamp, gpu, median")


def test_not_a_csv(tmp_path):
    bad = tmp_path / "image.csv"
    bad.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    one_line_exit_2(plot(bad, tmp_path / "out"), "image.csv")
    assert not (tmp_path / "out").exists()


def test_no_such_file(tmp_path):
    one_line_exit_2(plot(tmp_path / "nope.csv", tmp_path / "out"), "cannot open")


def test_nothing_to_plot(tmp_path):
    only = subset(tmp_path, lambda row: row["scenario"] == "big-gemm"
                  and row["variant"] == "async")
    one_line_exit_2(plot(only, tmp_path / "out"), "no rows any figure can use")


# --- bad input leaves nothing behind -------------------------------------------------------


def run_rows():
    with open(RUN_CSV, newline="") as f:
        reader = csv.DictReader(f)
        return reader.fieldnames, list(reader)


def write_rows(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    return path


def line_of(rows, row):
    """The CSV line of a row (header is line 1; no field of the committed run spans lines)."""
    return next(i for i, r in enumerate(rows) if r is row) + 2


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-inf", "Infinity", "1e308"])
def test_non_finite_median_is_bad_input(tmp_path, value):
    # On the last scenario of the file: the old plot.py had written four PNGs by then.
    fields, rows = run_rows()
    row = [r for r in rows if r["scenario"] == "double-buffer"][-1]
    row["median"] = value
    bad = write_rows(tmp_path / "bad.csv", fields, rows)
    out = tmp_path / "new" / "out"
    msg = one_line_exit_2(plot(bad, out), f"bad.csv:{line_of(rows, row)}: median '{value}'")
    assert "double-buffer" in msg
    assert not (tmp_path / "new").exists()  # the folders this run made are gone too


def test_bad_input_leaves_an_existing_folder_as_it_was(tmp_path):
    fields, rows = run_rows()
    rows[-1]["median"] = "nan"
    bad = write_rows(tmp_path / "bad.csv", fields, rows)
    out = tmp_path / "out"
    out.mkdir()
    (out / "copies.png").write_bytes(b"an older figure")
    one_line_exit_2(plot(bad, out), "not a finite number")
    assert os.listdir(out) == ["copies.png"]  # no new PNG, no temporary file
    assert (out / "copies.png").read_bytes() == b"an older figure"


def test_line_numbers_count_lines_not_records(tmp_path):
    fields, rows = run_rows()
    for r in rows:
        r["gpu"] = "NVIDIA\nH100"  # a quoted field over two lines: every record is two lines
    rows[2]["median"] = "inf"
    bad = write_rows(tmp_path / "bad.csv", fields, rows)
    one_line_exit_2(plot(bad, tmp_path / "out"), "bad.csv:6: median 'inf'")


@pytest.mark.parametrize("scenario,params,fragment", [
    ("copy", "bytes=abc", "bytes='abc' is not a size"),
    ("copy", "bytes=12QiB", "bytes='12QiB' is not a size"),
    ("copy", "bytes=0", "bytes='0' is not a size"),
    ("small-gemm", "m=x;n=512;k=512;dtype=fp16;tf32=0", "m='x' is not a positive integer"),
    ("big-gemm", "m=8192;n=-1;k=8192;dtype=fp16;tf32=0", "n='-1' is not a positive integer"),
    ("big-gemm", "m=8192;n=8192;dtype=fp16;tf32=0", "no k="),
    ("readback", "pending_us=1000;spin", "not key=value pairs"),
])
def test_unparseable_params(tmp_path, scenario, params, fragment):
    fields, rows = run_rows()
    row = [r for r in rows if r["scenario"] == scenario][-1]
    row["params"] = params
    bad = write_rows(tmp_path / "bad.csv", fields, rows)
    one_line_exit_2(plot(bad, tmp_path / "out"),
                    f"bad.csv:{line_of(rows, row)}: {scenario} params '{params}': {fragment}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("skipped,drop", [
    ("forced_sync_gemm.png", lambda r: r["scenario"].endswith("gemm")
     and r["metric"] == "wall_us_per_iter"),
    ("overhead_share.png", lambda r: r["scenario"].endswith("gemm")
     and r["metric"] == "overhead_pct"),
    ("readback.png", lambda r: r["metric"] == "readback_us"),
    ("copies.png", lambda r: r["metric"] == "GBps"),
    ("double_buffer.png", lambda r: r["metric"] == "total_ms"),
])
def test_scenario_without_the_metrics_a_figure_needs(tmp_path, skipped, drop):
    fields, rows = run_rows()
    some = write_rows(tmp_path / "some.csv", fields, [r for r in rows if not drop(r)])
    r = plot(some, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [r.stderr.strip()]
    assert r.stderr.startswith(f"plot.py: note: {skipped} skipped: "), r.stderr
    assert set(os.listdir(tmp_path / "out")) == ALL - {skipped}


def test_only_rows_no_figure_can_draw(tmp_path):
    fields, rows = run_rows()
    only = write_rows(tmp_path / "only.csv", fields,
                      [r for r in rows if r["scenario"] == "readback" and r["metric"] == "wait_us"])
    one_line_exit_2(plot(only, tmp_path / "out"),
                    "no rows any figure can use (scenarios: readback)")
    assert not (tmp_path / "out").exists()


# --- wide sweeps ---------------------------------------------------------------------------

MAX_PX = 4000


def sweep_rows(n):
    """n GEMM sizes with every sync variant, and n copy sizes: a 120-size sweep."""
    fields, rows = run_rows()
    base = rows[0]
    out = []

    def add(scenario, variant, params, metric, median):
        out.append(dict(base, scenario=scenario, variant=variant, params=params, metric=metric,
                        median=repr(median)))

    for i in range(1, n + 1):
        params = f"m={64 * i};n={64 * i};k={64 * i};dtype=fp16;tf32=0"
        add("small-gemm", "async", params, "wall_us_per_iter", 10.0 + i)
        add("small-gemm", "async", params, "kernel_us", 4.0 + i)
        for v in ("sync-device", "sync-stream", "sync-event", "sync-readback"):
            add("small-gemm", v, params, "wall_us_per_iter", 18.0 + i)
            add("small-gemm", v, params, "overhead_us", 8.0)
            add("small-gemm", v, params, "overhead_pct", 800.0 / (10 + i))
        for v in ("h2d-pinned", "h2d-pageable", "d2h-pinned", "d2h-pageable"):
            add("copy", v, f"bytes={4096 * i}", "GBps", i / 3)
            add("copy", v, f"bytes={4096 * i}", "host_call_us", 1.0 + i)
    return fields, out


def test_wide_sweep_stays_within_the_pixel_cap(tmp_path):
    fields, rows = sweep_rows(120)
    wide = write_rows(tmp_path / "wide.csv", fields, rows)
    r = plot(wide, tmp_path / "out")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr
    assert r.stderr.splitlines() == [
        "plot.py: note: forced_sync_gemm.png: 120 GEMM sizes, drawing 8 evenly spread "
        "(smallest and largest kept; overhead_share.png has them all)"]
    names = {"forced_sync_gemm.png", "overhead_share.png", "copies.png"}
    assert set(os.listdir(tmp_path / "out")) == names
    for name in names:
        w, h = png_size(tmp_path / "out" / name)
        assert w <= MAX_PX and h <= MAX_PX, (name, w, h)
        assert os.path.getsize(tmp_path / "out" / name) > 20_000, name


def test_sweep_of_eight_sizes_draws_them_all(tmp_path):
    fields, rows = sweep_rows(8)
    r = plot(write_rows(tmp_path / "eight.csv", fields, rows), tmp_path / "out")
    assert r.returncode == 0 and r.stderr == "", r.stderr
    w, h = png_size(tmp_path / "out" / "forced_sync_gemm.png")
    assert 2000 <= w <= MAX_PX and 900 <= h <= MAX_PX, (w, h)  # 4 x 2 panels


# --- the output folder ---------------------------------------------------------------------


def test_output_folder_is_created(tmp_path):
    r = plot(RUN_CSV, tmp_path / "a" / "b" / "c")
    assert r.returncode == 0, r.stderr
    assert set(os.listdir(tmp_path / "a" / "b" / "c")) == ALL


def test_output_folder_is_a_file(tmp_path):
    (tmp_path / "out").write_text("not a folder")
    one_line_exit_2(plot(RUN_CSV, tmp_path / "out"), "out: not a folder")
    one_line_exit_2(plot(RUN_CSV, tmp_path / "out" / "sub"), "cannot create the folder")
    assert (tmp_path / "out").read_text() == "not a folder"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes in a read-only folder")
def test_output_folder_not_writable(tmp_path):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        one_line_exit_2(plot(RUN_CSV, ro), "cannot write there")
        one_line_exit_2(plot(RUN_CSV, ro / "sub"), "cannot create the folder")
        assert os.listdir(ro) == []
    finally:
        ro.chmod(0o755)


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="no /proc")
def test_output_folder_where_nothing_can_be_written(tmp_path):
    one_line_exit_2(plot(RUN_CSV, "/proc"), "/proc: cannot write there")


def test_usage_errors_are_one_line():
    r = subprocess.run([sys.executable, PLOT], capture_output=True, text=True)
    one_line_exit_2(r, "required: csv")


# --- failures while drawing: one line, and what the run wrote is removed -------------------


def plot_with(last_draw, tmp_path):
    """plot.py on the real run with the last figure's draw function replaced by last_draw."""
    code = (f"import os, signal, sys; sys.path.insert(0, {str(ROOT / 'plot')!r}); import plot\n"
            f"name, prep, _ = plot.FIGURES[-1]\n"
            f"def draw(*a):\n    {last_draw}\n"
            f"plot.FIGURES[-1] = (name, prep, draw)\n"
            f"sys.exit(plot.main([{str(RUN_CSV)!r}, '-o', {str(tmp_path / 'out')!r}]))\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def test_a_bug_is_one_line_exit_1_and_leaves_nothing(tmp_path):
    # By the last figure four PNGs are drawn to temporary files: all are removed.
    r = plot_with("raise ZeroDivisionError('boom')", tmp_path)
    one_line(r, 1, "internal error: ZeroDivisionError: boom")
    assert not (tmp_path / "out").exists()


def test_interrupted_leaves_nothing(tmp_path):
    r = plot_with("os.kill(os.getpid(), signal.SIGINT)", tmp_path)
    one_line(r, 130, "interrupted")
    assert not (tmp_path / "out").exists()


def test_a_bad_row_stops_a_large_csv_at_once(tmp_path):
    """A 300 000-row CSV (60 MB) whose second row is bad: one line naming it, without holding
    the file (whole rows took about 11 times the file: 2.2 GB for 192 MB; the bound leaves room
    for a Python whose start-up alone is 110 MB, as the H100's with torch installed)."""
    path = tmp_path / "big.csv"
    header = ("run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,"
              "metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n")
    good = ("r,2026-11-24T00:00:00Z,h,GPU,580,13.0,small-gemm,async,m={i};n=512;k=512;"
            "dtype=fp16;tf32=0,10,20,kernel_us,us,lower,5,5,0,5,5,5,5,0,\n")
    with open(path, "w") as f:
        f.write(header)
        f.write(good.format(i=1))
        f.write(good.format(i=2).replace("m=2;", "m=x;"))
        for i in range(300000):
            f.write(good.format(i=i + 3))
    proc = subprocess.Popen([sys.executable, PLOT, str(path), "-o", str(tmp_path / "p")],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    assert os.waitstatus_to_exitcode(status) == 2, err
    assert ":3: small-gemm params" in err and "m='x'" in err, err
    assert usage.ru_maxrss < 250 * 1024, usage.ru_maxrss


# --- issue 32 item 7: endless input stops, at once or at a limit ----------------------------

HEADER = ("run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,"
          "metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n")
ROW = ("r,2026-11-24T00:00:00Z,h,GPU,580,13.0,readback,idle-pageable,pending=spin,10,20,"
       "readback_us,us,lower,5,5,0,5,5,5,5,0,\n")


def plot_patched(args, limit, stdin=None):
    return plot_tool_patched("plot", "MAX_CSV_BYTES", limit, args, stdin)


def test_dev_zero_stops_at_once(tmp_path):
    r = subprocess.run([sys.executable, PLOT, "/dev/zero", "-o", str(tmp_path / "out")],
                       capture_output=True, text=True, timeout=60, preexec_fn=capped())
    one_line_exit_2(r, "/dev/zero:1: binary data (a NUL byte): not a CSV file")
    assert not (tmp_path / "out").exists()


def test_a_record_longer_than_64_kib(tmp_path):
    bad = tmp_path / "long.csv"
    bad.write_text(HEADER + ROW + "x" * (70 << 10) + "\n" + ROW)
    one_line_exit_2(plot(bad, tmp_path / "out"), "long.csv:3: record longer than 64 KiB "
                                                 "(the limit)")
    # a quoted field over many short lines is one record: counted from its first line
    bad.write_text(HEADER + ROW + 'r,"' + "a\n" * (40 << 10) + '",h\n')
    one_line_exit_2(plot(bad, tmp_path / "out"), "long.csv:3: record longer than 64 KiB")
    assert not (tmp_path / "out").exists()


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    big = tmp_path / "big.csv"
    big.write_text(HEADER + ROW * 100)
    r = plot_patched([big, "-o", tmp_path / "out"], 1000)
    one_line_exit_2(r, "big.csv: larger than 1000 bytes, the most plot.py reads")
    assert not (tmp_path / "out").exists()


def test_an_endless_pipe_stops_at_the_size_limit(tmp_path):
    """Rows that never end, through a pipe (no size to check first): read as they come and
    counted, stopped past the limit."""
    writer = subprocess.Popen(["sh", "-c", f"printf '%s' '{HEADER}'; yes '{ROW.strip()}'"],
                              stdout=subprocess.PIPE)
    try:
        r = plot_patched(["/dev/stdin", "-o", tmp_path / "out"], 1 << 20, stdin=writer.stdout)
    finally:
        writer.stdout.close()
        writer.kill()
        writer.wait()
    one_line_exit_2(r, "/dev/stdin: larger than 1 MiB, the most plot.py reads")
    assert not (tmp_path / "out").exists()


def test_the_limits_are_in_help():
    r = subprocess.run([sys.executable, PLOT, "--help"], capture_output=True, text=True)
    assert r.returncode == 0
    text = " ".join(r.stdout.split())
    assert "the CSV at most 64 MiB" in text and "a record at most 64 KiB" in text, text


# --- issue 32 item 8: the paths printed are escaped -----------------------------------------


def test_the_paths_printed_are_escaped(tmp_path):
    """An -o folder with ESC, a C1 control and a byte that is not UTF-8: the paths on stdout
    show them as syncbench's escaper does, nothing a terminal obeys."""
    rows = subset(tmp_path, lambda row: row["scenario"] == "copy")
    out = os.fsencode(tmp_path) + b"/o\x1b[2J\xc2\x9b\xff"
    r = subprocess.run([sys.executable, PLOT, rows, b"-o", out], capture_output=True)
    assert r.returncode == 0, r.stderr
    assert os.listdir(out) == [b"copies.png"]
    assert r.stdout == os.fsencode(tmp_path) + b"/o\\x1b[2J\\xc2\\x9b\\xff/copies.png\n"


# --- issue 47 item 2: PNGs already there stay as they were on any failure ------------------


def old_figures(out):
    """An output folder holding older figures and, where readback.png goes, a folder."""
    out.mkdir()
    (out / "forced_sync_gemm.png").write_bytes(b"older forced")
    (out / "overhead_share.png").write_bytes(b"older overhead")
    (out / "readback.png").mkdir()
    return {"forced_sync_gemm.png": b"older forced", "overhead_share.png": b"older overhead"}


def assert_as_before(out, old):
    assert sorted(os.listdir(out)) == sorted(list(old) + ["readback.png"])  # no temporary
    for name, data in old.items():
        assert (out / name).read_bytes() == data, name
    assert (out / "readback.png").is_dir() and os.listdir(out / "readback.png") == []


def test_a_folder_in_a_figures_place_replaces_nothing(tmp_path):
    out = tmp_path / "D"
    old = old_figures(out)
    one_line_exit_2(plot(RUN_CSV, out), "readback.png: is a folder")
    assert_as_before(out, old)


def plot_with_replace(action, tmp_path):
    """plot.py on the real run into tmp_path/out (readback.png there a file), os.replace
    doing `action` on its third call: by then two PNGs have replaced older ones."""
    code = (f"import os, signal, sys; sys.path.insert(0, {str(ROOT / 'plot')!r}); import plot\n"
            f"real, calls = os.replace, []\n"
            f"def replace(a, b):\n"
            f"    calls.append(b)\n"
            f"    if len(calls) == 3:\n"
            f"        {action}\n"
            f"    return real(a, b)\n"
            f"os.replace = replace\n"
            f"sys.exit(plot.main([{str(RUN_CSV)!r}, '-o', {str(tmp_path / 'out')!r}]))\n")
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)


def old_files(out):
    out.mkdir()
    old = {name: f"older {name}".encode() for name in ("forced_sync_gemm.png",
                                                      "overhead_share.png", "readback.png")}
    for name, data in old.items():
        (out / name).write_bytes(data)
    return old


def assert_files_as_before(out, old):
    assert sorted(os.listdir(out)) == sorted(old)  # no new PNG, no temporary, no backup
    for name, data in old.items():
        assert (out / name).read_bytes() == data, name


def test_a_failed_replace_restores_the_figures_replaced(tmp_path):
    old = old_files(tmp_path / "out")
    r = plot_with_replace("raise PermissionError(1, 'Operation not permitted')", tmp_path)
    one_line_exit_2(r, "cannot write there: Operation not permitted")
    assert_files_as_before(tmp_path / "out", old)


@pytest.mark.parametrize("threads", [0, 4])
def test_ctrl_c_while_replacing_restores_the_figures_replaced(tmp_path, threads):
    """With other threads about (numpy's BLAS threads on a many-core host), the kernel may hand
    the process's SIGINT to one of them: a signal mask on the main thread does not hold it."""
    old = old_files(tmp_path / "out")
    spawn = (f"import threading, time; [threading.Thread(target=time.sleep, args=(30,), "
             f"daemon=True).start() for _ in range({threads})]; ")
    r = plot_with_replace(spawn + "os.kill(os.getpid(), signal.SIGINT)", tmp_path)
    one_line(r, 130, "interrupted")
    assert_files_as_before(tmp_path / "out", old)


# --- issue 47 item 11: stdout closed or full ------------------------------------------------


@pytest.mark.parametrize("how", ["closed", "full"])
def test_stdout_that_cannot_be_written_is_one_line_exit_1(tmp_path, how):
    rows = subset(tmp_path, lambda row: row["scenario"] == "copy")
    cmd = [sys.executable, PLOT, str(rows), "-o", str(tmp_path / "out")]
    if how == "closed":
        r = subprocess.run(cmd, stdout=None, stderr=subprocess.PIPE, text=True,
                           pass_fds=(), preexec_fn=lambda: os.close(1))
    else:
        with open("/dev/full", "w") as full:
            r = subprocess.run(cmd, stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 1, r.stderr
    assert r.stderr.splitlines() == ["plot.py: cannot write to standard output"], r.stderr
