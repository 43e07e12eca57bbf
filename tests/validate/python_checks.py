"""What the Python package's blocks cost (docs/python.md, "What it costs"), with the script of
tests/gpu/test_python_syncs.py (COST): an empty `no_syncs()` block entered and left (the median
of 7 rounds of 10 000), and a sync inside a block against the same `.item()` outside one."""
import json
import subprocess

from registry import check, need_torch, shared, workdir

import test_python_syncs as tps

GROUP = "python"


@shared
def cost():
    py = need_torch()
    r = subprocess.run([py, "-c", tps.COST], capture_output=True, text=True, env=tps.env(),
                       cwd=workdir("pycost"), timeout=900)
    if r.returncode != 0:
        raise RuntimeError(f"the cost script: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    return json.loads(r.stdout.strip().splitlines()[-1])


@check("python: an empty no_syncs() block, entered and left (docs: 2.1 to 3.3 us, \"a few "
       "microseconds\")", "<= 5 us", GROUP)
def empty_block():
    x = cost()
    return (f"{x['empty_block_us']:.2f} us (an empty loop turn {x['empty_loop_us']:.3f} us)",
            x["empty_block_us"] <= 5.0)


@check("python: a sync inside a count_syncs() block over the same .item() outside one "
       "(docs: 15.9 to 29.0 us)", "reported", GROUP, held=False)
def sync_in_a_block():
    x = cost()
    return (f"+{x['per_sync_us']:.1f} us ({x['item_inside_us']:.1f} vs "
            f"{x['item_outside_us']:.1f} us)", None)
