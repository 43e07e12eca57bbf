"""What plot.py and timeline.py share: their error classes (each exits with its own code), one
line of user text, matplotlib without a display, and an argument parser whose errors are one
line."""
import argparse
import importlib.util
import logging
import os
import signal
import stat
import sys
import warnings


class BadInput(Exception):
    """Bad input, bad usage or an unusable output: exit 2."""


class Unavailable(Exception):
    """matplotlib cannot be imported: exit 1, one line."""


class Interrupted(Exception):
    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.status = 128 + signum


def _load_text():
    """The one escaper, python/syncbench/_text.py, loaded by its path: the plot tools run from
    the source tree, where the package need not be installed (and importing the package would
    load its CUDA side)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python",
                        "syncbench", "_text.py")
    spec = importlib.util.spec_from_file_location("syncbench_text", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_text = _load_text()
# Text from outside as a terminal may show it, in the form of syncbench's C escaper
# (src/base/utf8.c, sb_escape_piece); each character's piece; json's object_pairs_hook that
# refuses a member name given twice.
escape, _pieces, unique_keys = _text.escape, _text.pieces, _text.unique_keys


def clip(text, n=40):
    """User text as it goes into a message or a figure: escaped (one line, nothing a terminal
    obeys), at most n characters, cut between escapes, never inside one."""
    pieces = _pieces(text)
    if sum(len(p) for p in pieces) <= n:
        return "".join(pieces)
    out, used = [], 0
    for p in pieces:
        if used + len(p) > n - 1:
            break
        out.append(p)
        used += len(p)
    return "".join(out) + "…"


def size_text(n):
    """A limit as the messages and --help say it: 64 KiB, 64 MiB, 2 GiB."""
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult} {unit}"
    return f"{n} bytes"


def too_large(path, limit, prog):
    return BadInput(f"{path}: larger than {size_text(limit)}, the most {prog} reads")


def regular_size(f):
    """The size of the open file f when it is a regular file, else None (a pipe, a device such
    as /dev/zero: read as it comes, counted)."""
    try:
        st = os.fstat(f.fileno())
    except OSError:
        return None
    return st.st_size if stat.S_ISREG(st.st_mode) else None


def pyplot():
    logging.getLogger("matplotlib").setLevel(logging.ERROR)  # no font-cache chatter on stderr
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise Unavailable(f"cannot import matplotlib ({e}); install python3-matplotlib")
    return plt


class Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, not argparse's usage block
        raise BadInput(f"{message} (see --help)")


def main(prog, make_parser, run, argv=None):
    """Parses the arguments, runs run(args, notes) -> the path or paths written, and maps every
    failure to one line on stderr and an exit code: 2 bad input, 1 matplotlib missing or a bug
    (nothing left behind: run cleans up), 128 + N on signal N. Then the notes, then the paths
    on stdout (escaped: an -o name with control characters reaches no terminal raw); stdout
    closed or failing (a full disk): one line, exit 1, the files left written."""
    def on_signal(signum, _frame):
        raise Interrupted(signum)

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    warnings.simplefilter("ignore")  # stderr carries one line per error or note, nothing else
    notes = []
    try:
        written = run(make_parser().parse_args(argv), notes)
    except BadInput as e:
        print(f"{prog}: {clip(e, 400)}", file=sys.stderr)
        return 2
    except Unavailable as e:
        print(f"{prog}: {clip(e, 400)}", file=sys.stderr)
        return 1
    except Interrupted as e:
        print(f"{prog}: interrupted ({e}); nothing written", file=sys.stderr)
        return e.status
    except Exception as e:  # a bug: still one line
        print(f"{prog}: internal error: {type(e).__name__}: {clip(e, 300)}", file=sys.stderr)
        return 1
    signal.signal(signal.SIGINT, signal.SIG_DFL)  # the files are in place: nothing to undo
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for note in notes:
        print(f"{prog}: note: {clip(note, 400)}", file=sys.stderr)
    try:
        if sys.stdout is None:  # started with stdout closed (>&-): nowhere to say what was written
            raise OSError("standard output is closed")
        for path in [written] if isinstance(written, str) else written:
            print(escape(path))  # the -o text: escaped as every message is
        sys.stdout.flush()
    except BrokenPipeError:  # ... | head -1
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        # A write error on stdout (> /dev/full, >&-) is exit 1 with one line, as syncbench's own
        # (docs/exit-codes.md); the PNGs are written. stdout's buffer is dropped so that the
        # interpreter's exit does not fail on it again with a second message.
        print(f"{prog}: cannot write to standard output", file=sys.stderr)
        if sys.stdout is not None:
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError):
                pass
        return 1
    return 0
