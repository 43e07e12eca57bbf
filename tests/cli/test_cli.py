"""The built binary without a GPU: help, list, every bad input (exit 2, one line, before any
CUDA call) and the no-GPU exit 3.

Bad-input runs hide every GPU (CUDA_VISIBLE_DEVICES=""): had the binary touched CUDA before
validating, it would exit 3, not 2."""
import subprocess

import pytest

from conftest import BIN, NO_GPU, ROOT, assert_usage_error, run


def test_help_lists_every_option():
    r = run("--help")
    assert r.returncode == 0
    assert r.stdout.startswith("usage: syncbench")
    for opt in ["--scenario", "--variant", "--list", "--iters", "--warmup", "--warmup-time",
                "--min-reps", "--max-reps", "--max-time", "--target-cv", "--set", "--device",
                "--csv", "--json", "--markdown", "--config", "--dry-run", "--quiet", "--help",
                "--version"]:
        assert opt in r.stdout, opt


def test_plot_script_is_executable():
    """The README runs it as plot/plot.py."""
    import os
    assert os.access(ROOT / "plot" / "plot.py", os.X_OK)


def test_list_subcommand_and_option_agree():
    a, b = run("list"), run("--list")
    assert a.returncode == b.returncode == 0
    assert a.stdout == b.stdout


def test_write_error_on_stdout_is_exit_1():
    with open("/dev/full", "w") as full:
        r = subprocess.run([BIN, "--list"], stdout=full, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 1
    assert r.stderr.strip() == "syncbench: cannot write to standard output"


def test_version():
    r = run("--version")
    assert r.returncode == 0
    assert r.stdout.startswith("syncbench ")


def test_list_shows_scenarios_variants_params():
    r = run("--list", env=NO_GPU)
    assert r.returncode == 0
    for word in ["small-gemm", "big-gemm", "readback", "copy", "double-buffer",
                 "pending-pageable", "print-pending", "h2d-pinned", "double-buffered", "async", "sync-device", "sync-stream", "sync-event",
                 "sync-readback", "sync-item", "dtype", "fp16|bf16|fp32", "tf32", "wall_us_per_iter",
                 "TFLOPs"]:
        assert word in r.stdout, word


BAD = [
    (["--iters", "0"], "--iters 0: out of range"),
    (["--iters", "-5"], "--iters -5: out of range"),
    (["--iters", "abc"], "--iters abc: not a number"),
    (["--iters", "99999999999999999999"], "--iters 99999999999999999999: out of range"),
    (["--scenario", "smal-gemm"], "unknown scenario 'smal-gemm'; did you mean 'small-gemm'?"),
    (["--scenario", "nosuch"], "unknown scenario 'nosuch' (see --list)"),
    (["--variant", "sync-devise"], "unknown variant 'sync-devise'; did you mean 'sync-device'?"),
    (["--variant", "warp"], "unknown variant 'warp' (one of: async, sync-device"),
    (["--set", "szie=3"], "--set szie: unknown parameter for small-gemm, big-gemm"),
    (["--set", "m=abc"], "--set m=abc: not an integer"),
    (["--set", "m=0"], "--set m=0: out of range (1 to 262144)"),
    (["--set", "dtype=fp8"], "--set dtype=fp8: unknown value"),
    (["--set", "tf32=2"], "--set tf32=2: not a boolean"),
    (["--set", "tf32=1"], "tf32=1 applies to dtype=fp32 only"),
    (["--set", "m"], "--set m: expected KEY=VALUE"),
    (["--device", "-1"], "--device -1: out of range"),
    (["--device", "x"], "--device x: not a number"),
    (["--csv", "/nonexistent-dir/out.csv"], "folder '/nonexistent-dir' does not exist"),
    (["--frobnicate"], "unknown option '--frobnicate'"),
    (["--scenaro", "small-gemm"], "did you mean '--scenario'?"),
    (["--iters"], "option '--iters' needs a value"),
    (["--csv"], "option '--csv' needs a value"),
    (["--max-time", "-1"], "--max-time -1: out of range"),
    (["--target-cv", "0"], "--target-cv 0: out of range"),
    (["stray"], "unexpected argument 'stray'"),
    (["--scenario", "readback", "--set", "pending_us=0"], "--set pending_us=0: out of range"),
    (["--scenario", "readback", "--set", "pending_us=10000001"], "pending_us=10000001: out of range"),
    (["--scenario", "readback", "--set", "pending=sleep"], "--set pending=sleep: unknown value"),
    (["--scenario", "copy", "--set", "bytes=4097"], "bytes=4097 is not a multiple of 4"),
    (["--scenario", "copy", "--set", "bytes=12XB"], "--set bytes=12XB: not a size"),
    (["--scenario", "copy", "--set", "bytes=65GiB"], "--set bytes=65GiB: out of range"),
    (["--scenario", "copy", "--variant", "h2d-pinnd"], "did you mean 'h2d-pinned'?"),
    (["--scenario", "copy", "--variant", "sync-device"], "unknown variant 'sync-device'"),
    (["--scenario", "double-buffer", "--set", "chunks=7"], "does not divide into chunks=7"),
    (["--scenario", "double-buffer", "--set", "chunks=0"], "--set chunks=0: out of range"),
    (["__launch-cost", "abc"], "__launch-cost: the audit's calibration, not for direct use"),
    (["__launch-cost", "0"], "calls per repetition, 1 to 100000"),
]

# the sync-free fixes, part A (their plans: test_fixes_params_a.py)
BAD_FIXES_A = [
    (["--scenario", "coalesce", "--set", "values=0"],
     "coalesce: --set values=0: out of range (1 to 4096)"),
    (["--scenario", "coalesce", "--set", "values=4097"], "--set values=4097: out of range"),
    (["--scenario", "coalesce", "--set", "work_us=-1"], "--set work_us=-1: out of range"),
    (["--scenario", "coalesce", "--set", "values=3.5"], "--set values=3.5: not an integer"),
    (["--scenario", "log-every", "--set", "every=0"],
     "log-every: --set every=0: out of range (1 to 1000000)"),
    (["--scenario", "log-every", "--set", "kernels=0"], "--set kernels=0: out of range"),
    (["--scenario", "log-every", "--set", "work_us=100001"], "--set work_us=100001: out of range"),
    (["--scenario", "graph", "--set", "kernels=0"],
     "graph: --set kernels=0: out of range (1 to 10000)"),
    (["--scenario", "graph", "--set", "kernels=10001"], "--set kernels=10001: out of range"),
    (["--scenario", "dynamic-shape", "--set", "n=0"],
     "dynamic-shape: --set n=0: out of range (1 to 268435456)"),
    (["--scenario", "dynamic-shape", "--set", "n=268435457"], "--set n=268435457: out of range"),
    (["--scenario", "dynamic-shape", "--set", "density=-1"],
     "--set density=-1: out of range (0 to 100)"),
    (["--scenario", "dynamic-shape", "--set", "density=101"],
     "--set density=101: out of range (0 to 100)"),
    (["--scenario", "dynamic-shape", "--set", "density=0.5"], "--set density=0.5: not an integer"),
    (["--scenario", "device-branch", "--set", "work_us=1000001"],
     "device-branch: --set work_us=1000001: out of range (0 to 1000000)"),
    (["--scenario", "device-branch", "--set", "every=2"],
     "--set every: unknown parameter for device-branch"),
    (["--scenario", "graph", "--variant", "graphs"], "unknown variant 'graphs'; did you mean"),
    (["--scenario", "log-every", "--variant", "every_n"], "did you mean 'every-n'?"),
    (["--scenario", "coalesce", "--variant", "async"], "unknown variant 'async'"),
]

# part B (test_fixes_params_b.py)
BAD_FIXES_B = [
    (["--scenario", "busy-stream", "--set", "other_us=0"], "--set other_us=0: out of range"),
    (["--scenario", "busy-stream", "--set", "other_us=1000001"],
     "--set other_us=1000001: out of range"),
    (["--scenario", "busy-stream", "--set", "work_us=0"], "--set work_us=0: out of range"),
    (["--scenario", "busy-stream", "--set", "work_us=ten"], "--set work_us=ten: not an integer"),
    (["--scenario", "busy-stream", "--variant", "sync-streem"], "did you mean 'sync-stream'?"),
    (["--scenario", "alloc", "--set", "bytes=4097"], "bytes=4097 is not a multiple of 4"),
    (["--scenario", "alloc", "--set", "bytes=0"], "--set bytes=0: out of range"),
    (["--scenario", "alloc", "--set", "bytes=17GiB"], "--set bytes=17GiB: out of range"),
    (["--scenario", "alloc", "--variant", "malloc-asnyc"], "did you mean 'malloc-async'?"),
    (["--scenario", "small-h2d", "--set", "bytes=6"], "bytes=6 is not a multiple of 4"),
    (["--scenario", "small-h2d", "--set", "bytes=2GiB"], "--set bytes=2GiB: out of range"),
    (["--scenario", "small-h2d", "--set", "bytes=4XB"], "--set bytes=4XB: not a size"),
    (["--scenario", "sched", "--set", "work_us=0"], "--set work_us=0: out of range"),
    (["--scenario", "sched", "--set", "work_us=1000001"], "--set work_us=1000001: out of range"),
    (["--scenario", "sched", "--variant", "blocking-synk"], "did you mean 'blocking-sync'?"),
    (["--scenario", "sched", "--set", "other_us=5"], "--set other_us: unknown parameter for sched"),
]


ALL_BAD = BAD + BAD_FIXES_A + BAD_FIXES_B


@pytest.mark.parametrize("args,message", ALL_BAD, ids=[" ".join(a) for a, _ in ALL_BAD])
def test_bad_input_is_one_line_exit_2(args, message, tmp_path):
    r = run(*args, env=NO_GPU, cwd=tmp_path)
    assert_usage_error(r, message)
    assert list(tmp_path.iterdir()) == []  # nothing written


@pytest.mark.parametrize("value,message", [
    ("2", "SYNCBENCH_RECORDING_TURNS=2: 0 or 1"),
    ("1", "SYNCBENCH_RECORDING_TURNS=1: only under `syncbench audit --gpu-activity`"),
])
def test_recording_turns_bad_value_is_one_line_exit_2(value, message, tmp_path):
    """The replay validation's hook: a value it does not know, or turns outside the audit, is
    bad input before any GPU work (exit 2, not the missing GPU's 3)."""
    env = dict(NO_GPU, CUDA_INJECTION64_PATH="", SYNCBENCH_RECORDING_TURNS=value)
    r = run("--scenario", "small-gemm", "--csv", tmp_path / "out.csv", env=env)
    assert_usage_error(r, message)
    assert list(tmp_path.iterdir()) == []


def test_bad_csv_leaves_no_file(tmp_path):
    target = tmp_path / "out.csv"
    r = run("--scenario", "nosuch", "--csv", target, env=NO_GPU)
    assert r.returncode == 2
    assert list(tmp_path.iterdir()) == []


def test_no_gpu_is_exit_3_one_line(tmp_path):
    r = run("--scenario", "small-gemm", "--csv", tmp_path / "out.csv", env=NO_GPU)
    assert r.returncode == 3
    lines = r.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("syncbench: no usable CUDA device")
    assert list(tmp_path.iterdir()) == []  # the CSV's temporary file is gone too


# ---- suites (--config, --dry-run) and compare, all without a GPU ----

def test_dry_run_prints_the_plan_without_a_gpu():
    r = run("--config", "configs/default.ini", "--dry-run", env=NO_GPU, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    n = int(lines[0].split()[1])
    assert lines[0].startswith(f"plan: {n} measurements in ")
    assert len(lines) == n + 1
    for scenario in ["small-gemm", "big-gemm", "readback", "copy", "double-buffer"]:
        assert any(f" {scenario} " in line for line in lines[1:]), scenario


@pytest.mark.parametrize("suite", ["default", "ci", "seeds"])
def test_shipped_suites_are_valid(suite):
    r = run("--config", f"configs/{suite}.ini", "--dry-run", env=NO_GPU, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def test_dry_run_applies_command_line_overrides():
    r = run("--config", "configs/ci.ini", "--scenario", "copy", "--set", "bytes=1MiB",
            "--iters", "9", "--dry-run", env=NO_GPU, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    body = r.stdout.splitlines()[1:]
    assert body and all(" copy " in line and "bytes=1MiB" in line and "iters=9" in line
                        for line in body)


def test_config_error_names_file_and_line(tmp_path):
    ini = tmp_path / "x.ini"
    ini.write_text("[small-gemm]\niters = 10\n\nitres = 5\n")
    r = run("--config", ini, "--dry-run", env=NO_GPU)
    assert r.returncode == 2
    assert r.stderr.strip() == (f"syncbench: {ini}:4: unknown key 'itres' in [small-gemm]; "
                                "did you mean 'iters'?")


def test_bad_config_fails_before_the_gpu(tmp_path):
    ini = tmp_path / "x.ini"
    ini.write_text("[a]\nscenario = copy\n[a]\nscenario = copy\n")
    r = run("--config", ini, env=NO_GPU)  # no --dry-run: still 2, not 3
    assert r.returncode == 2
    assert ":3: duplicate section [a] (first at line 1)" in r.stderr


HEADER = ("run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,"
          "metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n")


def csv_file(path, rows):
    text = HEADER
    for scenario, variant, metric, better, median, cv in rows:
        text += (f"r,t,h,GPU,d,13.0,{scenario},{variant},p=1,10,20,{metric},us,{better},"
                 f"{median},{median},{median * cv / 100},{median},{median},{median},{median},"
                 f"{cv},\n")
    path.write_text(text)
    return path


def test_compare_verdicts_and_exit_codes(tmp_path):
    base = csv_file(tmp_path / "base.csv", [("copy", "h2d-pinned", "GBps", "higher", 55, 0.2),
                                            ("small-gemm", "async", "kernel_us", "lower", 4, 0.5)])
    same = csv_file(tmp_path / "same.csv", [("copy", "h2d-pinned", "GBps", "higher", 54.8, 0.3),
                                            ("small-gemm", "async", "kernel_us", "lower", 4.05,
                                             0.5)])
    worse = csv_file(tmp_path / "worse.csv", [("copy", "h2d-pinned", "GBps", "higher", 40, 0.3),
                                              ("small-gemm", "async", "kernel_us", "lower", 4,
                                               0.5)])
    r = run("compare", base, same)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 REGRESSION" in r.stdout
    r = run("compare", base, worse, "--markdown", tmp_path / "cmp.md")
    assert r.returncode == 1
    assert "REGRESSION" in r.stdout
    assert r.stderr.strip() == "syncbench: compare: 1 regression beyond 5 % and the noise"
    assert "| **REGRESSION** |" in (tmp_path / "cmp.md").read_text()
    assert run("compare", base, worse, "--metric", "kernel_us").returncode == 0
    assert run("compare", base, worse, "--threshold", "50").returncode == 0


@pytest.mark.parametrize("args,message", [
    ([], "compare: expected BASELINE.csv CURRENT.csv"),
    (["a.csv"], "compare: expected BASELINE.csv CURRENT.csv"),
    (["/nonexistent.csv", "/nonexistent.csv"], "/nonexistent.csv: cannot open"),
    (["--threshold", "x", "a", "b"], "compare: --threshold x: not a number (expected 5% or 5"),
    (["--bogus", "a", "b"], "compare: unknown option '--bogus'"),
])
def test_compare_bad_usage(args, message):
    r = run("compare", *args)
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1
    assert message in r.stderr


def test_compare_malformed_csv_names_the_line(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text(HEADER + "r,t,h,GPU,d,13.0,copy,h2d,p=1,10,20,GBps,us,higher,fast,1,0,1,1,1,"
                            "1,0,\n")
    r = run("compare", bad, bad)
    assert r.returncode == 2
    assert r.stderr.strip() == f"syncbench: {bad}:2: median 'fast' is not a number"


@pytest.mark.parametrize("arg", ["a\nb", "x\x1b[31mred", "tab\there"])
def test_user_text_in_messages_is_escaped(arg):
    r = run("--scenario", arg, env=NO_GPU)
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert "\x1b" not in r.stderr
    assert "unknown scenario" in r.stderr


def test_file_text_in_tables_is_escaped(tmp_path):
    """compare's table shows fields of the user's CSVs: control characters never reach the
    terminal raw, and in Markdown no cell can break the table or inject HTML."""
    bad = tmp_path / "odd.csv"
    bad.write_text(HEADER + 'r,t,h,G,d,13,"sc|<b>x</b>\x1b[31m","v\nw",p=1,1,20,m,us,lower,'
                            "10,10,0.1,10,10,10,10,1,\n")
    r = run("compare", bad, bad, "--markdown", tmp_path / "cmp.md")
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout
    table = [line for line in r.stdout.splitlines() if line.startswith("sc|")]
    assert len(table) == 1 and "\\x1b[31m" in table[0] and "v\\nw" in table[0]
    md = (tmp_path / "cmp.md").read_text()
    assert "| sc\\|&lt;b&gt;x&lt;/b&gt;\\x1b[31m | v\\nw |" in md


def test_threshold_for_one_metric(tmp_path):
    """--threshold-for gives a metric that moves more between machines its own threshold."""
    base = csv_file(tmp_path / "base.csv", [("copy", "h2d-pinned", "GBps", "higher", 55, 0.2),
                                            ("small-gemm", "async", "kernel_us", "lower", 4, 0.2)])
    cur = csv_file(tmp_path / "cur.csv", [("copy", "h2d-pinned", "GBps", "higher", 50.6, 0.2),
                                          ("small-gemm", "async", "kernel_us", "lower", 4.4, 0.2)])
    r = run("compare", base, cur)  # -8 % GBps and +10 % kernel_us: both regressions
    assert r.returncode == 1 and r.stdout.count("REGRESSION ") + r.stdout.count("REGRESSION\n") >= 2
    r = run("compare", base, cur, "--threshold-for", "GBps=12")
    assert r.returncode == 1  # kernel_us still is one
    lines = {line.split()[3]: line.split()[-1] for line in r.stdout.splitlines()
             if line.startswith(("copy ", "small-gemm "))}
    assert lines == {"GBps": "same", "kernel_us": "REGRESSION"}, r.stdout
    r = run("compare", base, cur, "--threshold-for", "GBps")
    assert r.returncode == 2 and "expected METRIC=PCT" in r.stderr


# ---- fixes from the review of the house ----

def test_dry_run_checks_the_outputs(tmp_path):
    r = run("--dry-run", "--csv", "/nonexistent-syncbench-dir/x.csv", env=NO_GPU)
    assert r.returncode == 2 and "folder '/nonexistent-syncbench-dir' does not exist" in r.stderr
    assert run("--dry-run", "--json", "-", env=NO_GPU).returncode == 0  # stdout: no table then


def test_min_reps_is_checked_after_the_suite_is_merged(tmp_path):
    ini = tmp_path / "mr.ini"
    ini.write_text("[small-gemm]\nmax_reps = 1000000\n")
    r = run("--config", ini, "--min-reps", "200000", "--dry-run", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    r = run("--min-reps", "200000", "--dry-run", env=NO_GPU)
    assert r.returncode == 2 and "--min-reps 200000 is above --max-reps 100000" in r.stderr


def test_a_bad_override_names_the_command_line():
    r = run("--config", "configs/ci.ini", "--scenario", "small-gemm", "--set", "m=0",
            "--dry-run", env=NO_GPU, cwd=ROOT)
    assert r.returncode == 2
    assert r.stderr.strip() == ("syncbench: small-gemm: --set m=0: out of range (1 to 262144) "
                                "(over [small-gemm] of configs/ci.ini)")


def test_threshold_for_given_twice(tmp_path):
    base = csv_file(tmp_path / "b.csv", [("copy", "h2d-pinned", "GBps", "higher", 55, 0.2)])
    r = run("compare", base, base, "--threshold-for", "GBps=12", "--threshold-for", "x=1")
    assert r.returncode == 2 and "given twice" in r.stderr
    r = run("compare", base, base, "--threshold-for", "GBps=12,GBps=3")
    assert r.returncode == 2 and "GBps given twice" in r.stderr


@pytest.fixture
def installed(tmp_path):
    """The binary as make install lays it out: PREFIX/bin/syncbench and the suites in
    PREFIX/share/syncbench/configs (the wheel's syncbench/_bin and syncbench/share alike)."""
    import os
    import shutil
    prefix = tmp_path / "prefix"
    (prefix / "bin").mkdir(parents=True)
    exe = prefix / "bin" / "syncbench"
    try:
        os.link(BIN, exe)  # /proc/self/exe is this path (a symlink would resolve to BIN's)
    except OSError:
        shutil.copy2(BIN, exe)
    configs = prefix / "share" / "syncbench" / "configs"
    configs.mkdir(parents=True)
    (configs / "mine.ini").write_text("[small-gemm]\nvariants = async\n")
    shutil.copy(ROOT / "configs" / "seeds.ini", configs / "seeds.ini")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    return exe, configs, elsewhere


def test_config_bare_name_finds_the_installed_suites(installed):
    """`--config seeds.ini` worked only inside a checkout (issue 48)."""
    exe, configs, elsewhere = installed
    for name in ("seeds.ini", "mine.ini"):
        r = subprocess.run([str(exe), "--config", name, "--dry-run"], capture_output=True,
                           text=True, cwd=elsewhere, env=dict(NO_GPU))
        assert r.returncode == 0, r.stderr
    here = subprocess.run([str(BIN), "--config", str(configs / "mine.ini"), "--dry-run"],
                          capture_output=True, text=True, env=dict(NO_GPU))
    assert r.stdout == here.stdout


def test_config_a_file_here_wins_and_a_path_is_never_looked_up(installed):
    exe, configs, elsewhere = installed
    (elsewhere / "mine.ini").write_text("[copy]\nvariants = h2d-pinned\n")
    r = subprocess.run([str(exe), "--config", "mine.ini", "--dry-run"], capture_output=True,
                       text=True, cwd=elsewhere, env=dict(NO_GPU))
    assert r.returncode == 0 and "copy" in r.stdout and "small-gemm" not in r.stdout, r.stdout
    r = subprocess.run([str(exe), "--config", "sub/seeds.ini", "--dry-run"], capture_output=True,
                       text=True, cwd=elsewhere, env=dict(NO_GPU))
    assert r.returncode == 2
    assert r.stderr == ("syncbench: --config sub/seeds.ini: cannot open: No such file or "
                        "directory\n"), r.stderr


def test_config_a_name_found_nowhere_says_where_it_looked(installed):
    exe, configs, elsewhere = installed
    r = subprocess.run([str(exe), "--config", "nope.ini", "--dry-run"], capture_output=True,
                       text=True, cwd=elsewhere, env=dict(NO_GPU))
    assert r.returncode == 2
    assert r.stderr == ("syncbench: --config nope.ini: cannot open: No such file or directory; "
                        f"nor is it in {exe.parent}/../share/syncbench/configs\n"), r.stderr
