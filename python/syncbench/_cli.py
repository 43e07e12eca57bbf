"""`syncbench` as the wheel installs it: the console script runs the binary packaged beside this
module (syncbench/_bin/syncbench) with the same arguments, in place of this process, so that
`syncbench audit -- python train.py` works from the environment's bin/ as the binary itself
does. The binary finds its libraries beside it; this Python's site-packages folders go first in
SYNCBENCH_SITE_PACKAGES, where it looks for NVIDIA's CUDA wheels: CUPTI (the audit) and cuBLAS
(the GEMMs) when no toolkit has them."""
import os
import sys
from pathlib import Path

from ._cupti import site_folders


def binary():
    return Path(__file__).resolve().parent / "_bin" / "syncbench"


def main():
    exe = binary()
    if not os.access(exe, os.X_OK):
        sys.stderr.write(f"syncbench: {exe} not found: this syncbench was installed without its "
                         f"binary; install the wheel, or build it (make; make install)\n")
        return 127
    env = dict(os.environ)
    sites = site_folders()
    old = env.get("SYNCBENCH_SITE_PACKAGES")
    if sites:
        env["SYNCBENCH_SITE_PACKAGES"] = os.pathsep.join(sites + ([old] if old else []))
    os.execve(exe, ["syncbench", *sys.argv[1:]], env)


if __name__ == "__main__":
    sys.exit(main())
