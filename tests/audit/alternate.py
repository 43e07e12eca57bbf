"""What the replay suite's programs (tests/gpu/replay_suite.py) share for their in-process
alternating mode, `--variant alternate --blocks B [--first sync|fixed]`: after the program's
warm-up, B timed blocks of the same length, alternating the syncing and the fixed variant, so
that the saving is a difference within one process. The host's speed moves between processes
by 10 to 20 % on a cloud VM (far more than a host-bound program's saving) but holds steady
within one. No torch here: the suite imports this module to read the blocks back.

    {"variant": "alternate", "first": ..., "steps": per block, "blocks": [{"variant": "sync" or
     "fixed", "step_us": ...}, ...], "sync_us": the sync blocks' median, "fixed_us": the fixed
     blocks' median, "saving_us": the median over the pairs of blocks (2k, 2k + 1) of sync -
     fixed}"""
from statistics import median

VARIANTS = ("sync", "fixed")
BLOCKS = 8


def add_arguments(ap, first=VARIANTS):
    """--blocks and --first on the argparse parser AP (FIRST: the names --first takes, the
    syncing one's first)."""
    ap.add_argument("--blocks", type=int, default=BLOCKS,
                    help=f"with the alternating variant: timed blocks ({BLOCKS})")
    ap.add_argument("--first", choices=first, default=first[0],
                    help=f"with the alternating variant: the first block's ({first[0]})")


def order(first, blocks):
    """The variants of BLOCKS blocks, alternating, FIRST ("sync" or "fixed") first."""
    other = VARIANTS[1] if first == VARIANTS[0] else VARIANTS[0]
    return [first if k % 2 == 0 else other for k in range(blocks)]


def run(first, blocks, time_block):
    """[{variant, step_us}] of BLOCKS blocks; time_block(sync) times one block of the syncing
    variant (sync True) or the fixed one and returns its us per unit. One untimed block of
    the fixed variant goes first: the GPU's clocks, idle through the process's start, and the
    caching allocator settle before the first block that counts."""
    time_block(False)
    return [{"variant": v, "step_us": time_block(v == "sync")} for v in order(first, blocks)]


def pair_savings(blocks):
    """sync - fixed of each pair of consecutive blocks (2k, 2k + 1), whichever came first; a
    last block without its pair is left out."""
    out = []
    for a, b in zip(blocks[0::2], blocks[1::2]):
        sync, fixed = (a, b) if a["variant"] == "sync" else (b, a)
        if {sync["variant"], fixed["variant"]} != set(VARIANTS):
            raise ValueError(f"blocks do not alternate: {a['variant']}, {b['variant']}")
        out.append(sync["step_us"] - fixed["step_us"])
    return out


def summary(first, steps, blocks):
    """The alternating run's JSON object (the module's docstring); ValueError without a pair."""
    savings = pair_savings(blocks)
    if not savings:
        raise ValueError(f"{len(blocks)} blocks: no pair of a sync and a fixed one")
    return {"variant": "alternate", "first": first, "steps": steps, "blocks": blocks,
            "sync_us": median(b["step_us"] for b in blocks if b["variant"] == "sync"),
            "fixed_us": median(b["step_us"] for b in blocks if b["variant"] == "fixed"),
            "saving_us": median(savings)}


def check_blocks(ap, blocks):
    """argparse's error (exit 2) unless BLOCKS holds a pair."""
    if blocks < 2:
        ap.error("--blocks must be at least 2 (a sync block and a fixed one)")
