"""The Makefile as a new user and CI drive it, read with `make -n` (nothing is built): what
`make run` and `make test` build, user CFLAGS, and what `make test-asan` covers."""
import subprocess

import pytest

from conftest import ROOT


def make_n(tmp_path, *args):
    r = subprocess.run(["make", "-n", f"BUILD={tmp_path}/b", *args], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("target", ["test", "run"])
def test_make_builds_the_injection_library(tmp_path, target):
    """A fresh clone's `make run; make test`: both build libsyncbench_audit.so (17 audit tests
    failed when neither did)."""
    assert f"{tmp_path}/b/libsyncbench_audit.so" in make_n(tmp_path, target)


@pytest.mark.parametrize("target", ["all", "test", "validate", "install"])
def test_make_builds_the_waits_library(tmp_path, target):
    """The launcher preloads libsyncbench_waits.so from beside the injection library: what
    builds or installs that one builds or installs this one beside it."""
    out = make_n(tmp_path, target, f"DESTDIR={tmp_path}/d")
    assert f"{tmp_path}/b/libsyncbench_waits.so" in out
    if target == "install":
        assert f"{tmp_path}/d/usr/local/lib/syncbench/libsyncbench_waits.so" in out


def test_user_cflags_keep_what_the_code_needs(tmp_path):
    """`make CFLAGS=-O1`: the optimization is the user's, -std=c11 -D_GNU_SOURCE and the
    warnings stay (the build broke without _GNU_SOURCE)."""
    out = make_n(tmp_path, "V=1", "CFLAGS=-O1 -fsanitize=address", f"{tmp_path}/b/obj/src/main.o")
    line = next(ln for ln in out.splitlines() if "-c" in ln.split() and "src/main.c" in ln)
    for flag in ("-O1", "-fsanitize=address", "-std=c11", "-D_GNU_SOURCE", "-Werror"):
        assert flag in line.split(), (flag, line)


def test_test_asan_runs_the_cli_tests_on_a_sanitized_binary(tmp_path):
    out = make_n(tmp_path, "test-asan")
    assert f"{tmp_path}/b/asan-bin/syncbench" in out
    assert "-fsanitize=address,undefined" in out
    assert "pytest" in out and "tests/cli" in out
