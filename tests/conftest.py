"""Shared helpers for the CLI and GPU tests: where the binary is, how to run it, whether a GPU
is here, and how to read what the NVTX recording library wrote."""
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = os.environ.get("SYNCBENCH", str(ROOT / "build" / "syncbench"))
NVTX_LIB = os.environ.get("NVTX_RECORD_LIB", str(ROOT / "build" / "tests" / "libnvtx_record.so"))
MEASURE_TEST = str(ROOT / "build" / "tests" / "test_measure")


def run(*args, env=None, timeout=900, **kw):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([BIN, *map(str, args)], capture_output=True, text=True,
                          env=full_env, timeout=timeout, **kw)


def gpu_available():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False
    r = subprocess.run([smi, "-L"], capture_output=True, text=True)
    return r.returncode == 0 and "GPU" in r.stdout


def nvtx_tree(path):
    """Nested ranges from a recording: [(domain, name, colour, [children...]), ...]."""
    root = []
    stack = [root]
    for line in pathlib.Path(path).read_text().splitlines():
        parts = line.split("\t")
        if parts[0] == "push":
            node = (parts[1], parts[2], parts[3], [])
            stack[-1].append(node)
            stack.append(node[3])
        elif parts[0] == "pop":
            assert len(stack) > 1, "pop without push"
            stack.pop()
    assert len(stack) == 1, "ranges left open"
    return root


@pytest.fixture(scope="session", autouse=True)
def built_binary():
    if not os.path.exists(BIN):
        pytest.exit(f"{BIN} not built; run make first", returncode=2)
