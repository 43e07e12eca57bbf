"""Sync-free unit tests for CUDA code in any library.

    import syncbench

    with syncbench.no_syncs():          # raises syncbench.SyncError on a host-blocking call
        loss = model(x).sum()

    @syncbench.no_syncs(allow=1)        # a decorator too
    def step(): ...

    with syncbench.count_syncs() as s:  # counts by class, for exact assertions
        y = x.nonzero()
    assert s.blocking == 1 and s.by_class == {"sync-stream": 1}

    with syncbench.no_syncs(allow=["train.py:step", "transformers"]):  # sites, libraries
        step()
    with syncbench.no_syncs(scope="task"):  # this asyncio task's calls only (in a coroutine)
        await step()

    for batch in loader:                # one step of a loop: the pytest plugin's per-step
        with syncbench.step("train_step"):  # count, and the NVTX range syncbench audit's
            train_step(batch)           # --range train_step counts

What counts: every host-blocking CUDA call the block makes, seen by CUPTI at the driver: explicit
syncs (device, stream, event), blocking copies, async copies to or from pageable memory,
cudaMemset, cudaFree; polls (cudaStreamQuery, cudaEventQuery) are counted apart and never fail a
block. That includes the syncs torch.cuda.set_sync_debug_mode does not see (torch.cuda.synchronize(),
Event.synchronize(), a driver call through ctypes, a library's own syncs). By default a block
counts the calls of the thread that opened it; all_threads=True counts every thread's. It needs
syncbench's CUPTI library (libsyncbench_audit.so: `make` in the syncbench tree, `make install`,
or SYNCBENCH_AUDIT_LIB) and a CUDA GPU; where it cannot record (no library, no GPU, another CUPTI
subscriber such as the PyTorch profiler, a child forked from a CUDA process) entering a block
raises SyncbenchUnavailable naming the cause."""
import contextlib
import inspect

from . import _allow, _naming, _native, _tasks
from ._native import SyncbenchUnavailable
from ._steps import step

SyncbenchUnavailable.__module__ = __name__  # shown as syncbench.SyncbenchUnavailable

__all__ = ["no_syncs", "count_syncs", "step", "Syncs", "SyncError", "SyncbenchUnavailable"]
__version__ = "0.1.0"


def _flag(value, name, where):
    """value when it is True or False; else the ValueError the pytest marker's check gives
    (a flag given 'no', 0 or None is a mistake, not a truth value to guess at)."""
    if value is not True and value is not False:
        raise ValueError(f"syncbench.{where}: {name} must be True or False, not {value!r}")
    return value


class SyncError(AssertionError):
    """A block made more host-blocking CUDA calls than it allows. An AssertionError, so that a
    test fails as on a failed assertion; .syncs holds the counts and the call sites."""

    def __init__(self, message, syncs, disallowed=None):
        super().__init__(message)
        self.syncs = syncs
        # [(site, calls not allowed)] when the block allowed sites or libraries
        self.disallowed = disallowed


SCOPES = ("thread", "process", "task")


def _scope(scope, all_threads, where):
    """The block's scope: "thread" (the calls of the thread that opens it), "process" (every
    thread's: all_threads=True) or "task" (the asyncio task's that opens it)."""
    _flag(all_threads, "all_threads", where)
    if scope is None:
        return "process" if all_threads else "thread"
    if scope not in SCOPES:
        raise ValueError(f"syncbench.{where}: scope must be 'thread', 'process' or 'task', "
                         f"not {scope!r}")
    if all_threads and scope != "process":
        raise ValueError(f"syncbench.{where}: all_threads=True counts every thread: it cannot "
                         f"go with scope={scope!r}")
    return scope


def _merge(streams):
    """One record stream of a task block's native blocks: the first process line, each stack
    once, the calls in order, the last end line."""
    if len(streams) == 1:
        return streams[0]
    head, stacks, calls, seen, tail = [], [], [], set(), []
    for stream in streams:
        for line in stream.splitlines():
            if line.startswith(b'{"t":"proc"'):
                head = head or [line]
            elif line.startswith(b'{"t":"end"'):
                tail = [line]
            elif line.startswith(b'{"t":"call"'):
                calls.append(line)
            elif line not in seen:
                seen.add(line)
                stacks.append(line)
    return b"\n".join(head + stacks + calls + tail) + b"\n" if streams else None


class Syncs:
    """The calls a block made: .blocking (what no_syncs counts), .polls, .by_class
    ({class: count}, classes with calls only), .sites (each blocking call site named as the
    audit names it: Python line, source, the line inside a library that made it, operation,
    class, fix). Live while the block is open
    (counts so far), final once it is closed."""

    __slots__ = ("all_threads", "scope", "_block", "_open", "_pid", "_blocking", "_counts",
                 "_stream", "_sites", "_task", "_streams")
    # _pid: the fork generation the block was opened in (_native.forks); a task block's native
    # blocks, one per step of its task: _block the open one (None between steps), _counts and
    # _streams the closed ones'

    def __init__(self, all_threads=False, scope=None):
        self.scope = _scope(scope, all_threads, "Syncs")
        self.all_threads = self.scope == "process"
        self._task = _tasks.current("Syncs") if self.scope == "task" else None
        self._block = _native.begin(self.all_threads)
        self._open = True
        self._pid = _native.forks  # not os.getpid(): a system call per block
        self._sites = None
        if self._task is not None:
            self._counts, self._streams = None, []
            _tasks.watch(self)

    def _pause(self):  # a task block: its task stopped running
        if self._block is not None:
            _, counts, stream = _native.end(self._block)
            self._block = None
            self._counts = counts if self._counts is None else [
                a + b for a, b in zip(self._counts, counts)]
            if stream:
                self._streams.append(stream)

    def _resume(self):  # a task block: its task runs again
        if self._open and self._block is None and _native.forks == self._pid:
            self._block = _native.begin(False)

    def _close(self):
        if _native.forks != self._pid:  # a child forked inside the block: the block is the parent's
            self._block, self._open = None, False
            raise SyncbenchUnavailable(
                "syncbench: cannot record CUDA calls: this process is a child forked from a "
                "CUDA process inside a block (CUDA cannot be used in it)")
        if self._task is None:
            self._blocking, self._counts, self._stream = _native.end(self._block)
            self._block, self._open = None, False
            return
        _tasks.unwatch(self)
        self._pause()
        self._open = False
        blocking = _native.classes().blocking
        if self._counts is None:
            self._counts = [0] * len(blocking)
        self._blocking = sum(n for i, n in enumerate(self._counts) if blocking[i])
        self._stream = _merge(self._streams) if self._streams else None

    def _now(self):
        if not self._open:
            return self._counts
        if self._task is None:
            return _native.counts(self._block)
        now = self._counts or [0] * _native.classes().n
        if self._block is not None:
            now = [a + b for a, b in zip(now, _native.counts(self._block))]
        return now

    @property
    def by_class(self):
        names = _native.classes().names
        return {names[i]: n for i, n in enumerate(self._now()) if n and names[i] != "none"}

    @property
    def blocking(self):
        if not self._open:
            return self._blocking
        blocking = _native.classes().blocking
        return sum(n for i, n in enumerate(self._now()) if blocking[i])

    @property
    def polls(self):
        return self.by_class.get("poll", 0)

    @property
    def sites(self):
        if self._open:
            raise RuntimeError("syncbench: the call sites are named once the block is closed")
        if self._sites is None:
            self._sites = _naming.sites_of(self._stream)
        return self._sites

    def report(self, allow=None, bad=None, unnamed=0):
        """The calls as a failed test shows them: a summary line, then each site; with bad
        (the sites and calls not allowed, _allow.judge), those alone."""
        where = {"process": "on every thread", "task": "in this task"}.get(self.scope,
                                                                          "on this thread")
        limit = f" (allowed {allow})" if allow is not None else ""
        n = self.blocking
        if bad is None:
            lines = [f"{n} host-blocking CUDA call{'s' if n != 1 else ''}{limit}, {where}:"]
            lines += _naming.report_lines(self.sites)
            shown = sum(s.count for s in self.sites)
            if shown < n:
                lines.append(f"  ({n - shown} more not named: a block keeps its first 256)")
            return "\n".join(lines)
        k = sum(c for _, c in bad) + unnamed
        lines = [f"{k} of {n} host-blocking CUDA call{'s' if n != 1 else ''} not allowed"
                 f"{limit}, {where}:"]
        for site, calls in bad:
            lines += [site.head()] + site.details()
            if calls != site.count:
                lines.append(f"      ({calls} of its {site.count} over what is allowed)")
        if unnamed:
            lines.append(f"  ({unnamed} more not named, so not matched: a block keeps its "
                         f"first 256)")
        return "\n".join(lines)

    def __repr__(self):
        return f"Syncs(blocking={self.blocking}, by_class={self.by_class})"


class count_syncs(contextlib.ContextDecorator):
    """Counts the host-blocking CUDA calls made inside: `with count_syncs() as s:`; s is a
    Syncs. scope: "thread" (the default: the calls of the thread that opens it), "process"
    (every thread's; all_threads=True says the same) or "task" (the asyncio task's that opens
    it, while it runs)."""

    def __init__(self, all_threads=False, scope=None):
        self.scope = _scope(scope, all_threads, type(self).__name__)
        self.all_threads = self.scope == "process"
        self.syncs = None

    def _recreate_cm(self):  # each decorated call gets its own block
        return type(self)(scope=self.scope)

    def __call__(self, func):
        # a coroutine or generator runs after the call returns: a block around the call would
        # check nothing
        if (inspect.iscoroutinefunction(func) or inspect.isgeneratorfunction(func)
                or inspect.isasyncgenfunction(func)):
            raise TypeError(f"syncbench.{type(self).__name__} cannot decorate {func.__name__}, a "
                            f"coroutine or generator function: use `with` inside it")
        return super().__call__(func)

    def __enter__(self):
        if self.syncs is not None and self.syncs._open:
            raise RuntimeError(f"syncbench: this {type(self).__name__}() is already open: make "
                               f"one per with-statement")
        self.syncs = Syncs(scope=self.scope)
        return self.syncs

    def __exit__(self, *exc):
        self.syncs._close()
        return False


class no_syncs(count_syncs):
    """Raises SyncError when the code inside makes host-blocking CUDA calls it does not allow
    (explicit and implicit syncs; polls do not count), listing each as the audit names it. A
    context manager and a decorator. An exception raised inside goes on unchanged.

    allow: how many calls may block (a whole number), or which: a list of sites and libraries
    (any number of calls each) or a dict {site or library: count}. A site is "FILE.py",
    "FILE.py:LINE", "FILE.py:FUNCTION" or "FILE.py:LINE in FUNCTION", matched against the
    call's Python line and the line inside a library that made it; a library is a package name
    ("transformers"). A call is allowed by the first entry that matches it and has calls left;
    with a list or dict, a call no entry takes fails the block. scope as count_syncs'."""

    def __init__(self, allow=0, all_threads=False, scope=None):
        self._others, self._entries = _allow.parse(allow, "no_syncs")
        super().__init__(all_threads, scope)
        self.allow = allow

    def _recreate_cm(self):
        return type(self)(self.allow, scope=self.scope)

    def __exit__(self, exc_type, exc, tb):
        syncs = self.syncs
        syncs._close()
        if exc_type is not None or syncs._blocking <= self._others:
            return False
        if not self._entries:
            raise SyncError(syncs.report(self.allow), syncs)
        bad, unnamed = _allow.judge(syncs.sites, syncs._blocking, self._others, self._entries)
        if bad or unnamed:
            raise SyncError(syncs.report(_allowed_text(self._others, self._entries), bad,
                                         unnamed), syncs, bad)
        return False


def _allowed_text(others, entries):
    """What a block allows, as its failure says it: the entries' labels, and the count of
    calls no entry takes when not 0."""
    labels = [repr(e) for e in entries]
    labels = labels[:4] + ([f"and {len(labels) - 4} more"] if len(labels) > 4 else [])
    text = ", ".join(labels)
    return f"{text}; {others} other{'s' if others != 1 else ''}" if others else text
