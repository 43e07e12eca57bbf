"""The pytest plugin's block held to sync baselines (docs/python.md#the-sync-baseline), the same
rules as `syncbench audit --baseline` (src/analyze/baseline_diff.c): per run (the test's call
is one run) or per step of a range (each `syncbench.step(RANGE)` the test entered, the first
skip_first left out), each site's calls in one step at most its budget, a site with a thread
counting that thread's calls only. The calls are named once, by one analyzer run, apart by step
and by thread (_naming.sites_by_part); a step's calls are allowed as a block's are
(_allow.judge): the marker's own allow first, then the baselines' sites."""
from . import _allow, _baseline, _naming, _steps
from ._text import escape

RUN = "syncbench run"  # the one part of a per-run block


class Mode:
    """How a test is counted: per "run", or per "step" of range with the first skip_first
    steps left out."""

    def __init__(self, per="run", range_="", skip_first=0):
        self.per, self.range, self.skip_first = per, range_, skip_first

    def key(self):
        return (self.per, self.range, self.skip_first)

    def words(self):
        return (f"per step of '{self.range}' (skip_first {self.skip_first})"
                if self.per == "step" else "per run")


def _part(i):
    return f"syncbench step {i}"


def _entry_of(site, entries):
    """The first baseline site that holds site's calls (whatever its budget), or None."""
    return next((e for e in entries if e.matches(site)), None)


def counted(index, sites, blocking, mode, entries):
    """The sites of step `index` that count ([Site]) and its blocking calls that count. Per
    step a site's calls count from its baseline site's own skip_first, else from the mode's;
    the calls not named (beyond a block's first 256) from the mode's. Per run, all."""
    if mode.per == "run":
        return list(sites), blocking
    skip, keep, dropped = mode.skip_first, [], 0
    for s in sites:
        e = _entry_of(s, entries)
        start = e.skip_first if e is not None and e.skip_first is not None else skip
        if index >= start:
            keep.append(s)
        else:
            dropped += s.count
    if index < skip:
        return keep, sum(s.count for s in keep)
    return keep, blocking - dropped


class Verdict:
    """A block's standing: failed, the sites not allowed [(site, calls)], the text of the
    failure, and the counted calls and steps (the number per step)."""

    def __init__(self):
        self.failed, self.bad, self.message = False, [], ""
        self.calls, self.steps, self.blocked_us = 0, 0, 0.0


def parts_of(mode, syncs, steps):
    """[(index, tag, blocking, stream)]: per run the block itself, per step each step."""
    if mode.per == "run":
        return [(0, RUN, syncs.blocking, syncs._stream)]
    return [(s.index, _part(s.index), s.blocking, s.stream) for s in steps]


def _named(parts):
    """{tag: [Site]} of the parts, each site with its thread."""
    by = _naming.sites_by_part([(tag, stream) for _, tag, _, stream in parts])
    out = {}
    for (tag, _), sites in by.items():
        out.setdefault(tag, []).extend(sites)
    return out


def judge(mode, syncs, steps, count, allow_entries, bases, what):
    """The Verdict of a closed block (syncs) and its steps against bases (Baselines, their
    sites in order); what: the block's scope in words ("on this thread")."""
    v = Verdict()
    entries = [e for b in bases for e in b.sites]
    if mode.per == "step" and not steps:
        v.failed = True
        v.message = (f"no step of '{escape(mode.range)}' was entered (syncbench.step("
                     f"{escape(repr(mode.range))}) around each step), {what}: nothing was "
                     f"checked")
        return v
    parts = parts_of(mode, syncs, steps)
    named = _named(parts)
    if len({s.thread for sites in named.values() for s in sites}) > 1:
        for sites in named.values():
            for s in sites:
                s.thread_shown = True
    failed_steps, worst, unnamed_all = [], {}, 0
    for index, tag, blocking, _ in parts:
        sites, calls = counted(index, named.get(tag, []), blocking, mode, entries)
        _tally(v, index, sites, calls, mode)
        bad, unnamed = _allow.judge(sites, calls, count, allow_entries + entries)
        if not bad and not unnamed:
            continue
        failed_steps.append(index)
        unnamed_all += unnamed
        for s, n in bad:
            key = (s.where, s.via, s.operation, s.cls, s.thread)
            w = worst.setdefault(key, [s, 0, 0, 0])  # site, steps, most in one step, calls
            w[1] += 1
            w[3] += n
            if s.count > w[2]:
                w[0], w[2] = s, s.count
    if not failed_steps:
        return v
    v.failed = True
    v.bad = [(w[0], w[3]) for w in worst.values()]
    allowed = _allowed(allow_entries, count, bases)
    if mode.per == "run":
        v.message = syncs.report(allowed, v.bad, unnamed_all)
    else:
        v.message = _step_message(mode, v, failed_steps, worst, unnamed_all, entries, bases,
                                  allowed, what)
    return v


def _allowed(allow_entries, count, bases):
    """What a block allows, as its failure says it (the entries of its allow, its baselines,
    the count of other calls when not 0)."""
    labels = [repr(e) for e in allow_entries]
    labels = labels[:4] + ([f"and {len(labels) - 4} more"] if len(labels) > 4 else [])
    labels += [f"the baseline {b.path}" for b in bases]
    text = ", ".join(labels)
    if not text:
        return str(count)
    return f"{text}; {count} other{'s' if count != 1 else ''}" if count else text


def _step_message(mode, v, failed_steps, worst, unnamed, entries, bases, allowed, what):
    now = v.calls / v.steps if v.steps else 0.0
    base = next((b.syncs_per_step for b in bases if b.syncs_per_step is not None), None)
    rate = (f"{base:g} -> {now:g} per step" if base is not None
            else f"{now:g} per step")
    k = len(failed_steps)
    lines = [f"{k} step{'s' if k != 1 else ''} of '{escape(mode.range)}' made host-blocking "
             f"CUDA calls not allowed (allowed {escape(allowed)}), {what}; {rate}; {v.steps} "
             f"step{'s' if v.steps != 1 else ''} counted, the first {mode.skip_first} left out:"]
    for site, nsteps, most, calls in worst.values():
        lines += [site.head()] + site.details()
        e = _entry_of(site, entries)
        in_steps = f"in {nsteps} step{'s' if nsteps != 1 else ''}"
        if e is None:
            lines.append(f"      ({'not in the baseline: ' if bases else ''}{most} a step, "
                         f"{in_steps})")
        else:
            thread = f" [thread {site.thread}]" if e.thread else ""
            lines.append(f"      (over its budget{thread}: {most} a step, budget {e.budget}, "
                         f"{in_steps})")
    if unnamed:
        lines.append(f"  ({unnamed} more not named, so not matched: a step keeps its first 256)")
    return "\n".join(lines)


def _tally(into, index, sites, calls, mode):
    """A step's calls and blocked time into `into` (a verdict or a _baseline.Observed), and the
    step itself unless it is a warm-up step left out."""
    if mode.per == "run" or index >= mode.skip_first:
        into.steps += 1
    into.calls += calls
    into.blocked_us += sum(s.blocked_us for s in sites)


def observe(obs, mode, syncs, steps, allow_entries, old_entries):
    """A block's calls into obs (a _baseline.Observed), for --syncbench-update-baseline: per
    counted step, the calls at each site the marker's own allow does not take; a site keeps the
    thread of the old file's site that held it (a new one counts every thread)."""
    parts = parts_of(mode, syncs, steps)
    named = _named(parts)
    for index, tag, blocking, _ in parts:
        sites, calls = counted(index, named.get(tag, []), blocking, mode, old_entries)
        _tally(obs, index, sites, calls, mode)
        rest, _ = _allow.judge(sites, 0, 0, allow_entries)
        mine = {}
        for s, n in rest:
            e = _entry_of(s, old_entries)
            thread = e.thread if e is not None else ""
            key = _baseline.key_of(s, obs.file_of(s.file))
            got = mine.setdefault((key, thread), [s, 0, e])
            got[1] += n
        for (key, thread), (s, n, e) in mine.items():
            obs.add(key, thread, s, n, e)


class Gate:
    """The marker's block held to baselines (or observed for an update, obs): a context manager;
    the test's calls (its scope's) in .syncs, each step of mode's range counted apart."""

    def __init__(self, count_syncs, scope, mode, count, allow_entries, bases, obs=None):
        self._cm = count_syncs(scope=scope)
        self.scope, self.mode, self.count = scope, mode, count
        self.allow_entries, self.bases, self.obs = allow_entries, list(bases), obs
        self.syncs = None
        self._steps = None

    def __enter__(self):
        self.syncs = self._cm.__enter__()
        if self.mode.per == "step":
            self._steps = _steps.collect(self.mode.range, self.scope)
        return self.syncs

    def __exit__(self, exc_type, exc, tb):
        steps = _steps.done(self._steps) if self._steps is not None else []
        self._cm.__exit__(None, None, None)
        if self.obs is not None:  # a failed test's calls too: they are the code's
            observe(self.obs, self.mode, self.syncs, steps, self.allow_entries,
                    [e for b in self.bases for e in b.sites])
            return False
        if exc_type is not None:
            return False
        what = {"process": "on every thread"}.get(self.scope, "on this thread")
        v = judge(self.mode, self.syncs, steps, self.count, self.allow_entries, self.bases,
                  what)
        if v.failed:
            from . import SyncError
            raise SyncError(v.message, self.syncs, v.bad)
        return False
