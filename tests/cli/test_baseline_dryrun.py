"""The sync baseline's GPU tests (tests/gpu/test_baseline_*.py) run without a GPU, on a stand-in
for torch, transformers and the injection library (tests/cli/baseline_fakegpu.py) that makes
the syncs the real ones make at the same lines: their own logic (the programs' flags and
markers, the baseline files they write and edit, the reports, annotations and JUnit they read,
the plugin's sessions) is checked here on every `make test`, so that on the GPU only CUDA's
side is new. That they pass here says nothing of CUDA: tests/gpu/ is what does."""
import os
import pathlib
import subprocess
import sys

import pytest

from conftest import ROOT

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import baseline_fakegpu  # noqa: E402

FILES = sorted(p.name for p in (ROOT / "tests" / "gpu").glob("test_baseline_*.py"))


def test_every_gpu_baseline_file_is_dry_run():
    assert FILES == ["test_baseline_generate.py", "test_baseline_plugin.py",
                     "test_baseline_threads.py", "test_baseline_train.py"], FILES


@pytest.mark.parametrize("name", FILES)
def test_the_gpu_tests_pass_on_the_stand_in(tmp_path, name):
    fake = baseline_fakegpu.write(tmp_path / "fake")
    env = dict(os.environ, SYNCBENCH_BASELINE_DRYRUN=str(fake))
    for k in ("PYTEST_ADDOPTS", "GITHUB_ACTIONS", "TORCH_PYTHON"):
        env.pop(k, None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfEs", "-p", "no:cacheprovider",
                        f"--basetemp={tmp_path / 'bt'}", f"tests/gpu/{name}"],
                       capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert r.returncode == 0, r.stdout[-12000:] + r.stderr[-3000:]
    last = r.stdout.strip().splitlines()[-1]
    assert "passed" in last and "skipped" not in last and "failed" not in last, r.stdout
