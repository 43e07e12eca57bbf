#!/usr/bin/env python3
"""syncbench CSV -> PNG figures.

    plot/plot.py RESULTS.csv -o DIR

Draws each figure only when the CSV holds its rows, titles each with the GPU and the date of the
run, and prints the files it wrote. Runs in three steps, so that bad input leaves nothing behind:

1. the output folder: created if missing, and a file written and removed there to prove it
   can be written;
2. the whole CSV read and checked: every median a finite number, the parameters each figure
   reads (GEMM m/n/k, copy bytes) parseable, and each figure's rows gathered (a figure whose
   scenario is there but whose rows are not is skipped with a one-line note);
3. each figure drawn to a temporary file in the output folder; only when all are drawn are
   they renamed into place. On any failure what this run wrote is removed.

Exit status: 0 figures written; 2 bad input, bad usage or an output folder that cannot be
created or written (one line on stderr: `plot.py: PATH[:LINE]: reason`); 1 a bug or no
matplotlib (one line); 130 or 143 interrupted (SIGINT, SIGTERM).

Limits, as `syncbench compare` has its own: the CSV at most MAX_CSV_BYTES (64 MiB; a run's CSV
is kilobytes), a record at most MAX_RECORD (64 KiB), no NUL byte. A file past them (/dev/zero,
a pipe that never ends) stops there: `plot.py: PATH: larger than 64 MiB, the most plot.py
reads`, `PATH:LINE: record longer than 64 KiB (the limit)` or `PATH:LINE: binary data (a NUL
byte): not a CSV file`, exit 2, nothing written.

Text from outside (file names, -o, CSV fields) shows in every message and in the paths printed
on stdout escaped as syncbench's C side escapes it (plotkit.escape): control characters as
\\x1b, \\xc2\\x9b, \\n; bytes that are not UTF-8 as \\xNN.

No PNG is wider or taller than MAX_PX pixels: forced_sync_gemm.png draws at most MAX_PANELS
GEMM sizes (evenly spread over the sweep, smallest and largest kept, said on stderr and in the
figure), and the sweep axes of overhead_share.png and copies.png label at most MAX_TICKS
sizes while drawing every point.

Figures:
  forced_sync_gemm.png  wall us/iter of async vs each sync variant, per GEMM size
  overhead_share.png    overhead (us and %) of a sync per iteration against GEMM size
  readback.png          readback cost, pending vs idle, pageable vs pinned, print
  copies.png            GB/s and host time blocked in the copy call against size
  double_buffer.png     copy and compute time per variant beside total and the ideal
  fixes.png             the price list: per fix the guides recommend, the step with the sync
                        beside the step without it, the saving labelled in us and %
"""
import csv
import math
import os
import shutil
import signal
import struct
import sys
import tempfile
from collections import OrderedDict, defaultdict

from plotkit import (BadInput, Interrupted, Parser, clip, pyplot, regular_size, size_text,
                     too_large)
from plotkit import main as plotkit_main

REQUIRED = ["timestamp", "gpu", "scenario", "variant", "params", "metric", "median"]
SYNC_VARIANTS = ["sync-device", "sync-stream", "sync-event", "sync-readback"]
VARIANT_COLORS = {
    "async": "#76b900",
    "sync-device": "#d62728",
    "sync-stream": "#ff7f0e",
    "sync-event": "#9467bd",
    "sync-readback": "#8c564b",
}
GEMMS = ("small-gemm", "big-gemm")

DPI = 120
MAX_PX = 4000      # no PNG wider or taller than this
MAX_PANELS = 8     # GEMM sizes in forced_sync_gemm.png ...
PANEL_COLUMNS = 4  # ... four to a row: at most 4 x 5.2 in wide, 2 x 4.6 in tall
MAX_TICKS = 12     # labelled sizes on a sweep axis
MAX_MEDIAN = 1e15  # no time (us, ms), rate or percentage of a run comes near: a damaged file
# What a CSV may hold, as `syncbench compare` bounds its own (64 KiB a record): a run's CSV is
# kilobytes (results/h100/default.csv: 54 KB, 400 rows), a long sweep a few megabytes; 64 MiB
# is some 500 000 rows, about 0.5 GB held in memory, and bounds what an endless input takes.
MAX_RECORD = 64 << 10
MAX_CSV_BYTES = 64 << 20


# ---------------------------------------------------------------------------------------------
# Reading and checking the CSV


def parse_median(text):
    """The median as syncbench writes it (%.9g) -> (value, None) or (None, what is wrong)."""
    if not text or text != text.strip() or "_" in text:
        return None, "is not a number"
    try:
        v = float(text)
    except ValueError:
        return None, "is not a number"
    if not math.isfinite(v):
        return None, "is not a finite number"
    if abs(v) >= MAX_MEDIAN:
        return None, f"is out of range (magnitude {MAX_MEDIAN:.0e} or more)"
    return v, None


class Lines:
    """The CSV's lines for the csv module, each checked as it is read, as `syncbench compare`
    checks its CSVs: no NUL byte (binary data), no record longer than MAX_RECORD bytes, no more
    than MAX_CSV_BYTES in all. A file that never ends (/dev/zero, a pipe that keeps writing)
    stops at once or at the limit, never filling the memory. The reader calls record_read()
    after each record, so that a record's length is counted from its first line."""

    def __init__(self, f, path):
        self.f, self.path = f, path
        self.total = self.record = 0
        self.line = 0   # lines ended so far
        self.start = 1  # the line the record being read starts on

    def __iter__(self):
        return self

    def __next__(self):
        text = self.f.readline(MAX_RECORD + 1)  # at most that many characters: a NUL-only or
        if not text:                             # endless line is cut there
            raise StopIteration
        if "\0" in text:
            raise BadInput(f"{self.path}:{self.line + 1}: binary data (a NUL byte): "
                           f"not a CSV file")
        n = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
        self.record += n
        self.total += n
        if self.record > MAX_RECORD:
            raise BadInput(f"{self.path}:{self.start}: record longer than "
                           f"{size_text(MAX_RECORD)} (the limit)")
        if self.total > MAX_CSV_BYTES:
            raise too_large(self.path, MAX_CSV_BYTES, "plot.py")
        if text[-1] in "\r\n":
            self.line += 1
        return text

    def record_read(self):
        self.record = 0
        self.start = self.line + 1


def load(path):
    """Rows as dicts with a float 'median' and their 'line'; raises BadInput with a reason."""
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            size = regular_size(f)
            if size is not None and size > MAX_CSV_BYTES:
                raise too_large(path, MAX_CSV_BYTES, "plot.py")
            lines = Lines(f, path)
            reader = csv.DictReader(lines)
            header = reader.fieldnames or []
            lines.record_read()
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise BadInput(f"{path}: not a syncbench CSV: missing column"
                               f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
            rows = []
            end = reader.line_num
            for row in reader:
                lines.record_read()
                line, end = end + 1, reader.line_num  # a quoted field may span lines
                if None in row or any(v is None for v in row.values()):
                    raise BadInput(f"{path}:{line}: wrong number of fields")
                median, wrong = parse_median(row["median"])
                if wrong:
                    raise BadInput(f"{path}:{line}: median '{clip(row['median'])}' of "
                                   f"{clip(row['scenario'])}/{clip(row['variant'])} "
                                   f"{clip(row['metric'])} {wrong}")
                # only the columns the figures read, their repeated texts shared: a large CSV
                # (a million rows) is held in a fraction of what whole rows would take
                kept = {c: sys.intern(row[c]) for c in REQUIRED if c != "median"}
                kept["median"] = median
                kept["line"] = line
                check_row(path, kept)
                rows.append(kept)
    except OSError as e:
        raise BadInput(f"{path}: cannot open: {e.strerror}")
    except (UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"{path}: not a CSV file ({e})")
    if not rows:
        raise BadInput(f"{path}: no rows")
    return rows


def params_of(text):
    """`key=value;...` as a dict; None if a piece is not key=value."""
    out = {}
    for piece in text.split(";"):
        if not piece:
            continue
        key, eq, value = piece.partition("=")
        if not eq or not key:
            return None
        out[key] = value
    return out


UNITS = [("GiB", 1 << 30), ("GB", 10 ** 9), ("MiB", 1 << 20), ("MB", 10 ** 6), ("KiB", 1 << 10),
         ("KB", 1000), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("B", 1), ("", 1)]


def parse_size(text):
    """A size as syncbench reads one (4096, 4KiB, 400MB; units in any case); 0 if not one."""
    for unit, mult in UNITS:
        if text.lower().endswith(unit.lower()):
            digits = text[:len(text) - len(unit)]
            if digits.isascii() and digits.isdigit() and len(digits) <= 19:
                v = int(digits) * mult
                return v if v < 1 << 63 else 0  # a long long, as syncbench reads it
    return 0


def positive_int(text):
    """A GEMM dimension: a positive integer below 2^31; 0 if not one."""
    if not (text.isascii() and text.isdigit()) or len(text) > 10:
        return 0
    return int(text) if 0 < int(text) < 1 << 31 else 0


# Parameters a figure computes with, per scenario: (key, parser, what it must be).
NUMERIC_PARAMS = {
    "small-gemm": [(k, positive_int, "a positive integer below 2^31") for k in "mnk"],
    "big-gemm": [(k, positive_int, "a positive integer below 2^31") for k in "mnk"],
    "copy": [("bytes", parse_size, "a size such as 4096 or 64KiB")],
}
FIGURE_SCENARIOS = set(GEMMS) | {"readback", "copy", "double-buffer"}


def check_row(path, r):
    """A row a figure may draw has parseable params; GEMM sizes and copy bytes numbers. Stores
    the parsed dict as r['p']. Checked as the file is read: a bad row stops it at once."""
    if r["scenario"] not in FIGURE_SCENARIOS:
        return
    p = params_of(r["params"])
    where = f"{path}:{r['line']}: {r['scenario']} params '{clip(r['params'], 60)}'"
    if p is None:
        raise BadInput(f"{where}: not key=value pairs joined by ';'")
    for key, parse, what in NUMERIC_PARAMS.get(r["scenario"], []):
        if key not in p:
            raise BadInput(f"{where}: no {key}=")
        if not parse(p[key]):
            raise BadInput(f"{where}: {key}='{clip(p[key])}' is not {what}")
    r["p"] = p


def table(rows, scenarios):
    """{(scenario, params): {variant: {metric: median}}} in file order."""
    out = OrderedDict()
    for r in rows:
        if r["scenario"] in scenarios:
            out.setdefault((r["scenario"], r["params"]), OrderedDict()).setdefault(
                r["variant"], {})[r["metric"]] = r["median"]
    return out


def parsed_params(rows):
    """{(scenario, params text): parsed params} for the rows check_row parsed."""
    return {(r["scenario"], r["params"]): r["p"] for r in rows if "p" in r}


def gemm_dims(p):
    return tuple(positive_int(p[x]) for x in "mnk")


def gemm_size(p):
    m, n, k = gemm_dims(p)
    return round((m * n * k) ** (1 / 3))


def spread(items, n):
    """At most n of items, evenly spread, first and last kept."""
    if len(items) <= n:
        return list(items)
    return [items[round(i * (len(items) - 1) / (n - 1))] for i in range(n)]


# ---------------------------------------------------------------------------------------------
# Each figure: prepare(rows) -> (data, note). data None: nothing to draw; note: why, when the
# figure's scenario is there (None when it is not: then silence).


def prep_forced_sync(rows):
    tab = table(rows, GEMMS)
    if not tab:
        return None, None
    pmap = parsed_params(rows)
    groups = []
    for (scenario, params), variants in tab.items():
        names = [v for v in ["async"] + SYNC_VARIANTS
                 if "wall_us_per_iter" in variants.get(v, {})]
        if "async" in names and len(names) >= 3:
            groups.append((scenario, pmap[scenario, params], names, variants))
    if not groups:
        return None, ("no GEMM size has async and two sync variants with wall_us_per_iter")
    groups.sort(key=lambda g: (gemm_size(g[1]), g[0]))
    shown = spread(groups, MAX_PANELS)
    note = None
    if len(shown) < len(groups):
        note = (f"{len(groups)} GEMM sizes, drawing {len(shown)} evenly spread "
                f"(smallest and largest kept; overhead_share.png has them all)")
    return {"groups": shown, "of": len(groups)}, note


def prep_overhead_share(rows):
    tab = table(rows, GEMMS)
    if not tab:
        return None, None
    pmap = parsed_params(rows)
    series = defaultdict(list)  # variant -> [(size, overhead_us, overhead_pct)]
    for (scenario, params), variants in tab.items():
        size = gemm_size(pmap[scenario, params])
        for v in SYNC_VARIANTS:
            m = variants.get(v, {})
            if "overhead_pct" in m and "overhead_us" in m:
                series[v].append((size, m["overhead_us"], m["overhead_pct"]))
    series = {v: sorted(pts) for v, pts in series.items() if len({p[0] for p in pts}) >= 2}
    if not series:
        return None, "no sync variant has overhead_us and overhead_pct at two GEMM sizes or more"
    return {"series": series}, None


READBACK_ORDER = ["idle-pageable", "pending-pageable", "idle-pinned", "pending-pinned",
                  "print-idle", "print-pending"]


def prep_readback(rows):
    tab = table(rows, ("readback",))
    if not tab:
        return None, None
    pmap = parsed_params(rows)
    groups = []
    for (scenario, params), variants in tab.items():
        names = [v for v in READBACK_ORDER if "readback_us" in variants.get(v, {})]
        if len(names) >= 2:
            groups.append((pmap[scenario, params], names, variants))
    if not groups:
        return None, "no readback parameters have two variants or more with readback_us"
    p, names, variants = max(groups, key=lambda g: len(g[1]))
    return {"p": p, "names": names, "values": [variants[v]["readback_us"] for v in names]}, None


COPY_STYLE = {"h2d-pinned": ("#1f77b4", "-"), "h2d-pageable": ("#1f77b4", "--"),
              "d2h-pinned": ("#ff7f0e", "-"), "d2h-pageable": ("#ff7f0e", "--")}


def prep_copies(rows):
    tab = table(rows, ("copy",))
    if not tab:
        return None, None
    pmap = parsed_params(rows)
    series = defaultdict(list)  # variant -> [(bytes, GBps, host_call_us)]
    for (scenario, params), variants in tab.items():
        size = parse_size(pmap[scenario, params]["bytes"])
        for v in COPY_STYLE:
            m = variants.get(v, {})
            if "GBps" in m and "host_call_us" in m:
                series[v].append((size, m["GBps"], m["host_call_us"]))
    series = {v: sorted(p) for v, p in series.items() if len({x[0] for x in p}) >= 2}
    if not series:
        return None, "no copy variant has GBps and host_call_us at two sizes or more"
    return {"series": series}, None


DB_ORDER = ["serial-pageable", "serial-pinned", "double-buffered"]
DB_METRICS = {"total_ms", "copy_ms", "compute_ms", "ideal_ms"}


def prep_double_buffer(rows):
    tab = table(rows, ("double-buffer",))
    if not tab:
        return None, None
    pmap = parsed_params(rows)
    groups = []
    for (scenario, params), variants in tab.items():
        names = [v for v in DB_ORDER if DB_METRICS <= set(variants.get(v, {}))]
        if names:
            groups.append((pmap[scenario, params], names, variants))
    if not groups:
        return None, "no double-buffer variant has total_ms, copy_ms, compute_ms and ideal_ms"
    p, names, variants = max(groups, key=lambda g: len(g[1]))
    return {"p": p, "names": names, "variants": variants}, None


# The price list: the guide's advice for each fix scenario (configs/fixes.ini), and .item()
# after every small GEMM. A pattern is any (scenario, params) whose sync-free variants carry
# saving_us against a syncing reference.
ADVICE = OrderedDict([
    ("coalesce", "coalesce .item() calls into one"),
    ("log-every", "log the loss every 100 steps"),
    ("device-branch", "branch on the GPU (torch.where)"),
    ("dynamic-shape", "fixed shapes instead of nonzero/x[mask]"),
    ("graph", "capture the launches in a CUDA graph"),
    ("busy-stream", "sync the stream, not the device"),
    ("alloc", "no cudaFree in the loop"),
    ("small-h2d", "pinned staging + async copy"),
])
MAX_FIX_ROWS = 24  # bars in fixes.png: at most 24 x 0.45 in tall


def prep_fixes(rows):
    if not table(rows, tuple(ADVICE)):  # the price list needs a fix scenario
        return None, None
    tab = table(rows, tuple(ADVICE) + GEMMS)
    groups = []
    for (scenario, params), variants in tab.items():
        if scenario in GEMMS:  # .item() after every GEMM, against no sync at all
            item = variants.get("sync-item", {})
            if "wall_us_per_iter" in item and "overhead_us" in item and "async" in variants:
                base = item["wall_us_per_iter"]
                save = item["overhead_us"]
                groups.append((f"no .item() after every {scenario}", params, "sync-item", base,
                               [("async", variants["async"]["wall_us_per_iter"], save,
                                 100 * save / base)]))
            continue
        free = [(v, m["step_us"], m["saving_us"], m.get("saving_pct", math.nan))
                for v, m in variants.items() if "saving_us" in m and "step_us" in m]
        syncing = [v for v, m in variants.items() if "step_us" in m and "saving_us" not in m]
        if free and syncing:
            groups.append((ADVICE[scenario], params, syncing[0],
                           variants[syncing[0]]["step_us"], free))
    if not groups:
        return None, "no fix scenario has a syncing variant and a saving_us row"
    bars = sum(1 + len(g[4]) for g in groups)
    note = None
    while bars > MAX_FIX_ROWS and len(groups) > 1:
        bars -= 1 + len(groups.pop()[4])
        note = f"the first {len(groups)} patterns of the CSV"
    return {"groups": groups}, note


# ---------------------------------------------------------------------------------------------
# Drawing (matplotlib is imported only once the input has passed)


def num(v):
    """A figure as people read it: 1634, 16.8, 4.13."""
    if v is None or not math.isfinite(v):
        return "?"
    a = abs(v)
    return f"{v:.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}"


def human_size(n):
    for unit, mult in (("GiB", 1 << 30), ("GB", 10 ** 9), ("MiB", 1 << 20), ("MB", 10 ** 6),
                       ("KiB", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult} {unit}"
    return f"{n} B"


def title(ax_or_fig, what, meta, note=None):
    text = f"{what}\n{meta['gpu']} · {meta['date']}" + (f" · {note}" if note else "")
    if hasattr(ax_or_fig, "suptitle"):
        ax_or_fig.suptitle(text, fontsize=11)
    else:
        ax_or_fig.set_title(text, fontsize=11)


def y_scale(ax, values, log, top=1.25):
    """Log when asked and every value is positive, else linear from 0 (or below, if negative)."""
    lo, hi = min(values), max(values)
    if log and lo > 0:
        ax.set_yscale("log")
        ax.set_ylim(lo / 2, hi * 3)
        return
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    pad = (hi - lo) * (top - 1) or 1.0
    ax.set_ylim(lo - (pad if lo < 0 else 0), hi + pad)


def log_spread(values, n):
    """Indices of at most n of the sorted positive values, evenly spread on a log axis:
    for each of n points evenly spaced from the first to the last, the nearest value."""
    if len(values) <= n:
        return list(range(len(values)))
    lo, hi = math.log(values[0]), math.log(values[-1])
    logs = [math.log(v) for v in values]
    keep = set()
    for i in range(n):
        target = lo + (hi - lo) * i / (n - 1)
        keep.add(min(range(len(values)), key=lambda j: abs(logs[j] - target)))
    return sorted(keep)


def sweep_axis(ax, ticks, labels):
    """Log2 x axis with at most MAX_TICKS labelled sizes; every point is still drawn."""
    from matplotlib.ticker import NullFormatter
    ax.set_xscale("log", base=2)
    keep = log_spread(ticks, MAX_TICKS)
    ax.set_xticks([ticks[i] for i in keep], [labels[i] for i in keep], rotation=30)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="both", alpha=0.3)


def draw_forced_sync(plt, d, meta):
    groups = d["groups"]
    cols = min(len(groups), PANEL_COLUMNS)
    nrows = math.ceil(len(groups) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.2 * cols, 4.6 * nrows), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(groups):]:
        ax.set_visible(False)
    for ax, (scenario, p, names, variants) in zip(flat, groups):
        walls = [variants[v]["wall_us_per_iter"] for v in names]
        bars = ax.bar(range(len(names)), walls, color=[VARIANT_COLORS[v] for v in names])
        for bar, v in zip(bars, names):
            if v == "async":
                label = f"{num(variants[v]['wall_us_per_iter'])} µs"
            else:
                label = (f"+{num(variants[v].get('overhead_us'))} µs\n"
                         f"({num(variants[v].get('overhead_pct'))} %)")
            ax.annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=8, xytext=(0, 2),
                        textcoords="offset points")
        ax.set_xticks(range(len(names)), names, rotation=25, ha="right")
        m, n, k = gemm_dims(p)
        shape = f"{m}³" if m == n == k else f"{m}×{n}×{k}"
        ax.set_title(f"{scenario}: {shape} {clip(p.get('dtype', ''), 12)} GEMM", fontsize=10)
        ax.set_ylabel("wall µs per iteration")
        y_scale(ax, walls, log=False)
        kernel = variants["async"].get("kernel_us")
        if kernel:
            ax.axhline(kernel, color="k", lw=0.8, ls="--", label=f"GEMM alone: {num(kernel)} µs")
            ax.legend(fontsize=8, loc="upper left")
    shown = (f"{len(groups)} of {d['of']} sizes shown, evenly spread"
             if len(groups) < d["of"] else None)
    title(fig, "A sync after every GEMM: same cost, very different share", meta, shown)
    fig.tight_layout()
    return fig


def draw_overhead_share(plt, d, meta):
    series = d["series"]
    fig, (ax_us, ax_pct) = plt.subplots(1, 2, figsize=(11, 4.4))
    for v in [s for s in SYNC_VARIANTS if s in series]:
        pts = series[v]
        xs = [p[0] for p in pts]
        ax_us.plot(xs, [p[1] for p in pts], "o-", color=VARIANT_COLORS[v], label=v)
        ax_pct.plot(xs, [p[2] for p in pts], "o-", color=VARIANT_COLORS[v], label=v)
    sizes = sorted({p[0] for pts in series.values() for p in pts})
    for ax in (ax_us, ax_pct):
        sweep_axis(ax, sizes, [str(x) for x in sizes])
        ax.set_xlabel("GEMM size (m = n = k)")
    ax_us.set_ylabel("overhead per iteration (µs)")
    y_scale(ax_us, [p[1] for pts in series.values() for p in pts], log=False, top=1.1)
    ax_us.set_title("what a sync costs: microseconds, whatever the size", fontsize=10)
    pcts = [p[2] for pts in series.values() for p in pts]
    if min(pcts) > 0:
        ax_pct.set_yscale("log")
    else:  # a noisy negative overhead: keep it visible rather than drop it from a log axis
        ax_pct.set_yscale("symlog", linthresh=1.0)
    ax_pct.set_ylabel("overhead (% of the async iteration)")
    ax_pct.set_title("its share: shrinks as the work grows", fontsize=10)
    ax_pct.legend(fontsize=8)
    title(fig, "Forced sync per iteration against work size", meta)
    fig.tight_layout()
    return fig


def draw_readback(plt, d, meta):
    names, values, p = d["names"], d["values"], d["p"]
    fig, ax = plt.subplots(figsize=(8, 4.6))
    colors = ["#d62728" if "pending" in v else "#76b900" for v in names]
    bars = ax.bar(range(len(names)), values, color=colors)
    for bar, val in zip(bars, values):
        ax.annotate(f"{num(val)} µs", (bar.get_x() + bar.get_width() / 2, val), ha="center",
                    va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
    y_scale(ax, values, log=True)
    ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
    ax.set_ylabel("host time blocked in the readback (µs, log)")
    pending = (f"{clip(p.get('pending_us', '?'), 12)} µs of GPU work pending"
               if p.get("pending") == "spin" else "an 8192³ GEMM pending")
    ax.text(0.01, 0.97, f"red: {pending}; green: after a sync (nothing pending)",
            transform=ax.transAxes, va="top", fontsize=8)
    title(ax, ".item() and print(): the readback waits for everything queued", meta)
    fig.tight_layout()
    return fig


def draw_copies(plt, d, meta):
    series = d["series"]
    fig, (ax_bw, ax_call) = plt.subplots(1, 2, figsize=(11, 4.4))
    for v in [v for v in COPY_STYLE if v in series]:
        color, ls = COPY_STYLE[v]
        xs = [p[0] for p in series[v]]
        ax_bw.plot(xs, [p[1] for p in series[v]], "o", ls=ls, color=color, label=v)
        ax_call.plot(xs, [p[2] for p in series[v]], "o", ls=ls, color=color, label=v)
    ticks = sorted({p[0] for pts in series.values() for p in pts})
    for ax in (ax_bw, ax_call):
        sweep_axis(ax, ticks, [human_size(t) for t in ticks])
        ax.set_xlabel("bytes per copy")
    ax_bw.set_ylabel("GB/s")
    ax_bw.set_title("bandwidth: pinned reaches the link's speed", fontsize=10)
    ax_bw.legend(fontsize=8)
    calls = [p[2] for pts in series.values() for p in pts]
    if min(calls) > 0:
        ax_call.set_yscale("log")
    ax_call.set_ylabel("host time inside cudaMemcpyAsync (µs, log)")
    ax_call.set_title("CPU blocked in the call: pageable waits for the copy", fontsize=10)
    title(fig, "Copies: pageable vs pinned", meta)
    fig.tight_layout()
    return fig


def draw_double_buffer(plt, d, meta):
    names, variants, p = d["names"], d["variants"], d["p"]
    fig, ax = plt.subplots(figsize=(8, 4.6))
    x = range(len(names))
    copy = [variants[v]["copy_ms"] for v in names]
    compute = [variants[v]["compute_ms"] for v in names]
    total = [variants[v]["total_ms"] for v in names]
    ideal = [variants[v]["ideal_ms"] for v in names]
    w = 0.38
    ax.bar([i - w / 2 for i in x], copy, w, color="#1f77b4", label="copy alone")
    ax.bar([i - w / 2 for i in x], compute, w, bottom=copy, color="#76b900",
           label="compute alone")
    bars = ax.bar([i + w / 2 for i in x], total, w, color="#7f7f7f", label="total (measured)")
    for i, (b, v) in enumerate(zip(bars, names)):
        ax.hlines(ideal[i], i - w, i + w, colors="k", linestyles="--",
                  label="ideal = max(copy, compute)" if i == 0 else None)
        eff = variants[v].get("efficiency")
        label = f"{num(total[i])} ms" + (f"\nefficiency {eff:.2f}" if eff is not None else "")
        ax.annotate(label, (b.get_x() + b.get_width() / 2, b.get_height()), ha="center",
                    va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(list(x), names)
    ax.set_ylabel("ms per pass")
    y_scale(ax, total + ideal + [c + k for c, k in zip(copy, compute)], log=False, top=1.2)
    ax.legend(fontsize=8, loc="upper right")
    ax.text(0.01, 0.97, f"{clip(p.get('bytes', '?'), 16)} in {clip(p.get('chunks', '?'), 8)} "
            "chunks", transform=ax.transAxes, va="top", fontsize=8)
    title(ax, "Double buffering: overlap copy and compute", meta)
    fig.tight_layout()
    return fig


def draw_fixes(plt, d, meta):
    groups = d["groups"]
    labels, values, colors, notes = [], [], [], []
    for advice, params, syncing, base, free in groups:
        labels.append(f"{advice}\n{syncing}  ({clip(params, 30)})")
        values.append(base)
        colors.append("#d62728")
        notes.append(f"{num(base)} µs")
        for v, step, save, pct in free:
            labels.append(f"{v}")
            values.append(step)
            colors.append("#76b900")
            notes.append(f"{num(step)} µs: saves {num(save)} µs ({num(pct)} %)")
    n = len(values)
    fig, ax = plt.subplots(figsize=(10, 1.2 + 0.45 * n))
    y = list(range(n))[::-1]
    ax.barh(y, values, color=colors)
    for yi, val, text in zip(y, values, notes):
        ax.annotate(text, (val, yi), va="center", fontsize=8, xytext=(3, 0),
                    textcoords="offset points")
    ax.set_yticks(y, labels, fontsize=8)
    positive = [v for v in values if v > 0]
    if positive and min(positive) > 0 and len(positive) == n:
        ax.set_xscale("log")
        ax.set_xlim(min(values) / 2, max(values) * 12)
    ax.set_xlabel("time per step (µs, log): red with the sync, green sync-free")
    title(ax, "The price list of sync-free code", meta)
    fig.tight_layout()
    return fig


FIGURES = [
    ("forced_sync_gemm.png", prep_forced_sync, draw_forced_sync),
    ("overhead_share.png", prep_overhead_share, draw_overhead_share),
    ("readback.png", prep_readback, draw_readback),
    ("copies.png", prep_copies, draw_copies),
    ("fixes.png", prep_fixes, draw_fixes),
    ("double_buffer.png", prep_double_buffer, draw_double_buffer),
]


# ---------------------------------------------------------------------------------------------
# Files


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    return struct.unpack(">II", head[16:24]) if head[:8] == b"\x89PNG\r\n\x1a\n" else (0, 0)


class Output:
    """The output folder and what this run put in it, so that a failure can take it back: the
    folders it made, its temporary PNGs, and the figures it placed with the older file each
    replaced, kept (a hard link, or a copy) until every figure is in place."""

    def __init__(self, folder):
        self.folder = folder
        self.created = []  # folders this run made, deepest first
        self.temps = []    # (temporary PNG, its final name) not yet renamed
        self.placed = []   # (final name, the older file kept aside or None) renamed into place
        self.kept = None   # the older file kept aside for the rename under way
        mode = os.umask(0)
        os.umask(mode)
        self.file_mode = 0o666 & ~mode

    def prepare(self):
        """Create the folder if missing and prove it can be written; BadInput if not."""
        f = self.folder
        if not f:
            raise BadInput("-o: empty folder name")
        if os.path.lexists(f) and not os.path.isdir(f):
            raise BadInput(f"{f}: not a folder")
        p = os.path.abspath(f)
        missing = []
        while not os.path.lexists(p):
            missing.append(p)
            p = os.path.dirname(p)
        try:
            for d in reversed(missing):
                os.mkdir(d)
                self.created.insert(0, d)
        except OSError as e:
            raise BadInput(f"{f}: cannot create the folder: {e.strerror}")
        try:
            fd, probe = tempfile.mkstemp(prefix=".plot-probe-", dir=f)
            os.close(fd)
            os.remove(probe)
        except OSError as e:
            raise BadInput(f"{f}: cannot write there: {e.strerror}")

    def check(self, names):
        """Every target a figure can replace: a folder in a PNG's place is refused before
        anything is drawn or replaced (it used to fail the third rename, after two older PNGs
        were gone)."""
        for name in names:
            path = os.path.join(self.folder, name)
            if os.path.isdir(path) and not os.path.islink(path):
                raise BadInput(f"{path}: is a folder, not a figure to replace; nothing written")

    def save(self, plt, fig, name):
        """The figure as a temporary PNG in the folder, at most MAX_PX in either dimension."""
        fd, tmp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=self.folder)
        self.temps.append((tmp, os.path.join(self.folder, name)))
        try:
            with os.fdopen(fd, "wb") as f:
                fig.savefig(f, format="png", dpi=DPI, bbox_inches="tight")
            if max(png_size(tmp)) > MAX_PX:
                # Text ran far outside the axes: draw the figure at its own size instead,
                # which the layouts above keep within MAX_PX.
                with open(tmp, "wb") as f:
                    fig.savefig(f, format="png", dpi=DPI)
            w, h = png_size(tmp)
            if max(w, h) > MAX_PX:
                raise RuntimeError(f"{name} came out {w}x{h} pixels, over {MAX_PX}")
            os.chmod(tmp, self.file_mode)
        finally:
            plt.close(fig)

    def keep_aside(self, final, tmp):
        """The file at final kept under a new name beside it (a hard link: the same file, or a
        copy where links are refused); None when there is none."""
        if not os.path.lexists(final):
            return None
        kept = tmp + ".old"
        try:
            os.link(final, kept, follow_symlinks=False)
        except OSError:
            if os.path.islink(final) or not os.path.isfile(final):
                raise
            shutil.copy2(final, kept)
        return kept

    def commit(self):
        """Every temporary PNG renamed into place, or none: the targets are checked first; a
        rename that fails, or SIGINT/SIGTERM (held until the renames are done), puts back the
        older files replaced so far (discard)."""
        self.check([os.path.basename(final) for _, final in self.temps])
        # Held by handlers that only note the signal, not by a signal mask: a mask is the main
        # thread's alone, and the kernel hands a process's SIGINT to any thread that does not
        # block it (numpy's BLAS threads), whose Python handler then raises in the main thread
        # wherever it is, even after the renames returned
        caught = []
        held = {n: signal.signal(n, lambda signum, frame: caught.append(signum))
                for n in (signal.SIGINT, signal.SIGTERM)}
        try:
            while self.temps:
                tmp, final = self.temps[0]
                self.kept = self.keep_aside(final, tmp)
                os.replace(tmp, final)
                self.temps.pop(0)
                self.placed.append((final, self.kept))
                self.kept = None
            if caught:  # Ctrl-C during the renames: undone, then reported as an interruption
                raise Interrupted(min(caught))
            for _, kept in self.placed:
                if kept:
                    try:
                        os.remove(kept)
                    except OSError:
                        pass
            return [final for final, _ in self.placed]
        except BaseException:
            self.discard()
            raise
        finally:
            for n, handler in held.items():
                signal.signal(n, handler)

    def discard(self):
        """Undo: each figure placed gives way to the file it replaced (or is removed when it
        replaced none); the temporary PNGs are removed, and the folders this run made."""
        for final, kept in reversed(self.placed):
            try:
                if kept:
                    os.replace(kept, final)
                else:
                    os.remove(final)
            except OSError:
                pass
        paths = [t for t, _ in self.temps] + ([self.kept] if self.kept else [])
        for path in paths:
            try:
                os.remove(path)
            except OSError:
                pass
        for d in self.created:
            try:
                os.rmdir(d)
            except OSError:
                pass
        self.temps, self.placed, self.created, self.kept = [], [], [], None


# ---------------------------------------------------------------------------------------------


def run(args, notes):
    out = Output(args.out)
    try:
        out.prepare()
        rows = load(args.csv)
        meta = {"gpu": clip(rows[0]["gpu"] or "unknown GPU", 60),
                "date": clip(rows[0]["timestamp"][:10], 10)}
        todo = []
        for name, prep, draw in FIGURES:
            data, note = prep(rows)
            if note:
                notes.append(f"{name} skipped: {note}" if data is None else f"{name}: {note}")
            if data is not None:
                todo.append((name, draw, data))
        if not todo:
            notes.clear()
            raise BadInput(f"{args.csv}: no rows any figure can use (scenarios: "
                           f"{', '.join(sorted({clip(r['scenario']) for r in rows}))})")
        out.check([name for name, _, _ in todo])
        plt = pyplot()
        for name, draw, data in todo:
            out.save(plt, draw(plt, data, meta), name)
        return out.commit()
    except BaseException as e:
        out.discard()
        if isinstance(e, OSError):  # writing or renaming in the folder: full disk, quota, ...
            raise BadInput(f"{args.out}: cannot write there: {e.strerror or e}") from e
        raise


def make_parser():
    ap = Parser(prog="plot.py", description="syncbench CSV -> PNG figures",
                epilog=f"Limits: the CSV at most {size_text(MAX_CSV_BYTES)} "
                       f"(a run's CSV is kilobytes), a record at most "
                       f"{size_text(MAX_RECORD)}, no NUL byte; past them: one line on stderr "
                       f"naming the file, exit 2, nothing written. Messages and the paths "
                       f"printed show control characters escaped (\\x1b, \\xc2\\x9b), as "
                       f"syncbench does.")
    ap.add_argument("csv", help="a syncbench CSV (--csv)")
    ap.add_argument("-o", "--out", default="results/plots", help="folder for the PNGs")
    return ap


def main(argv=None):
    return plotkit_main("plot.py", make_parser, run, argv)


if __name__ == "__main__":
    sys.exit(main())
