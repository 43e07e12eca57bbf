"""Sync-free unit tests for CUDA code in any library.

    import syncbench

    with syncbench.no_syncs():          # raises syncbench.SyncError on a host-blocking call
        loss = model(x).sum()

    @syncbench.no_syncs(allow=1)        # a decorator too
    def step(): ...

    with syncbench.count_syncs() as s:  # counts by class, for exact assertions
        y = x.nonzero()
    assert s.blocking == 1 and s.by_class == {"sync-stream": 1}

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

from . import _naming, _native
from ._native import SyncbenchUnavailable

SyncbenchUnavailable.__module__ = __name__  # shown as syncbench.SyncbenchUnavailable

__all__ = ["no_syncs", "count_syncs", "Syncs", "SyncError", "SyncbenchUnavailable"]
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

    def __init__(self, message, syncs):
        super().__init__(message)
        self.syncs = syncs


class Syncs:
    """The calls a block made: .blocking (what no_syncs counts), .polls, .by_class
    ({class: count}, classes with calls only), .sites (each blocking call site named as the
    audit names it: Python line, source, the line inside a library that made it, operation,
    class, fix). Live while the block is open
    (counts so far), final once it is closed."""

    __slots__ = ("all_threads", "_block", "_pid", "_blocking", "_counts", "_stream", "_sites")
    # _pid: the fork generation the block was opened in (_native.forks)

    def __init__(self, all_threads=False):
        self.all_threads = _flag(all_threads, "all_threads", "Syncs")
        self._block = _native.begin(all_threads)
        self._pid = _native.forks  # not os.getpid(): a system call per block
        self._sites = None

    def _close(self):
        if _native.forks != self._pid:  # a child forked inside the block: the block is the parent's
            self._block = None
            raise SyncbenchUnavailable(
                "syncbench: cannot record CUDA calls: this process is a child forked from a "
                "CUDA process inside a block (CUDA cannot be used in it)")
        self._blocking, self._counts, self._stream = _native.end(self._block)
        self._block = None

    def _now(self):
        return _native.counts(self._block) if self._block is not None else self._counts

    @property
    def by_class(self):
        names = _native.classes().names
        return {names[i]: n for i, n in enumerate(self._now()) if n and names[i] != "none"}

    @property
    def blocking(self):
        if self._block is None:
            return self._blocking
        blocking = _native.classes().blocking
        return sum(n for i, n in enumerate(self._now()) if blocking[i])

    @property
    def polls(self):
        return self.by_class.get("poll", 0)

    @property
    def sites(self):
        if self._block is not None:
            raise RuntimeError("syncbench: the call sites are named once the block is closed")
        if self._sites is None:
            self._sites = _naming.sites_of(self._stream)
        return self._sites

    def report(self, allow=None):
        """The calls as a failed test shows them: a summary line, then each site."""
        where = "on every thread" if self.all_threads else "on this thread"
        limit = f" (allowed {allow})" if allow is not None else ""
        n = self.blocking
        lines = [f"{n} host-blocking CUDA call{'s' if n != 1 else ''}{limit}, {where}:"]
        lines += _naming.report_lines(self.sites)
        shown = sum(s.count for s in self.sites)
        if shown < n:
            lines.append(f"  ({n - shown} more not named: a block keeps its first 256)")
        return "\n".join(lines)

    def __repr__(self):
        return f"Syncs(blocking={self.blocking}, by_class={self.by_class})"


class count_syncs(contextlib.ContextDecorator):
    """Counts the host-blocking CUDA calls made inside: `with count_syncs() as s:`; s is a
    Syncs. all_threads=True counts every thread of the process, not only this one."""

    def __init__(self, all_threads=False):
        self.all_threads = _flag(all_threads, "all_threads", type(self).__name__)
        self.syncs = None

    def _recreate_cm(self):  # each decorated call gets its own block
        return type(self)(self.all_threads)

    def __call__(self, func):
        # a coroutine or generator runs after the call returns: a block around the call would
        # check nothing
        if (inspect.iscoroutinefunction(func) or inspect.isgeneratorfunction(func)
                or inspect.isasyncgenfunction(func)):
            raise TypeError(f"syncbench.{type(self).__name__} cannot decorate {func.__name__}, a "
                            f"coroutine or generator function: use `with` inside it")
        return super().__call__(func)

    def __enter__(self):
        if self.syncs is not None and self.syncs._block is not None:
            raise RuntimeError(f"syncbench: this {type(self).__name__}() is already open: make "
                               f"one per with-statement")
        self.syncs = Syncs(self.all_threads)
        return self.syncs

    def __exit__(self, *exc):
        self.syncs._close()
        return False


class no_syncs(count_syncs):
    """Raises SyncError when the code inside makes more than `allow` host-blocking CUDA calls
    (explicit and implicit syncs; polls do not count), listing each as the audit names it. A
    context manager and a decorator. An exception raised inside goes on unchanged."""

    def __init__(self, allow=0, all_threads=False):
        if allow.__class__ is not int or allow < 0:
            raise ValueError(f"syncbench.no_syncs: allow must be a whole number >= 0, "
                             f"not {allow!r}")
        super().__init__(all_threads)
        self.allow = allow

    def _recreate_cm(self):
        return type(self)(self.allow, self.all_threads)

    def __exit__(self, exc_type, exc, tb):
        syncs = self.syncs
        syncs._close()
        if syncs._blocking > self.allow and exc_type is None:
            raise SyncError(syncs.report(self.allow), syncs)
        return False
