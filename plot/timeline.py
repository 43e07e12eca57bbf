#!/usr/bin/env python3
"""`syncbench audit --trace` (Chrome trace JSON) -> a PNG timeline of where the host blocked.

    plot/timeline.py TRACE.json -o OUT.png [--window START_US:END_US] [--title TEXT]

Per process (one block each, by pid), the GPU stream rows on top (kernels, copies and memsets
as bars: the gaps between them are the GPU idling), then each host thread's rows: its CUDA API
calls as thin grey bars, the blocking calls (cat "sync") as red bars, and beneath them a band
of its NVTX ranges (nested ranges stacked, named where there is room). x: milliseconds since
the trace's first event.

Which events go where (the trace's own conventions):
  - "X" events: cat "kernel", "gpu_memcpy", "gpu_memset" are GPU work; cat "sync" a blocking
    host call; "cuda_runtime", "cuda_driver" (or any other cat) other host API calls; "nvtx"
    an NVTX range. ts and dur are microseconds.
  - a GPU stream track: a tid that is a string "stream N", an integer >= 1000000, or a tid
    whose thread_name metadata ("M" event) is "stream N". Other tids are host threads.
  - "M" process_name / thread_name events name the blocks and rows. Other phases (flows
    "s"/"f", counters, instants) are ignored.

The window: --window START_US:END_US, in the trace's own microseconds (ts values, not the
relative ms of the axis). Without it the window is picked so that the first syncs of the
busiest range show: the NVTX range name (the "range" arg of the sync events) holding the most
sync events; its first AUTO_SYNCS (5) sync events in time; from the start of the first to the
end of the last, widened on each side by a quarter of that span (at least AUTO_PAD_US, 50 us)
so that the GPU work before the first sync and the launches after the last show; clipped to
the trace. Sync events with no range count as one group "" when no sync has a range. No sync
events: the whole trace. The window chosen is said on stderr (one note line).

No PNG is wider or taller than MAX_PX (4000) pixels: at most MAX_ROWS rows are drawn (the
first ones, by process then GPU streams then host threads; a note says how many were left
out).

Exit status: 0 PNG written (its path printed on stdout); 2 bad input or usage: unreadable
file, not JSON, no "traceEvents" list, a malformed "X" event, a bad or empty window, an output
name not ending in .png, the input trace, or a folder that cannot be written (one line on
stderr: `timeline.py: reason`, nothing written); 1 a bug, no matplotlib, or stdout that cannot
be written (closed, a full disk: the PNG is written; one line); 130 or 143 interrupted
(SIGINT, SIGTERM), nothing written.

Limits: the trace a regular file (checked once opened, without blocking: a FIFO, a pipe, a
device such as /dev/zero or a folder is refused at once, `timeline.py: PATH: not a regular
file`, exit 2; a FIFO with no writer used to block for ever) of at most MAX_TRACE_BYTES (2 GiB;
a million kernels with their launches and flows are a few hundred MB): a larger file is refused
before it is read (`timeline.py: PATH: larger than 2 GiB, the most timeline.py reads`, exit 2),
and a NUL byte stops the read (`PATH: binary data (a NUL byte): not JSON`). The output may not
be the trace itself (`t.png -o t.png`, a link to it): refused, exit 2, nothing written.

Text from outside (file names, -o, --title, names in the trace) shows in every message, the
figure and the path printed on stdout escaped as syncbench's C side escapes it
(plotkit.escape): control characters as \\x1b, \\xc2\\x9b, \\n; bytes that are not UTF-8 as \\xNN.
"""
import json
import math
import os
import re
import stat
import struct
import sys
import tempfile
from collections import Counter, OrderedDict

import plotkit
from plotkit import BadInput, Parser, clip, pyplot, size_text, too_large
from plotkit import main as plotkit_main

DPI = 120
MAX_PX = 4000
MAX_ROWS = 60          # rows drawn: 60 x 0.42 in + margins stays under MAX_PX / DPI
ROW_IN = 0.42          # inches per row
WIDTH_IN = 14.0
AUTO_SYNCS = 5
AUTO_PAD_US = 50.0
STREAM_TID_BASE = 1000000
MAX_LABEL = 40

GPU_COLORS = {"kernel": "#76b900", "gpu_memcpy": "#1f77b4", "gpu_memset": "#9467bd"}
API_COLOR = "#9e9e9e"
SYNC_COLOR = "#d62728"
NVTX_COLORS = ["#fdd49e", "#fdbb84", "#fc8d59", "#ef6548"]


def within(v, bound):
    """v a JSON number (not a bool), finite and of magnitude at most bound. An integer is
    compared as one: a "ts" of 400 digits does not fit a float (OverflowError)."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    if isinstance(v, int):
        return abs(v) <= bound
    return math.isfinite(v) and abs(v) <= bound


# ---------------------------------------------------------------------------------------------
# Reading


STREAM_RE = re.compile(r"stream \d+$")


def stream_number(tid, thread_name):
    """The stream number of a GPU stream track, or None for a host thread."""
    for text in (tid if isinstance(tid, str) else None, thread_name):
        if isinstance(text, str) and STREAM_RE.match(text):
            return int(text.split()[1])
    if isinstance(tid, int) and not isinstance(tid, bool) and tid >= STREAM_TID_BASE:
        return tid - STREAM_TID_BASE
    return None


# What a trace may be: a million kernels with their launches and flows are a few hundred MB of
# `audit --trace`; the whole text is held while it is read (with the events, about 3 times the
# file: 255 MB for 124 MB), so 2 GiB bounds memory at about 6 GB and what an endless input
# (/dev/zero, a pipe) takes.
MAX_TRACE_BYTES = 2 << 30
READ_CHUNK = 1 << 20


# Bounds on times (us): about 30 years; a trace's real times are far inside, and the figure's
# arithmetic stays finite (ts 1e308 used to end in an internal error).
MAX_TIME_US = 1e15


class Event:
    """One "X" event, in a fraction of a dict's memory (a trace of millions of events)."""
    __slots__ = ("pid", "tid", "ts", "end", "cat", "name", "range")

    def __init__(self, pid, tid, ts, end, cat, name, rng):
        self.pid, self.tid, self.ts, self.end = pid, tid, ts, end
        self.cat, self.name, self.range = cat, name, rng

    def __getitem__(self, k):
        return getattr(self, k)


WS = re.compile(r"[ \t\n\r]*")


def trace_events(text, path):
    """Yields ("meta"|"event", value): the top-level object's members read one at a time and the
    "traceEvents" array element by element (json.JSONDecoder.raw_decode), so that the whole
    document is never a tree of Python objects at once."""
    dec = json.JSONDecoder(object_pairs_hook=plotkit.unique_keys)
    i = WS.match(text, 0).end()
    if text[i:i + 1] != "{":
        dec.raw_decode(text, i)  # ValueError: not JSON at all
        raise BadInput(f"{path}: not a Chrome trace: no \"traceEvents\"")
    i, found, seen = i + 1, False, set()
    while True:
        i = WS.match(text, i).end()
        if text[i:i + 1] == "}":
            break
        key, i = dec.raw_decode(text, i)
        i = WS.match(text, i).end()
        if not isinstance(key, str) or text[i:i + 1] != ":":
            raise ValueError(f"expected a member name and ':' at offset {i}")
        i = WS.match(text, i + 1).end()
        if key in seen:
            raise ValueError(f"member {plotkit.escape(key)} given twice")
        seen.add(key)
        if key == "traceEvents":
            if text[i:i + 1] != "[":
                raise BadInput(f"{path}: \"traceEvents\" is not a list")
            found, i = True, WS.match(text, i + 1).end()
            if text[i:i + 1] == "]":
                i += 1
            else:
                while True:
                    item, i = dec.raw_decode(text, i)
                    yield "event", item
                    i = WS.match(text, i).end()
                    if text[i:i + 1] == ",":
                        i = WS.match(text, i + 1).end()
                    elif text[i:i + 1] == "]":
                        i += 1
                        break
                    else:
                        raise ValueError(f"expected ',' or ']' at offset {i}")
        else:
            _, i = dec.raw_decode(text, i)
        i = WS.match(text, i).end()
        if text[i:i + 1] == ",":
            i += 1
        elif text[i:i + 1] != "}":
            raise ValueError(f"expected ',' or '}}' at offset {i}")
    if WS.match(text, i + 1).end() != len(text):
        raise ValueError("extra data after the object")
    if not found:
        raise BadInput(f"{path}: not a Chrome trace: no \"traceEvents\"")


def read_text(path):
    """The whole file as text. Only a regular file is read, checked once open: it is opened
    without blocking, so that a FIFO with no writer (which blocked open() for ever) is refused
    at once, as a folder, a pipe or a device (/dev/zero) is. At most MAX_TRACE_BYTES: a larger
    file is refused before it is read, one that grows past it while read stops there; the first
    NUL byte (JSON holds none) stops it as binary data. Raises BadInput."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise BadInput(f"{path}: is a folder")
            if not stat.S_ISREG(st.st_mode):
                raise BadInput(f"{path}: not a regular file")
            os.set_blocking(fd, True)
            f = os.fdopen(fd, "rb")
        except BaseException:
            os.close(fd)
            raise
        with f:
            if st.st_size > MAX_TRACE_BYTES:
                raise too_large(path, MAX_TRACE_BYTES, "timeline.py")
            data = bytearray()
            while True:
                chunk = f.read(READ_CHUNK)
                if not chunk:
                    break
                if b"\0" in chunk:
                    raise BadInput(f"{path}: binary data (a NUL byte): not JSON")
                data += chunk
                if len(data) > MAX_TRACE_BYTES:  # it grew meanwhile
                    raise too_large(path, MAX_TRACE_BYTES, "timeline.py")
            return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise BadInput(f"{path}: not JSON ({clip(e, 120)})")
    except OSError as e:
        raise BadInput(f"{path}: cannot open: {e.strerror}")


def load(path):
    """The trace -> (events, process names, thread names); raises BadInput."""
    text = read_text(path)
    pnames, tnames, events = {}, {}, []
    intern = sys.intern
    try:
        for i, (_, e) in enumerate(trace_events(text, path)):
            if not isinstance(e, dict):
                raise BadInput(f"{path}: traceEvents[{i}] is not an object")
            ph = e.get("ph")
            if ph == "M":
                args = e.get("args") if isinstance(e.get("args"), dict) else {}
                name = args.get("name")
                if isinstance(name, str):
                    if e.get("name") == "process_name":
                        pnames[key(e.get("pid"))] = name
                    elif e.get("name") == "thread_name":
                        tnames[(key(e.get("pid")), key(e.get("tid")))] = name
            elif ph == "X":
                ts, dur = e.get("ts"), e.get("dur", 0)
                if not within(ts, MAX_TIME_US):
                    raise BadInput(f"{path}: traceEvents[{i}]: \"ts\" is not a number within "
                                   f"+-{MAX_TIME_US:.0e} us")
                if not within(dur, MAX_TIME_US) or dur < 0:
                    raise BadInput(f"{path}: traceEvents[{i}]: \"dur\" is not a number >= 0 "
                                   f"(and at most {MAX_TIME_US:.0e} us)")
                args = e.get("args") if isinstance(e.get("args"), dict) else {}
                rng = args.get("range") if isinstance(args.get("range"), str) else ""
                events.append(Event(key(e.get("pid")), key(e.get("tid")), float(ts),
                                    float(ts) + float(dur), intern(str(e.get("cat", ""))),
                                    intern(str(e.get("name", ""))), intern(rng)))
    except RecursionError:
        raise BadInput(f"{path}: not JSON (nested too deeply)")
    except ValueError as e:
        raise BadInput(f"{path}: not JSON ({clip(e, 120)})")
    if not events:
        raise BadInput(f"{path}: no \"X\" events to draw")
    return events, pnames, tnames


def key(v):
    """A pid or tid as a hashable, sortable key: ints stay ints, anything else a string."""
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    return "" if v is None else str(v)


def sort_key(v):
    return (0, v, "") if isinstance(v, int) else (1, 0, v)


# ---------------------------------------------------------------------------------------------
# The window


def parse_window(text):
    m = re.fullmatch(r"\s*([-+0-9.eE]+)\s*:\s*([-+0-9.eE]+)\s*", text or "")
    if not m:
        raise BadInput(f"--window '{clip(text)}': expected START_US:END_US (two numbers)")
    try:
        a, b = float(m.group(1)), float(m.group(2))
    except ValueError:
        raise BadInput(f"--window '{clip(text)}': expected START_US:END_US (two numbers)")
    if not (math.isfinite(a) and math.isfinite(b)):
        raise BadInput(f"--window '{clip(text)}': not finite numbers")
    if a >= b:
        raise BadInput(f"--window '{clip(text)}': START must be before END")
    return a, b


def auto_window(events):
    """(start, end, how): see the module's docstring."""
    lo = min(e["ts"] for e in events)
    hi = max(e["end"] for e in events)
    syncs = [e for e in events if e["cat"] == "sync"]
    if not syncs:
        return lo, hi, "the whole trace (no sync events)"
    by_range = Counter(e["range"] for e in syncs if e["range"])
    if by_range:
        first_seen = {}
        for e in sorted(syncs, key=lambda e: e["ts"]):
            first_seen.setdefault(e["range"], e["ts"])
        name = min(by_range, key=lambda r: (-by_range[r], first_seen[r]))
        pick = [e for e in syncs if e["range"] == name]
        what = f"range '{clip(name)}' ({by_range[name]} sync events)"
    else:
        pick, what = syncs, f"{len(syncs)} sync events, none in a range"
    pick = sorted(pick, key=lambda e: e["ts"])[:AUTO_SYNCS]
    a, b = pick[0]["ts"], max(e["end"] for e in pick)
    pad = max((b - a) / 4, AUTO_PAD_US)
    start, end = max(lo, a - pad), min(hi, b + pad)
    if end <= start:
        start, end = a - pad, b + pad
    return start, end, f"the first {len(pick)} sync events of the busiest {what}"


# ---------------------------------------------------------------------------------------------
# Rows


def build_rows(events, pnames, tnames, start, end):
    """[(process label, row label, kind, [events])], kind 'gpu', 'host' or 'nvtx'; only the
    events overlapping [start, end]."""
    shown = [e for e in events if e["end"] >= start and e["ts"] <= end]
    procs = OrderedDict()
    for e in sorted(shown, key=lambda e: (sort_key(e["pid"]), sort_key(e["tid"]))):
        procs.setdefault(e["pid"], OrderedDict()).setdefault(e["tid"], []).append(e)
    rows = []
    for pid, threads in procs.items():
        plabel = clip(pnames.get(pid) or f"pid {pid}")
        gpu, host = [], []
        for tid, evs in threads.items():
            sn = stream_number(tid, tnames.get((pid, tid)))
            if sn is not None:
                gpu.append((sn, tid, evs))
            else:
                host.append((tid, evs))
        for sn, tid, evs in sorted(gpu, key=lambda g: (g[0], sort_key(g[1]))):
            rows.append((plabel, f"stream {sn}", "gpu", evs))
        for tid, evs in sorted(host, key=lambda h: sort_key(h[0])):
            label = clip(tnames.get((pid, tid)) or f"thread {tid}", 28)
            calls = [e for e in evs if e["cat"] != "nvtx"]
            ranges = [e for e in evs if e["cat"] == "nvtx"]
            if calls or not ranges:
                rows.append((plabel, label, "host", calls))
            if ranges:
                rows.append((plabel, f"{label} NVTX", "nvtx", ranges))
    return rows


def nvtx_levels(ranges):
    """Each range's nesting depth (0 = outermost), from the intervals alone."""
    out, open_ends = [], []
    for e in sorted(ranges, key=lambda e: (e["ts"], -e["end"])):
        while open_ends and open_ends[-1] <= e["ts"]:
            open_ends.pop()
        out.append((e, len(open_ends)))
        open_ends.append(e["end"])
    return out


# ---------------------------------------------------------------------------------------------
# Drawing


def draw(plt, rows, start, end, t0, title):
    from matplotlib.patches import Patch
    n = len(rows)
    fig, ax = plt.subplots(figsize=(WIDTH_IN, 1.9 + ROW_IN * n))
    ms = lambda us: (us - t0) / 1000.0  # noqa: E731
    span = ms(end) - ms(start)
    labels = []
    for i, (plabel, label, kind, evs) in enumerate(rows):
        y = n - 1 - i
        labels.append(label)
        if kind == "gpu":
            for cat, color in GPU_COLORS.items():
                bars = [(ms(e["ts"]), max(ms(e["end"]) - ms(e["ts"]), span * 1e-4))
                        for e in evs if e["cat"] == cat]
                if bars:
                    ax.broken_barh(bars, (y - 0.35, 0.7), facecolors=color, edgecolor="none")
            other = [(ms(e["ts"]), max(ms(e["end"]) - ms(e["ts"]), span * 1e-4))
                     for e in evs if e["cat"] not in GPU_COLORS]
            if other:
                ax.broken_barh(other, (y - 0.35, 0.7), facecolors="#bcbd22", edgecolor="none")
        elif kind == "host":
            api = [(ms(e["ts"]), max(ms(e["end"]) - ms(e["ts"]), span * 1e-4))
                   for e in evs if e["cat"] != "sync"]
            if api:
                ax.broken_barh(api, (y - 0.12, 0.24), facecolors=API_COLOR, edgecolor="none")
            syncs = [(ms(e["ts"]), max(ms(e["end"]) - ms(e["ts"]), span * 2e-4))
                     for e in evs if e["cat"] == "sync"]
            if syncs:
                ax.broken_barh(syncs, (y - 0.3, 0.6), facecolors=SYNC_COLOR, edgecolor="none")
        else:
            levels = nvtx_levels(evs)
            depth = min(max(lv for _, lv in levels) + 1, len(NVTX_COLORS))
            h = 0.8 / depth
            for e, lv in levels:
                if lv >= depth:
                    continue
                x0, x1 = max(ms(e["ts"]), ms(start)), min(ms(e["end"]), ms(end))
                yb = y + 0.4 - (lv + 1) * h
                ax.broken_barh([(x0, max(x1 - x0, span * 1e-4))], (yb, h * 0.9),
                               facecolors=NVTX_COLORS[lv], edgecolor="#7f2704", linewidth=0.4)
                if x1 - x0 > span * 0.06:
                    ax.text((x0 + x1) / 2, yb + h * 0.45, clip(e["name"], 24), ha="center",
                            va="center", fontsize=7, clip_on=True)
    # process blocks: a line between them and the process name at the left
    prev = None
    for i, (plabel, *_rest) in enumerate(rows):
        if plabel != prev:
            y = n - 1 - i
            if prev is not None:
                ax.axhline(y + 0.5, color="black", linewidth=0.8)
            ax.text(0.0, y + 0.42, f" {plabel}", transform=ax.get_yaxis_transform(),
                    fontsize=8, fontweight="bold", va="bottom", ha="left")
            prev = plabel
    ax.set_yticks(range(n))
    ax.set_yticklabels(list(reversed(labels)), fontsize=8)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(ms(start), ms(end))
    ax.set_xlabel("time since the trace's first event (ms)")
    ax.grid(axis="x", linewidth=0.3, alpha=0.5)
    ax.legend(handles=[Patch(color=GPU_COLORS["kernel"], label="kernel"),
                       Patch(color=GPU_COLORS["gpu_memcpy"], label="GPU copy"),
                       Patch(color=GPU_COLORS["gpu_memset"], label="GPU memset"),
                       Patch(color=API_COLOR, label="API call"),
                       Patch(color=SYNC_COLOR, label="blocking call"),
                       Patch(color=NVTX_COLORS[0], label="NVTX range")],
              loc="upper center", bbox_to_anchor=(0.5, -0.5 / (1.9 + ROW_IN * n) - 0.06),
              ncol=6, fontsize=8, frameon=False)
    ax.set_title(clip(title, 120) if title else "host-blocking CUDA calls", fontsize=10)
    fig.tight_layout()
    return fig


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        raise RuntimeError(f"{path} is not a PNG")
    return struct.unpack(">II", head[16:24])


def save(plt, fig, out):
    folder = os.path.dirname(os.path.abspath(out))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".timeline.", suffix=".tmp", dir=folder)
    except OSError as e:
        plt.close(fig)
        raise BadInput(f"{out}: cannot write there: {e.strerror}")
    try:
        with os.fdopen(fd, "wb") as f:
            fig.savefig(f, format="png", dpi=DPI)
        w, h = png_size(tmp)
        if max(w, h) > MAX_PX:
            raise RuntimeError(f"{out} came out {w}x{h} pixels, over {MAX_PX}")
        mode = os.umask(0)
        os.umask(mode)
        os.chmod(tmp, 0o666 & ~mode)
        os.replace(tmp, out)
    except BaseException as e:
        try:
            os.remove(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise BadInput(f"{out}: cannot write there: {e.strerror or e}") from e
        raise
    finally:
        plt.close(fig)


def same_file(a, b):
    """a and b name one file: the same inode (a hard link, a symlink followed) or, where a does
    not exist yet, the same path once symlinks are resolved."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return os.path.realpath(a) == os.path.realpath(b)


def run(args, notes):
    out = args.out
    if not out.lower().endswith(".png"):
        raise BadInput(f"-o '{clip(out)}': the output name must end in .png")
    if os.path.isdir(out):
        raise BadInput(f"-o '{clip(out)}': is a folder")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise BadInput(f"-o '{clip(out)}': no folder {clip(folder, 80)}")
    if same_file(out, args.trace):  # `timeline.py t.png -o t.png` replaced its input
        raise BadInput(f"-o '{clip(out)}': is the input trace ('{clip(args.trace)}')")
    window = parse_window(args.window) if args.window is not None else None
    events, pnames, tnames = load(args.trace)
    t0 = min(e["ts"] for e in events)
    if window:
        start, end = window
    else:
        start, end, how = auto_window(events)
        notes.append(f"window {start:.1f}:{end:.1f} us: {how}")
    rows = build_rows(events, pnames, tnames, start, end)
    if not rows:
        raise BadInput(f"--window {start:g}:{end:g}: no event in it (the trace spans "
                       f"{t0:g} to {max(e['end'] for e in events):g} us)")
    if len(rows) > MAX_ROWS:
        notes.append(f"{len(rows) - MAX_ROWS} of {len(rows)} rows left out (at most {MAX_ROWS})")
        rows = rows[:MAX_ROWS]
    plt = pyplot()
    save(plt, draw(plt, rows, start, end, t0, args.title), out)
    return out


def make_parser():
    ap = Parser(prog="timeline.py",
                description="syncbench audit --trace JSON -> PNG timeline",
                epilog="Without --window: the first 5 sync events of the range holding the "
                       "most, widened by a quarter of their span (50 us at least) each side. "
                       f"Limits: the trace a regular file (not a FIFO, pipe or device) of at "
                       f"most {size_text(MAX_TRACE_BYTES)} (a million kernels are a few hundred "
                       f"MB), no NUL byte; past them: one line on stderr naming the file, exit "
                       f"2, nothing written. Messages and the path printed show control characters "
                       f"escaped (\\x1b, \\xc2\\x9b), as syncbench does.")
    ap.add_argument("trace", help="a Chrome trace (syncbench audit --trace PATH)")
    ap.add_argument("-o", "--out", required=True, help="the PNG to write")
    ap.add_argument("--window", metavar="START_US:END_US",
                    help="the time span drawn, in the trace's microseconds")
    ap.add_argument("--title", default="", help="the figure's title")
    return ap


def main(argv=None):
    return plotkit_main("timeline.py", make_parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
