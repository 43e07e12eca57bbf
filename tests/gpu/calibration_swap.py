#!/usr/bin/env python3
"""Does each audit's own calibration move the replay's figure between audits of one program
(issue 49)? For each row of a replay suite run with several audits (replay_suite.py --audits K),
each audit's kept records are analyzed again (`syncbench audit --from`) with every audit's
calibration.json in place of its own: per row a K x K table, a line one audit's records, a
column one calibration. Figures that hold along a line and move down a column: the recorded
runs move them, not the calibrations.

    calibration_swap.py SUITE_JSON --records DIR --out DIR [--only NAME,...]

Prints the tables and writes OUT/swap.json: [{"name", "measured", "audits": [NAME-K, ...],
"cells": [[us per step of records i with calibration j, ...], ...]}]. No GPU. Exit 2 on bad
input (no suite file, no records folder of an audit, no row with two audits); SYNCBENCH: the
binary (default build/syncbench)."""
import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys

import replay_suite as rs  # beside this file


def cell(bin_path, records, calibration, work, entry, line, steps):
    """The line's figure a step from RECORDS analyzed with the CALIBRATION folder's
    calibration.json: WORK holds links to the records' files and that calibration, and goes
    once read. None, with why on stderr, where the analysis failed."""
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    for f in records.iterdir():
        if f.name != "calibration.json":
            (work / f.name).symlink_to(f.resolve())
    shutil.copy(calibration / "calibration.json", work / "calibration.json")
    report = work.with_suffix(".json")
    r = subprocess.run([str(bin_path), "audit", "-q", "--top", "20", "--from", str(work),
                        "--json", str(report)], capture_output=True, text=True)
    shutil.rmtree(work, ignore_errors=True)
    try:
        if r.returncode not in (0, 1):
            raise rs.ProgramFailed(f"audit --from: exit {r.returncode}: {rs.tail(r.stderr)}")
        procs = rs.line_figures(json.loads(report.read_text()), entry, line, steps)
    except (rs.ProgramFailed, OSError, ValueError) as e:
        print(f"calibration_swap.py: {records.name} with {calibration.name}'s calibration: {e}",
              file=sys.stderr)
        return None
    return rs.figure_process(procs)["per_step"]


def swap_row(row, entry, records, out, bin_path):
    """One suite row's K x K figures (the module's docstring)."""
    names = [f"{row['name']}-{a['audit']}" for a in row["audits"]]
    cells = [[cell(bin_path, records / name, records / cal, out / f"{name}+{cal}", entry,
                   row["line"], a["steps"]) for cal in names]
             for name, a in zip(names, row["audits"])]
    return {"name": row["name"], "measured": row.get("measured"), "audits": names,
            "cells": cells}


def text(swap):
    """One row's table: a line per audit's records, a column per audit's calibration."""
    head = f"== {swap['name']}: measured {rs.fmt(swap['measured'])} us a step; a line: one " \
           "audit's records, a column: one audit's calibration"
    width = max(len(n) for n in swap["audits"])
    lines = [head, " " * width + "  " + "  ".join(f"{n:>{width}}" for n in swap["audits"])]
    for name, figures in zip(swap["audits"], swap["cells"]):
        lines.append(f"{name:>{width}}  " + "  ".join(f"{rs.fmt(x, 0):>{width}}"
                                                      for x in figures))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("suite", help="a replay suite's suite.json")
    ap.add_argument("--records", required=True, help="its records folder (NAME-K/)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", help="the rows, comma-separated (default: every row)")
    a = ap.parse_args(argv)
    suite, records = pathlib.Path(a.suite), pathlib.Path(a.records)
    if not suite.is_file():
        ap.error(f"no suite file {suite}")
    if not os.access(rs.BIN, os.X_OK):
        ap.error(f"no syncbench to run at {rs.BIN} (SYNCBENCH)")
    try:
        only = {e.name for e in rs.select(a.only)} if a.only else None
    except ValueError as e:  # a name that is no entry
        ap.error(str(e))
    try:
        suite_rows = json.loads(suite.read_text())
    except ValueError as e:
        ap.error(f"{suite} is not a suite's JSON: {e}")
    entries = {e.name: e for e in rs.ENTRIES}
    rows = [r for r in suite_rows if isinstance(r, dict)
            and r.get("verdict") != "ERROR" and r.get("name") in entries
            and len(r.get("audits") or []) > 1 and (only is None or r["name"] in only)]
    if not rows:
        ap.error(f"no row of {suite} has two audits or more" + (f" among {a.only}" if only else ""))
    missing = [f"{r['name']}-{x['audit']}" for r in rows for x in r["audits"]
               if not (records / f"{r['name']}-{x['audit']}" / "calibration.json").is_file()]
    if missing:
        ap.error(f"no kept records with a calibration.json under {records}: {missing[0]}")
    out = pathlib.Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    swaps = [swap_row(r, entries[r["name"]], records, out, rs.BIN) for r in rows]
    (out / "swap.json").write_text(json.dumps(swaps, indent=1) + "\n")
    print("\n".join(text(s) for s in swaps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
