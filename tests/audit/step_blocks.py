"""Each step of a loop inside a `syncbench.no_syncs()` block, for what the blocks cost a real
program (tests/gpu/audit_cost_real.py): the programs' --no-syncs ALLOW. The package is imported
only then (PYTHONPATH must find python/; the library as python/syncbench/_native.py finds it)."""
import contextlib


class StepBlocks:
    """block() is the context manager a step runs in: `syncbench.no_syncs(allow=ALLOW)`, with the
    blocking calls its steps made summed (syncs, blocks), or, when allow is None, none."""

    def __init__(self, allow):
        self.allow, self.syncs, self.blocks = allow, 0, 0
        if allow is None:
            self.block = contextlib.nullcontext
        else:
            import syncbench
            self._no_syncs = syncbench.no_syncs

    @contextlib.contextmanager
    def block(self):
        with self._no_syncs(allow=self.allow) as s:
            yield
        self.syncs += s.blocking
        self.blocks += 1

    def fields(self):
        """The JSON line's fields: no_syncs (ALLOW or None) and the blocking calls per block."""
        return {"no_syncs": self.allow,
                "syncs_per_block": self.syncs / self.blocks if self.blocks else None}


def add_argument(ap):
    ap.add_argument("--no-syncs", type=int, metavar="ALLOW", default=None,
                    help="run each step inside syncbench.no_syncs(allow=ALLOW)")
