"""Steps: `syncbench.step(name)` marks one step of a loop (a training step, a generate() call),
as an NVTX range of that name does for `syncbench audit --range NAME`. It is that NVTX range
too (through torch.cuda.nvtx, when torch is imported), so that one loop serves the audit and the
pytest plugin alike. While the plugin's marker counts per step of NAME (a baseline with per =
step, or the marker's range=NAME), each step is a native block of its own on the thread that
entered it: the calls of that thread inside the step, as an NVTX range holds its thread's calls.
Outside such a marker a step costs a lookup and the NVTX range."""
import contextlib
import sys
import threading

from . import _native

_lock = threading.Lock()
_open = []  # the Collectors open, in any thread
_depth = threading.local()  # per thread: {name: steps of that name open (nested)}


class Step:
    """One step a collector counted: its place in order of entry, the thread that entered it,
    its blocking calls and their records (None: none)."""

    __slots__ = ("index", "tid", "blocking", "stream")

    def __init__(self, index, tid):
        self.index, self.tid, self.blocking, self.stream = index, tid, 0, None


class Collector:
    """The steps of one range a marker counts: those entered on its own thread (scope
    "thread") or on any (scope "process")."""

    def __init__(self, name, scope):
        self.name, self.scope = name, scope
        self.ident = threading.get_ident()
        self.steps = []  # Step, in order of entry

    def takes(self, name):
        return name == self.name and (self.scope == "process"
                                      or threading.get_ident() == self.ident)


def collect(name, scope):
    """A Collector of the steps of name, open until done(it)."""
    c = Collector(name, scope)
    with _lock:
        _open.append(c)
    return c


def done(collector):
    with _lock:
        if collector in _open:
            _open.remove(collector)
    return collector.steps


_nvtx = None  # (push, pop) of torch.cuda.nvtx, False when it cannot


def _nvtx_calls():
    global _nvtx
    if _nvtx is None:
        torch = sys.modules.get("torch")
        if torch is None:
            return None  # torch not imported (yet): looked for again at the next step
        try:
            nvtx = torch.cuda.nvtx
            nvtx.range_push("syncbench")  # torch built without NVTX raises here
            nvtx.range_pop()
            _nvtx = (nvtx.range_push, nvtx.range_pop)
        except Exception:  # noqa: BLE001: any failure means no NVTX, never a failed step
            _nvtx = False
    return _nvtx or None


class step(contextlib.ContextDecorator):
    """One step of a loop, named (the range a baseline's `range` names): `with
    syncbench.step("train_step"):` around each iteration's work, or a decorator of the step's
    function. nvtx=False leaves the NVTX range out. A step entered inside an open step of the
    same name on the same thread is part of it (neither counted nor pushed again)."""

    def __init__(self, name="step", nvtx=True):
        if not isinstance(name, str) or not name:
            raise ValueError(f"syncbench.step: name must be a non-empty string, not {name!r}")
        self.name, self.nvtx = name, nvtx
        self._stack = []

    def _recreate_cm(self):  # each decorated call is a step of its own
        return type(self)(self.name, self.nvtx)

    def __enter__(self):
        depth = _depth.__dict__.setdefault("n", {})
        outer = depth.get(self.name, 0) == 0
        pop, taken, block = None, [], None
        if outer:
            calls = _nvtx_calls() if self.nvtx else None
            if _open:
                with _lock:
                    taken = [(c, Step(len(c.steps), threading.get_native_id()))
                             for c in _open if c.takes(self.name)]
                    for c, s in taken:
                        c.steps.append(s)
            if taken:
                block = _native.begin(False)  # raises where nothing can be recorded
            if calls:
                calls[0](self.name)
                pop = calls[1]
        depth[self.name] = depth.get(self.name, 0) + 1
        self._stack.append((pop, taken, block))
        return self

    def __exit__(self, *exc):
        pop, taken, block = self._stack.pop()
        _depth.n[self.name] -= 1
        try:
            if block is not None:
                blocking, _, stream = _native.end(block)
                for _, s in taken:
                    s.blocking, s.stream = blocking, stream
        finally:
            if pop is not None:
                pop()
        return False
