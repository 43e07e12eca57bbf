"""Issue 48 item 7: the pytest plugin on a machine where nothing can be recorded (no GPU, no
driver, no CUPTI, or every GPU hidden). A test marked no_syncs, or using the syncbench_syncs
fixture, still fails (a gate that could not check never passes), with one line: the cause as
SyncbenchUnavailable says it, no traceback of the package's internals (it was 30 lines a test).
--syncbench-skip-unavailable, for a CPU-only CI job, reports those tests as skipped with the
cause: never as passed, their bodies never run. Unmarked tests are untouched, and a block a test
opens itself (count_syncs() in its body) raises SyncbenchUnavailable with or without the
option."""
import re
import xml.etree.ElementTree as ET

import pytest

from test_python_package import NO_DEVICE, pytest_run

CAUSE = "syncbench.SyncbenchUnavailable: syncbench: cannot record CUDA calls: no "
OPTION = "--syncbench-skip-unavailable"
# what the package's internals look like in a traceback: none of it in a marked test's failure
INTERNALS = ("Traceback", "_native.py", "syncbench/__init__.py", "pytest_plugin.py",
             "def attach", "raise SyncbenchUnavailable", "During handling")


def assert_no_internals(out):
    for internal in INTERNALS:
        assert internal not in out, out
    # no exception lines of a traceback (pytest's progress line "E    [100%]" is not one)
    assert not re.search(r"^E +(?!\[ *\d+%\])\S", out, re.M), out


MARKED = """
    import pathlib
    import pytest

    @pytest.mark.no_syncs
    def test_marked():
        pathlib.Path({ran!r}).write_text("ran")

    @pytest.mark.no_syncs(allow=["train.py:step"], scope="process")
    def test_marked_allow():
        assert False, "the body ran"

    def test_plain():
        pass
"""


def section(stdout, title):
    """The lines of a FAILURES or ERRORS entry: from its ____ title ____ line to the next
    header."""
    lines = stdout.splitlines()
    head = [i for i, l in enumerate(lines) if re.fullmatch(rf"_+ {re.escape(title)} _+", l)]
    assert len(head) == 1, stdout
    out = []
    for line in lines[head[0] + 1:]:
        if re.match(r"^(_{3,}|={3,}) ", line):
            break
        out.append(line)
    return out


def assert_one_line(stdout, title, what):
    body = section(stdout, title)
    assert len(body) == 1, "\n".join(body)
    line = body[0]
    assert line.startswith(f"{what}: {CAUSE}"), line
    assert "no CUDA driver: libcuda.so.1" in line or "no usable CUDA device: cuInit" in line, line
    assert line.endswith(f"({OPTION} skips it)"), line
    return line


@pytest.mark.parametrize("tb", [[], ["--tb=short"], ["--tb=long"]])
def test_a_marked_test_fails_with_one_line_of_cause(tmp_path, tb):
    ran = tmp_path / "ran"
    r = pytest_run(tmp_path, MARKED.format(ran=str(ran)), "-rf", *tb)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "2 failed, 1 passed" in r.stdout, out
    assert not ran.exists()  # never ran unchecked
    assert "the body ran" not in out
    for test in ("test_marked", "test_marked_allow"):
        assert_one_line(r.stdout, test, "@pytest.mark.no_syncs")
        assert f"FAILED test_inner.py::{test}" in r.stdout, out
    assert_no_internals(out)


def test_the_skip_option_reports_them_skipped_with_the_cause(tmp_path):
    ran = tmp_path / "ran"
    junit = tmp_path / "junit.xml"
    r = pytest_run(tmp_path, MARKED.format(ran=str(ran)), OPTION, "-rs", f"--junitxml={junit}")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "1 passed, 2 skipped" in r.stdout, out
    assert "failed" not in r.stdout and "error" not in r.stdout, out
    assert not ran.exists()  # skipped: the body never ran
    skips = [l for l in r.stdout.splitlines() if l.startswith("SKIPPED ")]
    assert len(skips) == 2, out
    # each at its own test's line, the cause in full
    for skip, line in zip(skips, (5, 9)):
        assert skip.startswith(f"SKIPPED [1] test_inner.py:{line}: @pytest.mark.no_syncs: "
                               f"{CAUSE}"), skip
        assert OPTION not in skip
    assert_no_internals(out)
    cases = {c.get("name"): c for c in ET.parse(junit).getroot().iter("testcase")}
    for test in ("test_marked", "test_marked_allow"):
        skipped = cases[test].find("skipped")
        assert skipped is not None and CAUSE in skipped.get("message"), ET.tostring(cases[test])
        assert cases[test].find("failure") is None
    assert list(cases["test_plain"]) == []  # passed


def test_the_skip_option_with_the_baseline_update(tmp_path):
    """--syncbench-update-baseline counts the marked tests' calls (no_syncs's count_syncs):
    the same one line, the same skip."""
    args = ("--syncbench-baseline", str(tmp_path / "syncs.ini"), "--syncbench-update-baseline")
    r = pytest_run(tmp_path, MARKED.format(ran=str(tmp_path / "ran")), *args)
    assert r.returncode == 1, r.stdout + r.stderr
    assert_one_line(r.stdout, "test_marked", "@pytest.mark.no_syncs")
    r = pytest_run(tmp_path, MARKED.format(ran=str(tmp_path / "ran")), *args, OPTION)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 passed, 2 skipped" in r.stdout, r.stdout


def test_the_fixture_errors_with_one_line_and_skips_with_the_option(tmp_path):
    code = """
        def test_counts(syncbench_syncs):
            assert syncbench_syncs.blocking == 0
    """
    r = pytest_run(tmp_path, code, "-rE")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 error" in r.stdout
    assert_one_line(r.stdout, "ERROR at setup of test_counts", "fixture syncbench_syncs")
    assert_no_internals(r.stdout)
    r = pytest_run(tmp_path, code, OPTION, "-rs")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "1 skipped" in r.stdout and "error" not in r.stdout, r.stdout
    assert f"SKIPPED [1] test_inner.py:2: fixture syncbench_syncs: {CAUSE}" in r.stdout, r.stdout


@pytest.mark.parametrize("args", [[], [OPTION]])
def test_unmarked_tests_are_unaffected(tmp_path, args):
    r = pytest_run(tmp_path, """
        def test_ok():
            pass
        def test_bad():
            assert 1 == 2
    """, *args, "-rfs")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "1 failed, 1 passed" in r.stdout, r.stdout
    assert "skipped" not in r.stdout and "syncbench" not in r.stdout, r.stdout
    assert "E       assert 1 == 2" in r.stdout, r.stdout  # its own traceback, as ever


@pytest.mark.parametrize("args", [[], [OPTION]])
def test_a_block_in_the_test_itself_still_raises(tmp_path, args):
    """The option covers the marker and the fixture, which the plugin opens; a block the test
    opens itself raises SyncbenchUnavailable where it is, option or not (the test's own code:
    catch it there to skip)."""
    r = pytest_run(tmp_path, """
        import syncbench
        def test_direct():
            with syncbench.count_syncs() as s:
                pass
        def test_no_syncs():
            with syncbench.no_syncs():
                pass
    """, *args, "-rf", "--tb=short")
    assert r.returncode == 1, r.stdout + r.stderr
    assert "2 failed" in r.stdout and "skipped" not in r.stdout, r.stdout
    assert r.stdout.count(f"E   {CAUSE}") == 2, r.stdout


@pytest.mark.parametrize("args", [[], [OPTION]])
def test_the_library_not_found_is_the_one_line(tmp_path, args):
    env = dict(NO_DEVICE, SYNCBENCH_AUDIT_LIB="/nonexistent/libsyncbench_audit.so")
    r = pytest_run(tmp_path, MARKED.format(ran=str(tmp_path / "ran")), *args, "-rs", env=env)
    cause = ("@pytest.mark.no_syncs: syncbench.SyncbenchUnavailable: syncbench: "
             "libsyncbench_audit.so not found (build it with make, or set SYNCBENCH_AUDIT_LIB); "
             "looked at: /nonexistent/libsyncbench_audit.so (absent)")
    if args:
        assert r.returncode == 0, r.stdout + r.stderr
        assert f"SKIPPED [1] test_inner.py:5: {cause}" in r.stdout, r.stdout
    else:
        assert r.returncode == 1, r.stdout + r.stderr
        assert section(r.stdout, "test_marked") == [f"{cause} ({OPTION} skips it)"], r.stdout


def test_the_option_is_in_help(tmp_path):
    r = pytest_run(tmp_path, "def test_x(): pass\n", "--help")
    assert r.returncode == 0, r.stderr
    assert OPTION in r.stdout
