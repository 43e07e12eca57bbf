"""The harness against a plain floor (issue 36): each primitive the scenarios time, timed by
build/syncbench-floor (tests/floor/) twice, in the simplest loop ("plain") and exactly as the
scenario's loop times it ("as the scenario"), beside the syncbench run that times it.

FLOOR_MAP is the map, as data: each primitive of the issue, the floor's two rows, and the
scenario, variant, parameters and metric that time it. One suite (suite_text(): one section per
scenario, the iterations the floor's loops take) measures every mapped row in one syncbench
process. The floor and syncbench run in pairs, in alternating order (the floor first in odd
pairs, syncbench in even ones; SYNCBENCH_FLOOR_PAIRS, 8): the host's speed moves between
processes by 10 to 20 % on a VM, so each pair gives a ratio, and a row's figure is the median of
its pairs' ratios with their min and max. The ratio is syncbench's cost over the floor's: time
over time, and for a bandwidth the floor's GB/s over syncbench's.

Rows as the scenario are held: the harness's own overhead, measured the same way, at most
1.10 x the floor. Plain rows are reported (NOTE): their definition differs, and the floor's
two ways give that difference its own number (the floor as the scenario over plain). The table
of every row is printed and kept as floor.md in the measurement's folder (--keep DIR)."""
import dataclasses
import os
import statistics
import subprocess

from registry import check, rows_of, run, shared, workdir

from conftest import FLOOR  # noqa: E402  (tests/ is on the path once registry is imported)

GROUP = "floor"
TARGET = 1.10
SYNCBENCH_ARGS = ("--max-time", "0.3", "--warmup-time", "0.1")
FLOOR_TIMEOUT = 600

# The primitives as issue 36 lists them ("launch+sync of each kind": device, stream, event).
ISSUE_PRIMITIVES = ("empty launch", "launch + device sync", "launch + stream sync",
                    "launch + event sync", "idle sync", "idle readback, pageable",
                    "idle readback, pinned", "readback with 1 ms pending", "pinned bandwidth",
                    "pageable bandwidth")


@dataclasses.dataclass(frozen=True)
class Primitive:
    issue: str     # the primitive as ISSUE_PRIMITIVES names it
    name: str      # this row's name in the table
    plain: str     # the floor's plain row (syncbench-floor --list)
    scenario: str
    variant: str
    params: str    # as syncbench's CSV writes them: every parameter, in declared order
    metric: str
    iters: int     # a repetition's iterations: the suite's, and the floor's loop's
    differs: str   # how the plain loop differs from the scenario's definition

    @property
    def floor(self):
        """The floor's row timed as the scenario times it."""
        return f"{self.scenario}/{self.variant}/{self.metric}"

    @property
    def unit(self):
        return "GB/s" if self.metric == "GBps" else "us"

    @property
    def key(self):
        """The row of syncbench's CSV."""
        return (self.scenario, self.variant, self.params, self.metric)


GRAPH = "kernels=1;work_us=0"
BUSY = "other_us=1;work_us=1"
RB = "pending_us=1000;pending=spin;print_elems=16"
COPY = "bytes=64MiB"
BUSY_STEP = ("a step of the scenario launches two 1 us kernels on two streams, each storing to "
             "host-mapped memory, and checks the stores; its loop time over 100 steps")
IDLE_READBACK = ("the scenario reads back after a 1 ms marker kernel and a stream sync, and "
                 "checks the value: a repetition's mean of 20; the plain loop reads back to back")
PENDING_READBACK = ("the plain loop's time holds the 1 ms kernel's launch; the scenario times "
                    "the readback alone, a repetition's mean of 20, its repetitions alternating "
                    "with the idle variant's")
BANDWIDTH = ("the scenario times 4 cudaMemcpyAsync back to back with CUDA events; the plain loop "
             "times each blocking cudaMemcpy on the host")

FLOOR_MAP = (
    Primitive("empty launch", "empty launch", "launch", "graph", "launches", GRAPH, "launch_us",
              200, "the scenario times one launch right after a stream sync (an empty queue), "
              "a repetition's mean; the plain loop launches back to back"),
    Primitive("launch + stream sync", "launch + stream sync (graph)", "launch-stream-sync",
              "graph", "launches", GRAPH, "step_us", 200,
              "the scenario's step also reads the clock around the launch, of a kernel that "
              "counts itself; its loop time over 200 steps"),
    Primitive("launch + device sync", "launch + device sync (busy-stream)", "launch-device-sync",
              "busy-stream", "sync-device", BUSY, "step_us", 100, BUSY_STEP),
    Primitive("launch + stream sync", "launch + stream sync (busy-stream)", "launch-stream-sync",
              "busy-stream", "sync-stream", BUSY, "step_us", 100,
              BUSY_STEP + "; repetitions alternating with sync-device's"),
    Primitive("launch + event sync", "launch + event sync (busy-stream)", "launch-event-sync",
              "busy-stream", "sync-event", BUSY, "step_us", 100,
              BUSY_STEP + "; repetitions alternating with sync-device's"),
    Primitive("idle sync", "idle sync (busy-stream's wait)", "idle-stream-sync", "busy-stream",
              "sync-stream", BUSY, "wait_us", 100,
              "no scenario times an idle sync alone: busy-stream's wait_us is the stream sync "
              "right after the step's launches, which waits for its 1 us kernel"),
    Primitive("idle readback, pageable", "idle readback, pageable", "readback-pageable",
              "readback", "idle-pageable", RB, "readback_us", 20, IDLE_READBACK),
    Primitive("idle readback, pinned", "idle readback, pinned", "readback-pinned", "readback",
              "idle-pinned", RB, "readback_us", 20, IDLE_READBACK),
    Primitive("readback with 1 ms pending", "readback with 1 ms pending, pageable",
              "pending-readback-pageable", "readback", "pending-pageable", RB, "readback_us", 20,
              PENDING_READBACK),
    Primitive("readback with 1 ms pending", "readback with 1 ms pending, pinned",
              "pending-readback-pinned", "readback", "pending-pinned", RB, "readback_us", 20,
              PENDING_READBACK),
    Primitive("pinned bandwidth", "bandwidth, pinned, host to device", "copy-h2d-pinned", "copy",
              "h2d-pinned", COPY, "GBps", 4, BANDWIDTH),
    Primitive("pinned bandwidth", "bandwidth, pinned, device to host", "copy-d2h-pinned", "copy",
              "d2h-pinned", COPY, "GBps", 4, BANDWIDTH),
    Primitive("pageable bandwidth", "bandwidth, pageable, host to device", "copy-h2d-pageable",
              "copy", "h2d-pageable", COPY, "GBps", 4, BANDWIDTH),
    Primitive("pageable bandwidth", "bandwidth, pageable, device to host", "copy-d2h-pageable",
              "copy", "d2h-pageable", COPY, "GBps", 4, BANDWIDTH),
)


def pair_count():
    n = int(os.environ.get("SYNCBENCH_FLOOR_PAIRS", "8"))
    if n < 1:
        raise ValueError(f"SYNCBENCH_FLOOR_PAIRS={n}: at least 1")
    return n


def suite_text():
    """The suite of the syncbench runs: a section per scenario and parameters, its mapped
    variants, the iterations the floor's loops take and the parameters."""
    sections = {}
    for p in FLOOR_MAP:
        s = sections.setdefault((p.scenario, p.params), {"variants": [], "iters": p.iters})
        if s["iters"] != p.iters:
            raise ValueError(f"{p.scenario} {p.params}: iters {p.iters} and {s['iters']}")
        if p.variant not in s["variants"]:
            s["variants"].append(p.variant)
    lines, seen = [], {}
    for (scenario, params), s in sections.items():
        seen[scenario] = seen.get(scenario, 0) + 1
        name = scenario if seen[scenario] == 1 else f"{scenario}-{seen[scenario]}"
        lines += [f"[{name}]", f"scenario = {scenario}", f"variants = {','.join(s['variants'])}",
                  f"iters = {s['iters']}"]
        lines += [" = ".join(kv.split("=", 1)) for kv in params.split(";")]
        lines.append("")
    return "\n".join(lines)


def order(pairs):
    """Who runs first in each pair: the floor in odd pairs (1, 3, ...), syncbench in even ones."""
    return [("floor", "syncbench") if i % 2 == 0 else ("syncbench", "floor") for i in range(pairs)]


def run_floor(out):
    """{floor row: median} of one syncbench-floor run, which must succeed."""
    r = subprocess.run([FLOOR, "--csv", str(out)], capture_output=True, text=True,
                       timeout=FLOOR_TIMEOUT)
    if r.returncode != 0:
        raise RuntimeError(f"{FLOOR}: exit {r.returncode}: {r.stderr.strip()[-300:]}")
    out.with_suffix(".txt").write_text(r.stdout)  # its own table, every row's p10 and p90
    return {row["row"]: float(row["median"]) for row in rows_of(out)}


def run_syncbench(suite, out):
    """{(scenario, variant, params, metric): median} of one run of the suite."""
    r = run("--config", suite, *SYNCBENCH_ARGS, "--csv", out, "-q")
    if r.returncode != 0:
        raise RuntimeError(f"syncbench --config {suite}: exit {r.returncode}: "
                           f"{r.stderr.strip()[-300:]}")
    return {(row["scenario"], row["variant"], row["params"], row["metric"]): float(row["median"])
            for row in rows_of(out)}


def cost_ratio(p, floor_value, syncbench_value):
    """syncbench's cost over the floor's: a time over a time, or the floor's GB/s over
    syncbench's; above 1, syncbench is slower."""
    if p.unit == "GB/s":
        return floor_value / syncbench_value
    return syncbench_value / floor_value


def figures(p, way, pairs):
    """The row of primitive p measured `way` ("scenario" or "plain") over the pairs
    [{"floor": {row: median}, "syncbench": {key: median}}, ...]: the medians of each side, the
    median of the pairs' ratios and their min and max, and (plain) the floor's own two ways,
    as the scenario over plain, its definition's share."""
    row = p.floor if way == "scenario" else p.plain
    for who, k in (("floor", row), ("syncbench", p.key)):
        if any(k not in one[who] for one in pairs):
            raise RuntimeError(f"{p.name}: {who} reported no {k}")
    floor = [one["floor"][row] for one in pairs]
    ours = [one["syncbench"][p.key] for one in pairs]
    ratios = [cost_ratio(p, f, s) for f, s in zip(floor, ours)]
    fig = {"floor": statistics.median(floor), "syncbench": statistics.median(ours),
           "ratio": statistics.median(ratios), "lo": min(ratios), "hi": max(ratios),
           "pairs": len(pairs)}
    if way == "plain":
        fig["definition"] = statistics.median(
            cost_ratio(p, one["floor"][p.plain], one["floor"][p.floor]) for one in pairs)
    return fig


def verdict(p, way, fig):
    """(measured text, ok) of a row: held rows ok when the median ratio is within TARGET,
    plain ones reported (ok None)."""
    text = (f"syncbench {fig['syncbench']:.3f} vs floor {fig['floor']:.3f} {p.unit}: "
            f"{fig['ratio']:.3f} x [{fig['lo']:.3f}, {fig['hi']:.3f}] ({fig['pairs']} pairs)")
    if way == "plain":
        return f"{text}; the floor as the scenario over plain: {fig['definition']:.3f} x", None
    return text, fig["ratio"] <= TARGET


def held_target():
    return f"<= {TARGET:.2f} x the floor, measured the same way"


def table(pairs):
    """The floor's own table: every primitive, as the scenario and plain."""
    head = ("primitive", "definition", "floor", "syncbench", "ratio [min, max]", "target")
    body = []
    for p in FLOOR_MAP:
        for way in ("scenario", "plain"):
            fig = figures(p, way, pairs)
            if way == "scenario":
                how, target = f"as {p.scenario} {p.variant} {p.metric}", held_target()
                target += "" if fig["ratio"] <= TARGET else ": MISS"
            else:
                how = f"plain: {p.plain}"
                target = f"definition differs ({fig['definition']:.2f} x): {p.differs}"
            body.append((p.name, how, f"{fig['floor']:.3f} {p.unit}",
                         f"{fig['syncbench']:.3f} {p.unit}",
                         f"{fig['ratio']:.3f} [{fig['lo']:.3f}, {fig['hi']:.3f}]", target))
    width = [max([len(h)] + [len(b[i]) for b in body]) for i, h in enumerate(head)]
    line = lambda xs: "| " + " | ".join(x.ljust(w) for x, w in zip(xs, width)) + " |"  # noqa
    return "\n".join([line(head), line(["-" * w for w in width])] + [line(b) for b in body])


@shared
def measured_pairs():
    """Every pair's medians: [{"floor": {...}, "syncbench": {...}}, ...]; prints the table."""
    folder = workdir("floor")
    suite = folder / "floor.ini"
    suite.write_text(suite_text())
    pairs = []
    for i, first_second in enumerate(order(pair_count()), 1):
        one = {}
        for who in first_second:
            if who == "floor":
                one["floor"] = run_floor(folder / f"floor-{i}.csv")
            else:
                one["syncbench"] = run_syncbench(suite, folder / f"syncbench-{i}.csv")
        pairs.append(one)
    text = table(pairs)
    (folder / "floor.md").write_text(text + "\n")
    print(f"floor: the harness against a plain floor, {len(pairs)} pairs in alternating order "
          f"(files: {folder})\n{text}\n", flush=True)
    return pairs


def row_check(p, way):
    return verdict(p, way, figures(p, way, measured_pairs()))


for _p in FLOOR_MAP:
    check(f"floor: {_p.name}: as {_p.scenario} {_p.variant} {_p.metric}", held_target(),
          GROUP)(lambda p=_p: row_check(p, "scenario"))
    check(f"floor: {_p.name}: plain loop ({_p.plain})", f"definition differs: {_p.differs}",
          GROUP, held=False)(lambda p=_p: row_check(p, "plain"))
