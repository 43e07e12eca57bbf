"""What plot.py and timeline.py share: their error classes (each exits with its own code), one
line of user text, matplotlib without a display, and an argument parser whose errors are one
line."""
import argparse
import logging
import signal


class BadInput(Exception):
    """Bad input, bad usage or an unusable output: exit 2."""


class Unavailable(Exception):
    """matplotlib cannot be imported: exit 1, one line."""


class Interrupted(Exception):
    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.status = 128 + signum


def clip(text, n=40):
    """User text as it goes into a message or a figure: one line, at most n characters."""
    text = str(text).replace("\r", "\\r").replace("\n", "\\n")
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
