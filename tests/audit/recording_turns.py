"""What the default audit mode costs a loop, measured within one process (issue 49): under
`syncbench audit`, after the program's warm-up, B timed blocks of the same steps turn the
audit's recording on and off, pair by pair in both orders (on-off, off-on; a steady drift
cancels over each four blocks), through the injection library's
syncbench_calibration_recording (off: no API callback is enabled and nothing is recorded; the
stretch becomes a "pause" record). The
host's speed moves between processes by 10 % on a cloud VM, more than the cost looked for, but
holds steady within one. What stays on while the recording is off is not in the figure: CUPTI
loaded and subscribed, and the waits library's hooks (docs/audit.md).

    {"variant": "recording-turns", "steps": per block, "blocks": [{"recording": "on" or "off",
     "step_us": ...}, ...], "on_us", "off_us": the paired blocks' medians, "cost_us": the
     median over the pairs of blocks (2j, 2j + 1) of on - off, "cost_pct": cost_us over off_us,
     in %}; an odd B's last block has no pair and counts in none of them

No torch here: the CPU tests read the summary without a GPU."""
import ctypes
import os
from statistics import median

STATES = ("on", "off")


def not_audited():
    """Why the recording cannot be turned here (not under `syncbench audit`), or None: asked
    before any GPU work."""
    if not os.environ.get("CUDA_INJECTION64_PATH"):
        return "not under syncbench audit (no CUDA_INJECTION64_PATH)"
    return None


def switch():
    """The audit's recording switch (on: 1 or 0 -> 0 when done), or None with why: not under
    `syncbench audit`, or a library without the switch. Once CUDA is initialized (which loads
    the library)."""
    lib = os.environ.get("CUDA_INJECTION64_PATH")
    if not lib:
        return None, not_audited()
    try:  # the library CUDA loaded, not a second copy
        h = ctypes.CDLL(lib, mode=os.RTLD_NOW | os.RTLD_NOLOAD)
        fn = h.syncbench_calibration_recording
    except (OSError, AttributeError) as e:
        return None, f"no recording switch in {lib}: {e}"
    fn.argtypes, fn.restype = [ctypes.c_int], ctypes.c_int
    return fn, None


def state_of(k):
    """Block K's recording: pairs of blocks (2j, 2j + 1) in turn on-off and off-on (on, off,
    off, on, on, off, ...), so that a drift within the process weighs on both sides alike."""
    first, second = STATES if (k // 2) % 2 == 0 else STATES[::-1]
    return first if k % 2 == 0 else second


def run(blocks, time_block, recording):
    """[{recording, step_us}] of BLOCKS blocks in state_of's order; time_block() times one
    block and returns its us per step, recording(1 or 0) turns the recording on or off. One
    untimed block goes first, after the first turn off and on (what a turn leaves cold)."""
    recording(0)
    recording(1)
    time_block()
    out = []
    for k in range(blocks):
        state = state_of(k)
        if recording(1 if state == "on" else 0) != 0:
            raise RuntimeError("the audit's recording switch refused: no record file")
        out.append({"recording": state, "step_us": time_block()})
    recording(1)
    return out


def pairs(blocks):
    """(on, off) of each pair of consecutive blocks (2k, 2k + 1), whichever came first; a last
    block without its pair is left out. ValueError where a pair does not alternate."""
    out = []
    for a, b in zip(blocks[0::2], blocks[1::2]):
        on, off = (a, b) if a["recording"] == "on" else (b, a)
        if (on["recording"], off["recording"]) != STATES:
            raise ValueError(f"blocks do not alternate: {a['recording']}, {b['recording']}")
        out.append((on, off))
    return out


def summary(steps, blocks):
    """The JSON object (the module's docstring); ValueError without a pair."""
    both = pairs(blocks)
    if not both:
        raise ValueError(f"{len(blocks)} blocks: no pair of an on and an off one")
    costs = [on["step_us"] - off["step_us"] for on, off in both]
    off_us = median(off["step_us"] for _, off in both)
    return {"variant": "recording-turns", "steps": steps, "blocks": blocks,
            "on_us": median(on["step_us"] for on, _ in both),
            "off_us": off_us, "cost_us": median(costs),
            "cost_pct": 100 * median(costs) / off_us if off_us else None}
