"""What plot.py and timeline.py share: their error classes (each exits with its own code), one
line of user text, matplotlib without a display, and an argument parser whose errors are one
line."""
import argparse
import logging
import os
import signal
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


def escape(text):
    """Text from outside as a terminal may show it, the way syncbench's C escaper writes it:
    C0 controls and DEL as \\n, \\t, \\r, \\xNN; C1 controls (which terminals obey) as
    \\xc2\\xNN; lone surrogates (JSON may hold them) as \\uNNNN."""
    out = []
    for ch in str(text):
        o = ord(ch)
        if ch in "\n\t\r":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r"}[ch])
        elif o < 0x20 or o == 0x7f:
            out.append(f"\\x{o:02x}")
        elif 0x80 <= o <= 0x9f:
            out.append(f"\\xc2\\x{o:02x}")
        elif 0xd800 <= o <= 0xdfff:
            out.append(f"\\u{o:04x}")
        else:
            out.append(ch)
    return "".join(out)


def clip(text, n=40):
    """User text as it goes into a message or a figure: escaped (one line, nothing a terminal
    obeys), at most n characters."""
    text = escape(text)
    return text if len(text) <= n else text[:n - 1] + "…"


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
    on stdout."""
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
        for path in [written] if isinstance(written, str) else written:
            print(path)
        sys.stdout.flush()
    except BrokenPipeError:  # ... | head -1
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0
