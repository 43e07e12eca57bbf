#!/usr/bin/env python3
"""What the audit's cost measurements share (tests/gpu/activity_cost.sh and
tests/gpu/audit_cost_real.py): the figures of paired and alternating runs and their tables, and
the census of a kept record folder. No GPU; tests/cli/test_cost_scripts.py holds it to canned
numbers.

    cost_stats.py pairs ROUNDS_FILE      the table of activity_cost.sh's pairs
    cost_stats.py runs RUNS_DIR ROUNDS_FILE   the pairs file from a runs folder, and the table
    cost_stats.py census DIR [DIR...]     what each kept record folder holds, per kernel
    cost_stats.py window ROUNDS_FILE      the table of window_cost.sh's pairs and predictions
    cost_stats.py callbacks DIR STEPS    the library's own time a step in a kept record folder

A pairs file has a header line, then one line a pair: `ROUND VARIANT PLAIN_US AUDITED_US`
(wall us per iteration; NA for a run that failed). Each pair's ratio is audited / plain; a
variant's figure is the median of its pairs' ratios with their min and max, and, beside the
full `--gpu-activity` variant ("gpu"), the median over the rounds both ran of its ratio minus
gpu's: what turning that part off saved, in points of the plain run."""
import collections
import csv
import json
import os
import random
import statistics
import sys

# tests/audit/'s modules read the blocks its programs print (recording_turns.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "audit"))

FULL = "gpu"


def spread(values):
    """(n, median, min, max) of values; (0, None, None, None) when there are none."""
    v = [x for x in values if x is not None]
    if not v:
        return 0, None, None, None
    return len(v), statistics.median(v), min(v), max(v)


def pct(ratio):
    """A ratio as a signed percentage, '-' when None: 1.052 -> '+5.2 %'."""
    return "-" if ratio is None else "%+.1f %%" % (100 * (ratio - 1))


def points(delta):
    """A difference of ratios in points of the plain run, '-' when None: -0.05 -> '-5.0'."""
    return "-" if delta is None else "%+.1f" % (100 * delta)


def read_pairs(lines):
    """[(round, variant, plain_us, audited_us)] of a pairs file's lines (the header and blank
    lines skipped; NA is None)."""
    out = []
    for line in lines:
        f = line.split()
        if len(f) < 4 or f[0] == "round":
            continue
        num = [None if x == "NA" else float(x) for x in f[2:4]]
        out.append((int(f[0]), f[1], num[0], num[1]))
    return out


def wall_us(csv_path):
    """The wall_us_per_iter median of a syncbench run's CSV; None when there is none."""
    try:
        with open(csv_path, newline="") as f:
            for row in csv.DictReader(f):
                if row.get("metric") == "wall_us_per_iter":
                    return float(row["median"])
    except (OSError, ValueError, KeyError):
        pass
    return None


def pairs_of_runs(folder):
    """[(round, variant, plain_us, audited_us)] of an activity_cost.sh runs folder: its index
    (a line "ROUND VARIANT" a pair, in the order they ran) and each pair's two CSVs."""
    out = []
    with open(os.path.join(folder, "index")) as f:
        for line in f:
            rnd, var = line.split()
            out.append((int(rnd), var, wall_us(os.path.join(folder, f"{rnd}-{var}-plain.csv")),
                        wall_us(os.path.join(folder, f"{rnd}-{var}-audited.csv"))))
    return out


def pairs_lines(pairs):
    """The pairs file's lines (with its header) of pairs."""
    lines = ["round variant plain_us audited_us ratio"]
    for rnd, var, p, a in pairs:
        r = ratio(p, a)
        lines.append("%d %s %s %s %s" % (rnd, var, "NA" if p is None else "%.3f" % p,
                                         "NA" if a is None else "%.3f" % a,
                                         "NA" if r is None else "%.4f" % r))
    return lines


def ratio(plain, audited):
    return audited / plain if plain and audited is not None else None


def pairs_rows(pairs):
    """One dict a variant, in the order variants first appear: pairs (ratios there), failed
    (pairs with a run that failed), plain and audited medians (us), the median ratio with min
    and max, and vs_full: the median, min and max over rounds of ratio - gpu's ratio."""
    by = collections.OrderedDict()
    for rnd, var, p, a in pairs:
        by.setdefault(var, {})[rnd] = (p, a, ratio(p, a))
    full = by.get(FULL, {})
    rows = []
    for var, rounds in by.items():
        rs = [r[2] for r in rounds.values()]
        n, med, lo, hi = spread(rs)
        deltas = [rounds[k][2] - full[k][2] for k in rounds
                  if var != FULL and k in full and rounds[k][2] is not None
                  and full[k][2] is not None]
        rows.append({"variant": var, "pairs": n, "failed": len(rs) - n,
                     "plain_us": spread([r[0] for r in rounds.values()])[1],
                     "audited_us": spread([r[1] for r in rounds.values()])[1],
                     "ratio": med, "min": lo, "max": hi, "vs_full": spread(deltas)[1:]})
    return rows


def us(x):
    return "-" if x is None else "%.3f" % x


def pairs_table(rows):
    """The text table of pairs_rows."""
    out = ["%-18s %5s %9s %9s %9s %-21s %s" % ("variant", "pairs", "plain us", "audit us",
                                                 "overhead", "[min, max]",
                                                 "vs gpu, points [min, max]")]
    for r in rows:
        vs = r["vs_full"]
        vs_text = "" if r["variant"] == FULL or vs[0] is None else "%s [%s, %s]" % (
            points(vs[0]), points(vs[1]), points(vs[2]))
        failed = " (%d failed)" % r["failed"] if r["failed"] else ""
        out.append("%-18s %5d %9s %9s %9s %-21s %s%s" % (
            r["variant"], r["pairs"], us(r["plain_us"]), us(r["audited_us"]), pct(r["ratio"]),
            "[%s, %s]" % (pct(r["min"]), pct(r["max"])), vs_text, failed))
    return "\n".join(out)


def rates_rows(results, plain="plain"):
    """results: [(program, mode, round, rate or None)], rate in steps or tokens a second. One
    dict a (program, mode), in first-seen order: runs, the rate's median, min and max, and the
    slowdown: the median, min and max over the rounds of plain's rate / the mode's rate - 1 (a
    round counts where both ran; "pairs" such rounds), and "interval", that median's 95 % bootstrap interval (None,
    None under two rounds)."""
    by = collections.OrderedDict()
    for prog, mode, rnd, rate in results:
        by.setdefault((prog, mode), {})[rnd] = rate
    rows = []
    for (prog, mode), rounds in by.items():
        base = by.get((prog, plain), {})
        slow = [base[k] / r - 1 for k, r in rounds.items()
                if r and base.get(k) and mode != plain]
        n, med, lo, hi = spread(rounds.values())
        rows.append({"program": prog, "mode": mode, "runs": n,
                     "failed": len(rounds) - n, "rate": med, "min": lo, "max": hi,
                     "slowdown": spread(slow)[1:] if mode != plain else (None,) * 3,
                     "pairs": len(slow),
                     "interval": interval(slow)[1:] if len(slow) > 1 else (None, None)})
    return rows


def rate(x):
    return "-" if x is None else "%.1f" % x


def slow(x):
    return "-" if x is None else "%+.1f %%" % (100 * x)


def rates_table(rows, units):
    """The text table of rates_rows; units: {program: "steps/s"}."""
    out = ["%-9s %-9s %4s %-31s %-37s %s" % (
        "program", "mode", "runs", "rate median [min, max]",
        "slowdown vs plain, median [min, max]", "its 95 % interval")]
    for r in rows:
        s, ci = r["slowdown"], r.get("interval", (None, None))
        failed = " (%d failed)" % r["failed"] if r["failed"] else ""
        out.append("%-9s %-9s %4d %-31s %-37s %s%s" % (
            r["program"], r["mode"], r["runs"],
            "%s [%s, %s] %s" % (rate(r["rate"]), rate(r["min"]), rate(r["max"]),
                                units.get(r["program"], "/s")),
            "" if s[0] is None else "%s [%s, %s]" % (slow(s[0]), slow(s[1]), slow(s[2])),
            "" if ci[0] is None else "[%s, %s]" % (slow(ci[0]), slow(ci[1])), failed))
    return "\n".join(out)


def file_records(path):
    """Each record of one kept proc-*.jsonl file, in order: a dict, or None for a line that is
    not a JSON object."""
    with open(path, errors="replace") as f:
        for line in f:
            try:
                o = json.loads(line)
            except ValueError:
                o = None
            yield o if isinstance(o, dict) else None


def folder_records(folder):
    """Each record of a kept record folder's proc-*.jsonl files, in file order (file_records)."""
    for name in sorted(os.listdir(folder)):
        if name.startswith("proc-"):
            yield from file_records(os.path.join(folder, name))


def census(folder):
    """What a kept record folder holds: {"records": {type: n}, "api": {"rt NAME": n, ...},
    "kernels": n, "kernel_launch": {"rt": n, "drv": n, "none": n}, "copy_launch": {"corr rt"...},
    "proc": the first proc record's kinds}: each kernel by the domain of the API record whose
    correlation id it carries, each copy or memset by which of its ids (corr, rcorr) found one
    and that record's domain."""
    recs = collections.Counter()
    apis, api_dom, ops = collections.Counter(), {}, []
    proc = {}
    for o in folder_records(folder):
        if o is None:
            recs["malformed"] += 1
            continue
        t = o.get("t", "?")
        recs[t] += 1
        if t == "proc" and not proc:
            proc = {k: o.get(k) for k in ("kinds", "off", "buffer_mb", "flush_ms")}
        elif t == "api":
            apis[f"{o.get('dom')} {o.get('api')}"] += 1
            doms = api_dom.setdefault(o.get("corr"), set())
            doms.add(o.get("dom"))
        elif t in ("kernel", "copy", "memset"):
            ops.append((t, o.get("corr"), o.get("rcorr", 0)))
    kernel_launch = collections.Counter()
    copy_launch = collections.Counter()
    def doms(corr):  # "rt", "drv", or "drv+rt" when records of both domains share the id
        return "+".join(sorted(api_dom[corr]))

    for t, corr, rcorr in ops:
        if t == "kernel":
            kernel_launch[doms(corr) if corr in api_dom else "none"] += 1
        elif corr in api_dom:
            copy_launch[f"{t} corr {doms(corr)}"] += 1
        elif rcorr and rcorr in api_dom:
            copy_launch[f"{t} rcorr {doms(rcorr)}"] += 1
        else:
            copy_launch[f"{t} none"] += 1
    return {"records": dict(recs), "api": dict(apis), "kernels": recs["kernel"],
            "kernel_launch": dict(kernel_launch), "copy_launch": dict(copy_launch),
            "proc": proc}


def turns_summary(outs):
    """What the recording costs within one process, over runs of recording turns
    (tests/audit/recording_turns.py's JSON objects): every pair of blocks' on / off - 1, pooled:
    (pairs, median, 95 % interval low, high); (0, None, None, None) without a pair."""
    import recording_turns  # tests/audit/, which the program's blocks come from
    ratios = []
    for o in outs:
        try:
            both = recording_turns.pairs((o or {}).get("blocks") or [])
        except ValueError:  # not the program's alternating blocks: nothing to pair
            continue
        ratios += [on["step_us"] / off["step_us"] - 1 for on, off in both if off["step_us"]]
    if not ratios:
        return 0, None, None, None
    return (len(ratios), *interval(ratios))


def callback_time(folder, steps):
    """The library's own time around the calls a step makes (each call record's "oh", the ns it
    spent in its callback), from a kept record folder of a run of `steps` steps:
    {"us_per_step": float, "calls": {api: (calls a step, mean us)}}. Only the calls made at
    least once every two steps count (the loop's, not its set-up), each by the mean over its
    second half (warm: its stacks named, the reused ones walked again now and then)."""
    by_api = collections.defaultdict(list)
    for o in folder_records(folder):
        if o and o.get("t") == "call":
            by_api[o.get("api")].append(o.get("oh", 0))
    calls = {}
    for api, ohs in by_api.items():
        if len(ohs) * 2 >= steps:
            warm = ohs[len(ohs) // 2:]
            calls[api] = (len(ohs) / steps, statistics.mean(warm) / 1000)
    return {"us_per_step": sum(n * us for n, us in calls.values()), "calls": calls}


def fmt(x):
    return "%.2f" % x if isinstance(x, (int, float)) else "-"


def census_text(label, c, report=None):
    """A census in a few lines; report: the audit's --json, for the replay's model."""
    if not c["records"]:
        return f"{label}: no records"
    k = c["kernels"] or 1
    out = [f"{label}: kinds {','.join(c['proc'].get('kinds') or [])}"
           + (f" (off: {','.join(c['proc']['off'])})" if c["proc"].get("off") else "")]
    out.append("  %d kernels; records per kernel: " % c["kernels"] + ", ".join(
        "%s %.2f" % (t, n / k) for t, n in sorted(c["records"].items())
        if t not in ("proc", "end", "stack", "pystack")))
    out.append("  api records per kernel: " + (", ".join(
        "%s %.2f" % (a, n / k) for a, n in sorted(c["api"].items(), key=lambda x: -x[1])[:8])
        or "none"))
    out.append("  kernels whose id an api record carries: " + ", ".join(
        "%s %d" % kv for kv in sorted(c["kernel_launch"].items())))
    if c["copy_launch"]:
        out.append("  copies and memsets found by: " + ", ".join(
            "%s %d" % kv for kv in sorted(c["copy_launch"].items())))
    for p in (report or {}).get("processes", []):
        pred = p.get("predicted") or {}
        m = pred.get("model") or {}
        out.append("  pid %s replay: ops %s, unplaced %s, syncs %s, untargeted %s, latency "
                   "%s us, gap %s us, fetch %s us; all %s syncs removed: %s us a call typical, "
                   "%s us the whole run" % (
                       p.get("pid"), m.get("gpu_operations"), m.get("operations_unplaced"),
                       m.get("syncs"), m.get("syncs_untargeted"), fmt(m.get("launch_latency_us")),
                       fmt(m.get("gap_us")), fmt(m.get("fetch_us")), pred.get("calls"),
                       fmt(pred.get("save_per_call_us_typical")), fmt(pred.get("save_wall_us"))))
    return "\n".join(out)


def interval(values, stat=statistics.median, n=5000):
    """(stat, low, high): stat of values with its 95 % bootstrap interval (a fixed seed: the same
    numbers give the same interval); (None, None, None) when there are none."""
    v = [x for x in values if x is not None]
    if not v:
        return None, None, None
    rng = random.Random(1)
    boots = sorted(stat(rng.choices(v, k=len(v))) for _ in range(n))
    return stat(v), boots[int(0.025 * n)], boots[int(0.975 * n) - 1]


def read_window_rounds(lines):
    """[(round, mode, plain_us, audited_us, save_per_call_us)] of a window_cost.sh rounds file
    (header and blank lines skipped; NA is None)."""
    out = []
    for line in lines:
        f = line.split()
        if len(f) < 5 or f[0] == "round":
            continue
        num = [None if x == "NA" else float(x) for x in (f[2], f[3], f[5] if len(f) > 5 else "NA")]
        out.append((int(f[0]), f[1], num[0], num[1], num[2]))
    return out


def window_summary(rounds):
    """What window_cost.sh's rounds say: per mode (default, gpu, window) its pairs, the median
    overhead (audited / plain - 1) with its 95 % interval, min and max; the window's overhead
    minus the default mode's, round by round, in points; and the window's prediction per call
    over the full recording's (gpu), round by round, minus 1."""
    by = collections.OrderedDict()
    for rnd, mode, p, a, pred in rounds:
        by.setdefault(mode, {})[rnd] = (ratio(p, a), pred)
    modes = {}
    for mode, rs in by.items():
        over = [r - 1 for r, _ in rs.values() if r is not None]
        med, lo, hi = interval(over)
        modes[mode] = {"pairs": len(over), "failed": len(rs) - len(over), "overhead": med,
                       "low": lo, "high": hi, "min": min(over) if over else None,
                       "max": max(over) if over else None}
    dflt, full, win = by.get("default", {}), by.get("gpu", {}), by.get("window", {})
    vs_default = [win[k][0] - dflt[k][0] for k in win
                  if k in dflt and win[k][0] is not None and dflt[k][0] is not None]
    preds = [win[k][1] / full[k][1] - 1 for k in win
             if k in full and win[k][1] is not None and full[k][1]]
    return {"modes": modes, "window_vs_default": interval(vs_default) + (len(vs_default),),
            "prediction": interval(preds) + (len(preds),)}


def signed(x):
    return "-" if x is None else "%+.1f %%" % (100 * x)


def window_table(summary):
    """The text of window_summary, with the targets (docs/replay.md)."""
    out = ["%-8s %5s %-10s %-21s %s" % ("mode", "pairs", "overhead", "95 % interval",
                                          "[min, max]")]
    for mode, m in summary["modes"].items():
        failed = " (%d failed)" % m["failed"] if m["failed"] else ""
        out.append("%-8s %5d %-10s %-21s %s%s" % (
            mode, m["pairs"], signed(m["overhead"]),
            "[%s, %s]" % (signed(m["low"]), signed(m["high"])),
            "[%s, %s]" % (signed(m["min"]), signed(m["max"])), failed))
    d, lo, hi, n = summary["window_vs_default"]
    out.append("window outside its window, minus the default mode: %s points [%s, %s] "
               "(%d rounds; target: the window's overhead within the default mode's, <= 3 %%)"
               % ("-" if d is None else "%+.1f" % (100 * d),
                  "-" if lo is None else "%+.1f" % (100 * lo),
                  "-" if hi is None else "%+.1f" % (100 * hi), n))
    p, lo, hi, n = summary["prediction"]
    out.append("prediction per sync, window / full recording: %s [%s, %s] (%d rounds; target: "
               "within 10 %%)" % (signed(p), signed(lo), signed(hi), n))
    return "\n".join(out)


def main(argv):
    if len(argv) >= 2 and argv[0] == "pairs":
        with open(argv[1]) as f:
            print(pairs_table(pairs_rows(read_pairs(f))))
        return 0
    if len(argv) >= 3 and argv[0] == "runs":
        pairs = pairs_of_runs(argv[1]) if os.path.exists(os.path.join(argv[1], "index")) else []
        with open(argv[2], "w") as f:
            f.write("\n".join(pairs_lines(pairs)) + "\n")
        print(pairs_table(pairs_rows(pairs)))
        return 0
    if len(argv) >= 2 and argv[0] == "window":
        with open(argv[1]) as f:
            print(window_table(window_summary(read_window_rounds(f))))
        return 0
    if len(argv) >= 2 and argv[0] == "census":
        for d in argv[1:]:
            report = None
            if os.path.exists(d + ".json"):
                with open(d + ".json") as f:
                    report = json.load(f)
            print(census_text(os.path.basename(d.rstrip("/")), census(d), report))
        return 0
    if len(argv) == 3 and argv[0] == "callbacks":
        c = callback_time(argv[1], int(argv[2]))
        for api, (n, us_each) in sorted(c["calls"].items()):
            print(f"{api}: {n:.2f} a step, {us_each:.2f} us each")
        print(f"own time in the callbacks: {c['us_per_step']:.2f} us a step")
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
