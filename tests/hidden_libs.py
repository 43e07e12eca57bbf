"""Run the binary with some shared libraries hidden: in a private mount namespace
(`unshare --mount`, root or CAP_SYS_ADMIN), an empty file is bind-mounted over every file the
dynamic loader could find under those names, so dlopen sees a zero-length file and fails."""
import fnmatch
import glob
import os
import pathlib
import shutil
import subprocess

import pytest

from conftest import BIN

CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
CUBLAS = ["libcublas.so*", "libcublasLt.so*"]
ALL_CUDA = CUBLAS + ["libcudart.so*", "libcuda.so*", "libnvidia-ml.so*"]

# mount the first argument over every argument up to "--", then run the rest
SNIPPET = ('empty=$1; shift; while [ "$1" != -- ]; do '
           'mount --bind "$empty" "$1" || exit 97; shift; done; shift; exec "$@"')


def _dirs():
    dirs = [f"{CUDA_HOME}/lib64", "/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu",
            "/usr/lib64", "/usr/local/lib"]
    dirs += glob.glob("/usr/local/cuda*/lib64") + glob.glob("/usr/local/cuda*/targets/*/lib")
    return dirs


def library_files(patterns):
    """Every regular file (symlinks resolved) the loader could find under these names: the
    ldconfig cache, $CUDA_HOME/lib64, the toolkits' target folders, the system folders."""
    paths = []
    ldconfig = shutil.which("ldconfig") or "/sbin/ldconfig"
    try:
        out = subprocess.run([ldconfig, "-p"], capture_output=True, text=True).stdout
    except OSError:
        out = ""
    for line in out.splitlines():
        if "=>" in line:
            name, path = line.split("=>", 1)
            name = name.strip().split()[0]
            if any(fnmatch.fnmatch(name, p) for p in patterns):
                paths.append(path.strip())
    for d in _dirs():
        for p in patterns:
            paths += glob.glob(os.path.join(d, p))
    files = {os.path.realpath(p) for p in paths}
    return sorted(f for f in files if os.path.isfile(f))


def hidden_command(patterns, empty, *cmd):
    """The command line that runs `cmd` with the libraries matching `patterns` hidden."""
    return ["unshare", "--mount", "sh", "-c", SNIPPET, "sh", str(empty),
            *library_files(patterns), "--", *map(str, cmd)]


def run_hidden(patterns, empty, *args, timeout=300, **kw):
    """Runs the binary with `args`, the libraries matching `patterns` hidden."""
    r = subprocess.run(hidden_command(patterns, empty, BIN, *args), capture_output=True,
                       text=True, timeout=timeout, **kw)
    assert r.returncode != 97, f"bind mount failed: {r.stderr}"
    return r


@pytest.fixture(scope="session")
def empty_file(tmp_path_factory):
    """A zero-length file to mount over the libraries; skips where mount namespaces are not
    permitted (not root, no CAP_SYS_ADMIN, a restricted container)."""
    if not shutil.which("unshare"):
        pytest.skip("unshare (util-linux) not installed")
    d = tmp_path_factory.mktemp("hide")
    empty, target = d / "empty", d / "target"
    empty.write_bytes(b"")
    target.write_bytes(b"x")
    r = subprocess.run(["unshare", "--mount", "sh", "-c", SNIPPET, "sh", str(empty), str(target),
                        "--", "test", "!", "-s", str(target)], capture_output=True, text=True)
    if r.returncode != 0:
        why = r.stderr.strip() or f"exit {r.returncode}"
        pytest.skip(f"cannot hide files in a mount namespace here: {why}")
    return empty
