"""compute-sanitizer's racecheck and synccheck of the GEMM scenarios, which run cuBLAS's kernels
and take minutes (make test runs memcheck on them and the three tools on every other scenario):
the part of tests/gpu/test_sanitizer.py's full matrix make test leaves out. --full only."""
import os
import re
import subprocess
import sys

from registry import ROOT, check, workdir

GROUP = "sanitizer"


@check("compute-sanitizer racecheck and synccheck of small-gemm and big-gemm (cuBLAS's "
       "kernels; tests/gpu/test_sanitizer.py, SYNCBENCH_SANITIZER=full)", "0 errors", GROUP,
       full=True)
def gemm_race_and_sync():
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        f"--basetemp={workdir('sanitizer')}",
                        str(ROOT / "tests" / "gpu" / "test_sanitizer.py"),
                        "-k", "gemm and (racecheck or synccheck)"],
                       capture_output=True, text=True, cwd=ROOT, timeout=3600,
                       env={**os.environ, "SYNCBENCH_SANITIZER": "full"})
    last = (r.stdout.strip().splitlines() or ["(no output)"])[-1].strip("= ")
    if r.returncode not in (0, 1) or "skipped" in last and "passed" not in last:
        raise RuntimeError(f"pytest: exit {r.returncode}: {last}")
    return last, r.returncode == 0 and not re.search(r"\d+ (failed|error)", last)
