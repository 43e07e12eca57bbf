"""The binding to syncbench's CUPTI library (libsyncbench_audit.so, inject/api.h):
where it is, attaching it to this process, and blocks that count the watched CUDA calls.

The library is found, in order, at $SYNCBENCH_AUDIT_LIB; at $CUDA_INJECTION64_PATH when
`syncbench audit` started this process (the same copy, so both share one CUPTI subscription);
in this package's _bin/ folder (the wheel); beside the `syncbench` on PATH (build/ or
PREFIX/lib/syncbench/); under this package's install prefix (make install); in the source tree's
build/ folder. The CUPTI it needs is found and loaded first (_cupti.py)."""
import ctypes
import os
import shutil
import sys
import threading
from pathlib import Path

from . import _cupti
from ._text import escape

LIB_NAME = "libsyncbench_audit.so"
# Its API (inject/api.h) that _bind and the blocks call: a library at the path found
# that lacks one is not syncbench's (or an older one's), and is refused by name.
SYMBOLS = ("syncbench_attach", "syncbench_block_begin", "syncbench_block_counts",
           "syncbench_block_end", "syncbench_free", "syncbench_classes", "syncbench_class_name",
           "syncbench_class_blocking")

# syncbench_block_begin's errors (api.h)
TOO_MANY, NOT_ATTACHED, FORKED = -1, -2, -3


class SyncbenchUnavailable(RuntimeError):
    """The calls cannot be recorded here: no library, no CUDA driver or device, another CUPTI
    subscriber, a forked child. Never a silent pass."""


def _beside(exe):
    d = Path(os.path.realpath(exe)).parent
    return [d / LIB_NAME, d.parent / "lib" / "syncbench" / LIB_NAME]


def candidates():
    """Where the library may be, in the order it is looked for (see the module's doc)."""
    env = os.environ.get("SYNCBENCH_AUDIT_LIB")
    if env:
        return [Path(env)]  # named: only that one
    out = []
    inj = os.environ.get("CUDA_INJECTION64_PATH")
    if inj and os.path.basename(inj) == LIB_NAME:
        out.append(Path(inj))
    here = Path(__file__).resolve()
    out.append(here.parent / "_bin" / LIB_NAME)  # the wheel's
    exe = shutil.which("syncbench")
    if exe:
        out += _beside(exe)
    # PREFIX/lib/pythonX.Y/site-packages/syncbench/_native.py -> PREFIX/lib/syncbench/
    if len(here.parents) > 4:
        out.append(here.parents[3] / "syncbench" / LIB_NAME)
    out.append(here.parents[2] / "build" / LIB_NAME)  # the source tree: python/syncbench/
    for prefix in (sys.prefix, "/usr/local", "/usr"):
        out.append(Path(prefix) / "lib" / "syncbench" / LIB_NAME)
    seen, unique = set(), []
    for p in out:
        if str(p) not in seen:
            seen.add(str(p))
            unique.append(p)
    return unique


def analyzer():
    """The `syncbench` binary that names the calls (beside the library, else on PATH), or None."""
    lib = _lib_path
    if lib:
        d = Path(lib).resolve().parent
        for exe in (d / "syncbench", d.parent.parent / "bin" / "syncbench"):
            if exe.is_file() and os.access(exe, os.X_OK):
                return str(exe)
    return shutil.which("syncbench")


_lib = None
_lib_path = None
# The CUPTI loaded for it (_cupti.prepare): its path and where it was found ("a wheel", "the
# toolkit", "already loaded in this process", ...); None where the loader found it.
cupti_path = cupti_from = None
_attached = None  # None: not tried; "" attached; else why not


forks = 0  # children forked since this module loaded, as this process sees it (0 in the parent)


def _forked():
    global _attached, forks
    _attached = None  # a forked child asks the library again (which refuses: CUDA is unusable)
    forks += 1


os.register_at_fork(after_in_child=_forked)


def _load_cupti(path):
    """The CUPTI the library at path needs, loaded first; None where the loader is left to find
    it: what was looked in (for the message if it cannot)."""
    global cupti_path, cupti_from
    try:
        cupti_path, cupti_from, looked = _cupti.prepare(str(path))
    except LookupError as e:
        raise SyncbenchUnavailable(str(e)) from None
    return looked


def _load():
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    tried = []
    for path in candidates():
        if not path.is_file():
            tried.append(f"{path} (absent)")
            continue
        looked = _load_cupti(path)
        try:
            lib = ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        except OSError as e:
            soname = _cupti.needed_cupti(str(path))
            if looked and soname and soname in str(e):  # nor did the loader find it
                raise SyncbenchUnavailable(_cupti.not_found(str(path), soname, looked)) from None
            raise SyncbenchUnavailable(f"syncbench: cannot load {escape(path)}: "
                                       f"{escape(e)}") from None
        missing = [name for name in SYMBOLS if not hasattr(lib, name)]
        if missing:  # another library, or an older syncbench's: not one to call into
            more = f" (and {len(missing) - 1} more of its API)" if len(missing) > 1 else ""
            raise SyncbenchUnavailable(
                f"syncbench: {escape(path)} is not syncbench's CUPTI library ({LIB_NAME}): "
                f"undefined symbol {missing[0]}{more}")
        _bind(lib)
        _lib, _lib_path = lib, str(path)
        return lib
    raise SyncbenchUnavailable(
        f"syncbench: {LIB_NAME} not found (build it with make, or set SYNCBENCH_AUDIT_LIB); "
        f"looked at: {', '.join(escape(t) for t in tried)}")


def _bind(lib):
    c = ctypes
    lib.syncbench_attach.argtypes = [c.c_char_p, c.c_size_t]
    lib.syncbench_attach.restype = c.c_int
    # syncbench_block_begin (int) -> int and syncbench_block_end (int, the counts array, two
    # byref pointers) -> int, once per block each, are called without argtypes: every argument
    # is a ctypes object or a small int, and ctypes' conversion through argtypes costs 0.1 to
    # 0.5 us a call (the whole of an empty block is a few microseconds)
    lib.syncbench_block_begin.restype = c.c_int
    lib.syncbench_block_counts.argtypes = [c.c_int, c.POINTER(c.c_longlong)]
    lib.syncbench_block_counts.restype = c.c_int
    lib.syncbench_block_end.restype = c.c_int
    lib.syncbench_free.argtypes = [c.c_void_p]
    lib.syncbench_free.restype = None
    lib.syncbench_classes.argtypes = []
    lib.syncbench_classes.restype = c.c_int
    lib.syncbench_class_name.argtypes = [c.c_int]
    lib.syncbench_class_name.restype = c.c_char_p
    lib.syncbench_class_blocking.argtypes = [c.c_int]
    lib.syncbench_class_blocking.restype = c.c_int


def attach():
    """Loads and attaches the library once per process; raises SyncbenchUnavailable naming the
    cause when it cannot record."""
    global _attached
    if _attached == "":
        return _lib
    lib = _load()
    why = ctypes.create_string_buffer(512)
    if lib.syncbench_attach(why, len(why)) != 0:
        _attached = escape(why.value.decode(errors="surrogateescape"))
        raise SyncbenchUnavailable(f"syncbench: cannot record CUDA calls: {_attached}")
    _attached = ""
    return lib


class Classes:
    """The class names and which ones block, as the library (audit.h) has them."""

    def __init__(self, lib):
        self.n = n = lib.syncbench_classes()
        self.names = [lib.syncbench_class_name(i).decode() for i in range(n)]
        self.blocking = [bool(lib.syncbench_class_blocking(i)) for i in range(n)]


_classes = None


def classes():
    global _classes
    if _classes is None:
        _classes = Classes(attach())
    return _classes


_scratch = threading.local()  # per thread: what a block's end fills (no allocation per block)


def _buffers():
    b = getattr(_scratch, "b", None)
    if b is None:
        arr, text, size = (ctypes.c_longlong * classes().n)(), ctypes.c_void_p(), ctypes.c_size_t()
        b = _scratch.b = (arr, text, size, ctypes.byref(text), ctypes.byref(size))
    return b


def begin(all_threads):
    """Opens a block of this thread (or of every thread): its id."""
    lib = _lib if _attached == "" else attach()
    rc = lib.syncbench_block_begin(1 if all_threads else 0)
    if rc >= 0:
        return rc
    if rc == FORKED:
        raise SyncbenchUnavailable(
            "syncbench: cannot record CUDA calls: this process is a child forked from a CUDA "
            "process (CUDA cannot be used in it)")
    if rc == NOT_ATTACHED:
        raise SyncbenchUnavailable("syncbench: cannot record CUDA calls: not attached")
    raise SyncbenchUnavailable("syncbench: too many blocks open at once (1024)")


def counts(block):
    """The block's counts per class so far."""
    arr = (ctypes.c_longlong * classes().n)()
    if _lib.syncbench_block_counts(block, arr) != 0:
        raise RuntimeError("syncbench: this block is closed or belongs to another thread")
    return arr[:]


def end(block):
    """Closes the block: (blocking calls, counts per class, the blocking calls as a record
    stream (bytes) or None)."""
    arr, text, _, ptext, psize = b = _buffers()
    n = _lib.syncbench_block_end(block, arr, ptext, psize)
    if n < 0:
        raise RuntimeError("syncbench: this block is closed or belongs to another thread")
    stream = None
    if text.value:
        stream = ctypes.string_at(text.value, b[2].value)
        _lib.syncbench_free(text)
    return n, arr[:], stream
