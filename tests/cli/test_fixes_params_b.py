"""busy-stream, alloc, small-h2d and sched without a GPU: the plans, --list, and sched's hidden
helper subcommand (not in --help; its errors travel as one "@sb error ..." line on its stdout,
which the parent reports as its own). Their bad parameters (one line, exit 2, before any CUDA
call) are in test_cli.py's table."""
import subprocess

from conftest import BIN, NO_GPU, run


def test_list_shows_the_scenarios():
    r = run("--list", env=NO_GPU)
    assert r.returncode == 0
    for word in ["busy-stream", "other_us", "wait_us", "alloc", "malloc-free", "malloc-async",
                 "reuse", "small-h2d", "pageable", "pinned-async", "call_us", "sched", "auto",
                 "spin", "yield", "blocking-sync", "sync_us", "host_cpu_us", "step_us",
                 "saving_us", "saving_pct", "syncs_per_step"]:
        assert word in r.stdout, word


def plan(*args):
    r = run(*args, "--dry-run", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    return r.stdout.splitlines()


def test_default_plans():
    lines = plan("--scenario", "busy-stream,alloc,small-h2d,sched")
    assert lines[0] == "plan: 12 measurements in 4 entries"
    body = " ".join(lines[1:])
    for text in ["busy-stream    sync-device       other_us=1000;work_us=10  iters=10",
                 "alloc          malloc-free       bytes=1MiB  iters=100",
                 "small-h2d      pinned-async      bytes=4KiB  iters=200",
                 "sched          blocking-sync     work_us=200  iters=50"]:
        assert text in body, text


def test_a_saving_variant_brings_its_reference():
    """sync-stream is compared with sync-device, reuse with malloc-free, pinned-async with
    pageable: asking for the first plans the second too, measured first."""
    for scenario, variant, reference in [("busy-stream", "sync-stream", "sync-device"),
                                         ("alloc", "reuse", "malloc-free"),
                                         ("small-h2d", "pinned-async", "pageable")]:
        lines = plan("--scenario", scenario, "--variant", variant)
        assert len(lines) == 3, lines
        assert f" {reference} " in lines[1] and f" {variant} " in lines[2], lines


def test_sweeps():
    lines = plan("--scenario", "sched", "--set", "work_us=50,500", "--variant", "spin")
    assert lines[0] == "plan: 2 measurements in 2 entries"
    lines = plan("--scenario", "small-h2d", "--set", "bytes=4,64KiB")
    assert lines[0] == "plan: 4 measurements in 2 entries"


def test_worker_subcommand_is_hidden():
    r = run("--help")
    assert r.returncode == 0
    assert "__sched-worker" not in r.stdout
    assert "__sched-worker" not in run("--list").stdout


def test_worker_usage_error_is_exit_2():
    r = run("__sched-worker", env=NO_GPU)
    assert r.returncode == 2
    assert r.stderr.strip() == ("syncbench: __sched-worker: the sched scenario's helper process, "
                                "not for direct use (arguments: DEVICE MODE CONTEXT)")


def test_worker_reports_errors_on_its_channel():
    """An unknown mode, and a device that cannot be opened, are one "@sb error ..." line on stdout
    (what the parent reads and reports), and nothing on stderr (no second copy)."""
    r = subprocess.run([BIN, "__sched-worker", "0", "spinn", "sched/spinn work_us=1"],
                       input="", capture_output=True, text=True, env=NO_GPU, timeout=60)
    assert r.returncode == 2
    assert r.stdout == "@sb error __sched-worker: unknown mode 'spinn'\n"
    assert r.stderr == ""
    r = subprocess.run([BIN, "__sched-worker", "0", "spin", "sched/spin work_us=7"],
                       input="measure 1 7\n", capture_output=True, text=True,
                       env={"CUDA_VISIBLE_DEVICES": "", "PATH": "/usr/bin:/bin"}, timeout=60)
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert len(lines) == 1, r.stdout
    assert lines[0].startswith("@sb error cudaInitDevice(")
    assert " in sched/spin work_us=7 " in lines[0]  # the parent's measurement name
    assert r.stderr == ""
