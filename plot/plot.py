#!/usr/bin/env python3
"""syncbench CSV -> PNG figures.

    plot/plot.py RESULTS.csv -o DIR

Draws each figure only when the CSV holds its rows, titles each with the GPU and the date of the
run, and prints the files it wrote. Bad input (no such file, not a syncbench CSV, no rows any
figure can use) is one line on stderr and exit 2.

Figures:
  forced_sync_gemm.png  wall us/iter of async vs each sync variant, per GEMM size
  overhead_share.png    overhead (us and %) of a sync per iteration against GEMM size
  readback.png          readback cost, pending vs idle, pageable vs pinned, print
  copies.png            GB/s and host time blocked in the copy call against size
  double_buffer.png     copy and compute time per variant beside total and the ideal
"""
import argparse
import csv
import math
import os
import sys
from collections import OrderedDict, defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

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


class BadInput(Exception):
    pass


def load(path):
    """Rows as dicts with a float 'median'; raises BadInput with a one-line reason."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise BadInput(f"{path}: not a syncbench CSV: missing column"
                               f"{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
            rows = []
            for n, row in enumerate(reader, start=2):
                if None in row or any(v is None for v in row.values()):
                    raise BadInput(f"{path}:{n}: wrong number of fields")
                try:
                    row["median"] = float(row["median"])
                except ValueError:
                    raise BadInput(f"{path}:{n}: median '{row['median']}' is not a number")
                rows.append(row)
    except OSError as e:
        raise BadInput(f"{path}: cannot open: {e.strerror}")
    except (UnicodeDecodeError, csv.Error) as e:
        raise BadInput(f"{path}: not a CSV file ({e})")
    if not rows:
        raise BadInput(f"{path}: no rows")
    return rows


def num(v):
    """A figure as people read it: 1634, 16.8, 4.13."""
    if v is None or not math.isfinite(v):
        return "?"
    a = abs(v)
    return f"{v:.0f}" if a >= 100 else f"{v:.1f}" if a >= 10 else f"{v:.2f}"


def params_of(text):
    return dict(kv.split("=", 1) for kv in text.split(";") if "=" in kv)


def table(rows, scenarios):
    """{(scenario, params): {variant: {metric: median}}} in file order."""
    out = OrderedDict()
    for r in rows:
        if r["scenario"] in scenarios:
            out.setdefault((r["scenario"], r["params"]), OrderedDict()).setdefault(
                r["variant"], {})[r["metric"]] = r["median"]
    return out


def gemm_size(params):
    p = params_of(params)
    m, n, k = (int(p.get(x, 0)) for x in "mnk")
    return round((m * n * k) ** (1 / 3)) if m and n and k else 0


def title(ax_or_fig, what, meta):
    text = f"{what}\n{meta['gpu']} · {meta['date']}"
    if hasattr(ax_or_fig, "suptitle"):
        ax_or_fig.suptitle(text, fontsize=11)
    else:
        ax_or_fig.set_title(text, fontsize=11)


def save(fig, out_dir, name, written):
    path = os.path.join(out_dir, name)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
    written.append(path)


def fig_forced_sync(rows, meta, out_dir, written):
    groups = [(key, v) for key, v in table(rows, GEMMS).items()
              if "async" in v and sum(s in v for s in SYNC_VARIANTS) >= 2]
    if not groups:
        return
    groups.sort(key=lambda g: gemm_size(g[0][1]))
    fig, axes = plt.subplots(1, len(groups), figsize=(5.2 * len(groups), 4.6), squeeze=False)
    for ax, ((scenario, params), variants) in zip(axes[0], groups):
        names = [v for v in ["async"] + SYNC_VARIANTS if v in variants]
        walls = [variants[v].get("wall_us_per_iter", math.nan) for v in names]
        bars = ax.bar(range(len(names)), walls, color=[VARIANT_COLORS[v] for v in names])
        for bar, v in zip(bars, names):
            if v == "async":
                label = f"{num(variants[v].get('wall_us_per_iter'))} µs"
            else:
                label = (f"+{num(variants[v].get('overhead_us'))} µs\n"
                         f"({num(variants[v].get('overhead_pct'))} %)")
            ax.annotate(label, (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                        ha="center", va="bottom", fontsize=8, xytext=(0, 2),
                        textcoords="offset points")
        ax.set_xticks(range(len(names)), names, rotation=25, ha="right")
        size = gemm_size(params)
        ax.set_title(f"{scenario}: {size}³ {params_of(params).get('dtype', '')} GEMM", fontsize=10)
        ax.set_ylabel("wall µs per iteration")
        ax.set_ylim(0, max(walls) * 1.25)
        kernel = variants["async"].get("kernel_us")
        if kernel:
            ax.axhline(kernel, color="k", lw=0.8, ls="--", label=f"GEMM alone: {num(kernel)} µs")
            ax.legend(fontsize=8, loc="upper left")
    title(fig, "A sync after every GEMM: same cost, very different share", meta)
    fig.tight_layout()
    save(fig, out_dir, "forced_sync_gemm.png", written)


def fig_overhead_share(rows, meta, out_dir, written):
    series = defaultdict(list)  # variant -> [(size, overhead_us, overhead_pct)]
    for (scenario, params), variants in table(rows, GEMMS).items():
        size = gemm_size(params)
        for v, metrics in variants.items():
            if "overhead_pct" in metrics and "overhead_us" in metrics and size:
                series[v].append((size, metrics["overhead_us"], metrics["overhead_pct"]))
    series = {v: sorted(pts) for v, pts in series.items() if len({p[0] for p in pts}) >= 2}
    if not series:
        return
    fig, (ax_us, ax_pct) = plt.subplots(1, 2, figsize=(11, 4.4))
    for v in [s for s in SYNC_VARIANTS if s in series]:
        pts = series[v]
        xs = [p[0] for p in pts]
        ax_us.plot(xs, [p[1] for p in pts], "o-", color=VARIANT_COLORS[v], label=v)
        ax_pct.plot(xs, [p[2] for p in pts], "o-", color=VARIANT_COLORS[v], label=v)
    sizes = sorted({p[0] for pts in series.values() for p in pts})
    for ax in (ax_us, ax_pct):
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [str(x) for x in sizes])
        ax.set_xlabel("GEMM size (m = n = k)")
        ax.grid(True, which="both", alpha=0.3)
    ax_us.set_ylabel("overhead per iteration (µs)")
    ax_us.set_ylim(bottom=0)
    ax_us.set_title("what a sync costs: microseconds, whatever the size", fontsize=10)
    ax_pct.set_yscale("log")
    ax_pct.set_ylabel("overhead (% of the async iteration)")
    ax_pct.set_title("its share: shrinks as the work grows", fontsize=10)
    ax_pct.legend(fontsize=8)
    title(fig, "Forced sync per iteration against work size", meta)
    fig.tight_layout()
    save(fig, out_dir, "overhead_share.png", written)


READBACK_ORDER = ["idle-pageable", "pending-pageable", "idle-pinned", "pending-pinned",
                  "print-idle", "print-pending"]


def fig_readback(rows, meta, out_dir, written):
    groups = [(k, v) for k, v in table(rows, ("readback",)).items()
              if sum(x in v for x in READBACK_ORDER) >= 2]
    if not groups:
        return
    (_, params), variants = max(groups, key=lambda g: len(g[1]))
    names = [v for v in READBACK_ORDER if v in variants and "readback_us" in variants[v]]
    values = [variants[v]["readback_us"] for v in names]
    fig, ax = plt.subplots(figsize=(8, 4.6))
    colors = ["#d62728" if "pending" in v else "#76b900" for v in names]
    bars = ax.bar(range(len(names)), values, color=colors)
    for bar, val in zip(bars, values):
        ax.annotate(f"{num(val)} µs", (bar.get_x() + bar.get_width() / 2, val), ha="center",
                    va="bottom", fontsize=8, xytext=(0, 2), textcoords="offset points")
    ax.set_yscale("log")
    ax.set_ylim(min(values) / 2, max(values) * 3)
    ax.set_xticks(range(len(names)), names, rotation=20, ha="right")
    ax.set_ylabel("host time blocked in the readback (µs, log)")
    p = params_of(params)
    pending = (f"{p.get('pending_us')} µs of GPU work pending" if p.get("pending") == "spin"
               else "an 8192³ GEMM pending")
    ax.text(0.01, 0.97, f"red: {pending}; green: after a sync (nothing pending)",
            transform=ax.transAxes, va="top", fontsize=8)
    title(ax, ".item() and print(): the readback waits for everything queued", meta)
    fig.tight_layout()
    save(fig, out_dir, "readback.png", written)


COPY_STYLE = {"h2d-pinned": ("#1f77b4", "-"), "h2d-pageable": ("#1f77b4", "--"),
              "d2h-pinned": ("#ff7f0e", "-"), "d2h-pageable": ("#ff7f0e", "--")}


def fig_copies(rows, meta, out_dir, written):
    series = defaultdict(list)  # variant -> [(bytes, GBps, host_call_us)]
    for (_, params), variants in table(rows, ("copy",)).items():
        size = parse_size(params_of(params).get("bytes", ""))
        for v, m in variants.items():
            if size and "GBps" in m and "host_call_us" in m:
                series[v].append((size, m["GBps"], m["host_call_us"]))
    series = {v: sorted(p) for v, p in series.items() if len(p) >= 2}
    if not series:
        return
    fig, (ax_bw, ax_call) = plt.subplots(1, 2, figsize=(11, 4.4))
    for v in [v for v in COPY_STYLE if v in series]:
        color, ls = COPY_STYLE[v]
        xs = [p[0] for p in series[v]]
        ax_bw.plot(xs, [p[1] for p in series[v]], "o", ls=ls, color=color, label=v)
        ax_call.plot(xs, [p[2] for p in series[v]], "o", ls=ls, color=color, label=v)
    for ax in (ax_bw, ax_call):
        ax.set_xscale("log", base=2)
        ax.set_xlabel("bytes per copy")
        ax.grid(True, which="both", alpha=0.3)
        ticks = sorted({p[0] for pts in series.values() for p in pts})
        ax.set_xticks(ticks, [human_size(t) for t in ticks], rotation=30)
    ax_bw.set_ylabel("GB/s")
    ax_bw.set_title("bandwidth: pinned reaches the link's speed", fontsize=10)
    ax_bw.legend(fontsize=8)
    ax_call.set_yscale("log")
    ax_call.set_ylabel("host time inside cudaMemcpyAsync (µs, log)")
    ax_call.set_title("CPU blocked in the call: pageable waits for the copy", fontsize=10)
    title(fig, "Copies: pageable vs pinned", meta)
    fig.tight_layout()
    save(fig, out_dir, "copies.png", written)


DB_ORDER = ["serial-pageable", "serial-pinned", "double-buffered"]


def fig_double_buffer(rows, meta, out_dir, written):
    groups = [(k, v) for k, v in table(rows, ("double-buffer",)).items()
              if any(x in v for x in DB_ORDER)]
    if not groups:
        return
    (_, params), variants = max(groups, key=lambda g: len(g[1]))
    names = [v for v in DB_ORDER if v in variants and
             {"total_ms", "copy_ms", "compute_ms", "ideal_ms"} <= set(variants[v])]
    if not names:
        return
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
        ax.annotate(f"{num(total[i])} ms\nefficiency {eff:.2f}" if eff is not None else "",
                    (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom",
                    fontsize=8, xytext=(0, 2), textcoords="offset points")
    ax.set_xticks(list(x), names)
    ax.set_ylabel("ms per pass")
    ax.set_ylim(0, max(max(total), max(c + k for c, k in zip(copy, compute))) * 1.2)
    ax.legend(fontsize=8, loc="upper right")
    p = params_of(params)
    ax.text(0.01, 0.97, f"{p.get('bytes', '?')} in {p.get('chunks', '?')} chunks",
            transform=ax.transAxes, va="top", fontsize=8)
    title(ax, "Double buffering: overlap copy and compute", meta)
    fig.tight_layout()
    save(fig, out_dir, "double_buffer.png", written)


UNITS = [("GiB", 1 << 30), ("GB", 10 ** 9), ("MiB", 1 << 20), ("MB", 10 ** 6), ("KiB", 1 << 10),
         ("KB", 1000), ("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10), ("B", 1)]


def parse_size(text):
    for unit, mult in UNITS:
        if text.endswith(unit) and text[:-len(unit)].isdigit():
            return int(text[:-len(unit)]) * mult
    return int(text) if text.isdigit() else 0


def human_size(n):
    for unit, mult in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= mult and n % mult == 0:
            return f"{n // mult} {unit}"
    return f"{n} B"


FIGURES = [fig_forced_sync, fig_overhead_share, fig_readback, fig_copies, fig_double_buffer]


def main(argv=None):
    ap = argparse.ArgumentParser(description="syncbench CSV -> PNG figures")
    ap.add_argument("csv", help="a syncbench CSV (--csv)")
    ap.add_argument("-o", "--out", default="results/plots", help="folder for the PNGs")
    args = ap.parse_args(argv)
    try:
        rows = load(args.csv)
        meta = {"gpu": rows[0]["gpu"] or "unknown GPU", "date": rows[0]["timestamp"][:10]}
        os.makedirs(args.out, exist_ok=True)
        written = []
        for fig in FIGURES:
            fig(rows, meta, args.out, written)
        if not written:
            raise BadInput(f"{args.csv}: no rows any figure can use (scenarios: "
                           f"{', '.join(sorted({r['scenario'] for r in rows}))})")
    except BadInput as e:
        print(f"plot.py: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"plot.py: {args.out}: {e.strerror}", file=sys.stderr)
        return 2
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
