"""The pytest plugin, registered by installing the package (entry point pytest11
"syncbench.pytest_plugin", the module's own name: `-p syncbench.pytest_plugin` on the command
line then finds it registered, and without the package installed registers it; `-p
no:syncbench.pytest_plugin` turns it off):

    @pytest.mark.no_syncs               # fail the test on any host-blocking CUDA call
    @pytest.mark.no_syncs(allow=2)      # ... on more than 2
    @pytest.mark.no_syncs(all_threads=True)
    @pytest.mark.no_syncs(allow=["train.py:step", "transformers"])   # these sites, libraries
    def test_step(): ...

    def test_counts(syncbench_syncs):   # the test's calls so far, by class
        x.nonzero()
        assert syncbench_syncs.blocking == 1

    pytest --syncbench-report           # a table of every test's syncs at the end
    pytest --syncbench-baseline syncs.ini   # marked tests fail only on syncs it lacks, or over
    pytest --syncbench-baseline syncs.ini --syncbench-update-baseline   # (re)write it

The marker wraps the test function's call (not its fixtures); a test over its allowance fails
with syncbench.SyncError, an AssertionError that lists each call as `syncbench audit` names it.
Where the calls cannot be recorded (no GPU, no driver, no CUPTI, another CUPTI subscriber), a
marked test fails (the fixture errors) with one line, the cause as SyncbenchUnavailable says it:
it never passes unchecked. On a machine without a GPU (a CPU-only CI job),
`pytest --syncbench-skip-unavailable` reports those tests as skipped with the cause instead. A
block the test opens itself (`with syncbench.count_syncs():`) raises SyncbenchUnavailable
either way.

Under GitHub Actions (GITHUB_ACTIONS=true) a test failed by SyncError (the marker's or a
`with syncbench.no_syncs()` of its own) also annotates each offending Python line, as
`syncbench audit` does: `::error file=F,line=N,title=T::M` at the end of the session, F
relative to GITHUB_WORKSPACE (else the current folder); pytest's own --junitxml covers the
rest."""
import contextlib
import copy
import os

import pytest

import syncbench
from syncbench import _allow, _baseline, _gate, _native
from syncbench._text import escape, workflow_escape

MARKER = ("no_syncs(allow=0, all_threads=False): fail the test when its call makes more than "
          "`allow` host-blocking CUDA calls (syncbench); allow=[sites or libraries] or "
          "{site or library: count}, scope='thread'|'process', baseline=FILE, per='run'|'step', "
          "range=NAME (per step of syncbench.step(NAME)), skip_first=N (warm-up steps)")
ARGS = ("allow", "all_threads", "scope", "baseline", "per", "range", "skip_first")
MARK_NAME = "@pytest.mark.no_syncs"


def pytest_addoption(parser):
    group = parser.getgroup("syncbench", "host-blocking CUDA calls (syncbench)")
    group.addoption("--syncbench-report", action="store_true", default=False,
                    help="count every test's host-blocking CUDA calls and print a table of "
                         "them at the end of the session")
    group.addoption("--syncbench-baseline", metavar="FILE", default=None,
                    help="a sync baseline (syncbench audit --update-baseline's INI, per = run): "
                         "a test marked no_syncs fails only on calls at sites it lacks or over "
                         "a site's budget")
    group.addoption("--syncbench-update-baseline", action="store_true", default=False,
                    help="write --syncbench-baseline's FILE from the marked tests' calls at the "
                         "end of the session (they do not fail on syncs)")
    group.addoption("--syncbench-skip-unavailable", action="store_true", default=False,
                    help="where syncbench cannot record (no GPU, no CUDA driver, no CUPTI), "
                         "report the tests marked no_syncs and those using the syncbench_syncs "
                         "fixture as skipped, with the cause (without it they fail): for a "
                         "CPU-only CI job")


def pytest_configure(config):
    config.addinivalue_line("markers", MARKER)
    config._syncbench_rows = []  # (nodeid, Syncs) with --syncbench-report
    config._syncbench_unavailable = None
    config._syncbench_annotations = []  # workflow commands, under GitHub Actions
    config._syncbench_baselines = {}  # the baselines read, by absolute path (None: not there)
    config._syncbench_observed = {}  # with --syncbench-update-baseline: path -> Observed
    config._syncbench_written = []  # (path, sites) written at the end
    config._syncbench_baseline = None
    config._syncbench_baseline_path = None
    path = config.getoption("syncbench_baseline", None)
    update = config.getoption("syncbench_update_baseline", False)
    if path:
        path = os.path.abspath(path)
        config._syncbench_baseline_path = path
        if update and not os.path.exists(path):
            return  # written at the end
        if not os.path.exists(path):
            raise pytest.UsageError(f"syncbench: baseline {escape(path)}: not found (write it "
                                    f"with --syncbench-update-baseline)")
        try:
            config._syncbench_baseline = _baseline.load(path)
        except _baseline.BaselineError as e:
            raise pytest.UsageError(str(e)) from None


class Spec:
    """A no_syncs marker's arguments, checked: allow, scope, baseline (a path as given, or
    None), per, range and skip_first (None: not given)."""

    def __init__(self, allow, scope, baseline, per, range_, skip_first):
        self.allow, self.scope, self.baseline = allow, scope, baseline
        self.per, self.range, self.skip_first = per, range_, skip_first


def _check_steps(kw):
    """The marker's per, range and skip_first, checked: (per, range, skip_first)."""
    per, range_, skip = kw.get("per"), kw.get("range"), kw.get("skip_first")
    if per is not None and per not in ("run", "step"):
        raise pytest.UsageError(f"@pytest.mark.no_syncs: per must be 'run' or 'step', not "
                                f"{per!r}")
    if range_ is not None and (not isinstance(range_, str) or not range_.strip()):
        raise pytest.UsageError(f"@pytest.mark.no_syncs: range must be a step's name (a "
                                f"non-empty string), not {range_!r}")
    if skip is not None and (skip.__class__ is not int or skip < 0):
        raise pytest.UsageError(f"@pytest.mark.no_syncs: skip_first must be a whole number "
                                f">= 0, not {skip!r}")
    if per == "run" and (range_ is not None or skip is not None):
        raise pytest.UsageError(f"@pytest.mark.no_syncs: per='run' counts the whole test: "
                                f"{'range' if range_ is not None else 'skip_first'}= is for "
                                f"per='step'")
    return per, range_, skip


def _marker_args(mark):
    """The Spec of a no_syncs marker, or a usage error naming what is wrong."""
    if len(mark.args) > 1:
        raise pytest.UsageError(f"@pytest.mark.no_syncs takes at most one positional argument "
                                f"(allow), got {len(mark.args)}")
    unknown = set(mark.kwargs) - set(ARGS)
    if unknown:
        raise pytest.UsageError(f"@pytest.mark.no_syncs: unknown argument "
                                f"{', '.join(sorted(unknown))} ({', '.join(ARGS)})")
    allow = mark.args[0] if mark.args else mark.kwargs.get("allow", 0)
    all_threads = mark.kwargs.get("all_threads", False)
    if isinstance(allow, bool) or not isinstance(allow, (int, list, tuple, dict)) or (
            isinstance(allow, int) and allow < 0):
        raise pytest.UsageError(f"@pytest.mark.no_syncs: allow must be a whole number >= 0, "
                                f"a list of sites or libraries, or a dict {{site or library: "
                                f"count}}, not {allow!r}")
    if not isinstance(all_threads, bool):
        raise pytest.UsageError(f"@pytest.mark.no_syncs: all_threads must be True or False, "
                                f"not {all_threads!r}")
    baseline = mark.kwargs.get("baseline")
    if baseline is not None and not isinstance(baseline, (str, os.PathLike)):
        raise pytest.UsageError(f"@pytest.mark.no_syncs: baseline must be a file's path, not "
                                f"{baseline!r}")
    try:
        _allow.parse(allow, "no_syncs")
        scope = syncbench._scope(mark.kwargs.get("scope"), all_threads, "no_syncs")
    except ValueError as e:
        raise pytest.UsageError(f"@pytest.mark.no_syncs: {str(e).split(': ', 1)[1]}") from None
    if scope == "task":  # the marker's block opens around the test's call, in no task
        raise pytest.UsageError("@pytest.mark.no_syncs: scope='task' needs the block opened "
                                "inside the task: `with syncbench.no_syncs(scope='task'):` in "
                                "the coroutine")
    return Spec(allow, scope, baseline, *_check_steps(mark.kwargs))


def _load_baseline(config, path, missing_ok):
    """The baseline at path (absolute), read once; None when it is not there and missing_ok."""
    cache = config._syncbench_baselines
    if path not in cache:
        if not os.path.exists(path):
            if not missing_ok:
                raise pytest.UsageError(f"syncbench: baseline {escape(path)}: not found")
            cache[path] = None
        else:
            try:
                cache[path] = _baseline.load(path)
            except _baseline.BaselineError as e:
                raise pytest.UsageError(str(e)) from None
    return cache[path]


def _marker_path(item, spec):
    """A marker's baseline=FILE, absolute (relative to the test's file's folder), or None."""
    if spec.baseline is None:
        return None
    return os.path.abspath(os.path.join(os.path.dirname(str(item.path)),
                                        os.fspath(spec.baseline)))


def _mode(spec, bases):
    """How the test is counted (a _gate.Mode): the marker's per, range and skip_first over the
    first baseline's (the marker's, then the session's), as --range and --skip-first over the
    file's for syncbench audit."""
    head = bases[0] if bases else None
    file_step = head is not None and head.per == "step"
    per = spec.per or ("step" if spec.range is not None or file_step else "run")
    if per == "run":
        return _gate.Mode()
    range_ = spec.range if spec.range is not None else (head.range if file_step else None)
    if not range_:
        raise pytest.UsageError("@pytest.mark.no_syncs: per='step' needs a range: the "
                                "marker's range=NAME, or a baseline with per = step")
    skip = spec.skip_first if spec.skip_first is not None else (head.skip_first if head
                                                                else 0)
    return _gate.Mode("step", range_, skip)


class Plan:
    """What the marker does with a test: spec, the baselines it is held to (the marker's, then
    the session's), its mode, and with --syncbench-update-baseline the file it writes."""

    def __init__(self, spec, bases, mode, target=None):
        self.spec, self.bases, self.mode, self.target = spec, bases, mode, target


def _plan(item, spec):
    config = item.config
    update = config.getoption("syncbench_update_baseline")
    mine = _marker_path(item, spec)
    if update:  # held to nothing: observed for the file it writes (its own, else the session's)
        target = mine or config._syncbench_baseline_path
        if target is None:
            raise pytest.UsageError(NEEDS_FILE + ", or a baseline=FILE of its marker's")
        old = _load_baseline(config, target, missing_ok=True) if mine else \
            config._syncbench_baseline
        return Plan(spec, [old] if old else [], _mode(spec, [old] if old else []), target)
    bases = [b for b in (_load_baseline(config, mine, False) if mine else None,
                         config._syncbench_baseline) if b is not None]
    return Plan(spec, bases, _mode(spec, bases))


def _observed_for(config, plan, nodeid, first):
    """The Observed of plan's file; one file holds one mode: a test counted otherwise than the
    first test of the same file is a usage error."""
    obs = config._syncbench_observed.get(plan.target)
    m = plan.mode
    if obs is None:
        obs = config._syncbench_observed[plan.target] = _baseline.Observed(m.per, m.range,
                                                                           m.skip_first)
        obs.file_of = lambda f: _baseline_file(config, f)
        first[plan.target] = (nodeid, m)
    elif (obs.per, obs.range, obs.skip_first) != m.key():
        other, om = first[plan.target]
        raise pytest.UsageError(
            f"--syncbench-update-baseline: {escape(plan.target)} holds one way of counting: "
            f"{other} counts {om.words()}, {nodeid} {m.words()} (give one of them a "
            f"baseline=FILE of its own)")
    return obs


NEEDS_FILE = "--syncbench-update-baseline needs --syncbench-baseline FILE (the file it writes)"


def pytest_collection_modifyitems(config, items):
    first = {}
    if (config.getoption("syncbench_update_baseline") and not config._syncbench_baseline_path
            and not any(m.kwargs.get("baseline") is not None for i in items
                        for m in i.iter_markers("no_syncs"))):
        raise pytest.UsageError(NEEDS_FILE + ", or markers with baseline=FILE")
    for item in items:  # bad markers stop the session before any test runs
        mark = item.get_closest_marker("no_syncs")
        if mark is None:
            continue
        try:
            item._syncbench_plan = plan = _plan(item, _marker_args(mark))
        except pytest.UsageError as e:
            raise pytest.UsageError(f"{item.nodeid}: {e}") from None
        if plan.target is not None:
            _observed_for(config, plan, item.nodeid, first)


SKIP_HINT = "--syncbench-skip-unavailable skips it"


def _unavailable(config, e, what):
    """A test syncbench cannot check (e: the SyncbenchUnavailable its block raised on entering):
    a failure of one line, the cause, with no traceback of the package's; with
    --syncbench-skip-unavailable a skip with the cause. Never a pass. Not hidden from the
    traceback itself: pytest 8.4 and later add a second line ("All traceback entries are hidden")
    when every frame is, where the one frame left prints as the message alone (pytrace=False)."""
    # one line; the exception's name as pytest shows it, for logs searched for it
    cause = f"syncbench.SyncbenchUnavailable: {' '.join(str(e).split())}"
    if config.getoption("syncbench_skip_unavailable"):
        skip = pytest.skip.Exception(f"{what}: {cause}")
        skip._use_item_location = True  # the test's line in -rs, as a skip marker's
        raise skip from None
    raise pytest.fail.Exception(f"{what}: {cause} ({SKIP_HINT})", pytrace=False) from None


def _wrap(item, make_cm, keep=None, what=None):
    """Runs the test's call inside make_cm()'s block; keep(syncs) afterwards, failed or not.
    With what (the marker's name), a block that cannot be opened is _unavailable's."""
    inner = item.runtest

    def runtest():
        __tracebackhide__ = True
        cm = make_cm()
        try:
            with contextlib.ExitStack() as stack:
                try:
                    stack.enter_context(cm)
                except syncbench.SyncbenchUnavailable as e:
                    if what is None:
                        raise
                    failed = e  # raised below, outside this handler: no chained traceback
                else:
                    failed = None
                if failed is not None:
                    _unavailable(item.config, failed, what)
                inner()
        finally:
            if keep is not None and cm.syncs is not None:
                keep(cm.syncs)

    item.runtest = runtest


def _marker_cm(item, plan):
    """The context manager the marked test's call runs in."""
    spec = plan.spec
    count, entries = _allow.parse(spec.allow, "no_syncs")
    if plan.target is not None:
        obs = item.config._syncbench_observed[plan.target]
        return lambda: _gate.Gate(syncbench.count_syncs, spec.scope, plan.mode, count, entries,
                                  plan.bases, obs=obs)
    if plan.bases or plan.mode.per == "step":
        return lambda: _gate.Gate(syncbench.count_syncs, spec.scope, plan.mode, count, entries,
                                  plan.bases)
    return lambda: syncbench.no_syncs(allow=spec.allow, scope=spec.scope)


def pytest_runtest_setup(item):
    config = item.config
    plan = getattr(item, "_syncbench_plan", None)
    if plan is not None:
        _wrap(item, _marker_cm(item, plan), what=MARK_NAME)
    if config.getoption("syncbench_report") and config._syncbench_unavailable is None:
        try:
            _native.attach()
        except syncbench.SyncbenchUnavailable as e:
            config._syncbench_unavailable = str(e)
            return
        _wrap(item, syncbench.count_syncs,
              keep=lambda s: config._syncbench_rows.append((item.nodeid, s)))


def _baseline_file(config, file):
    """A call's file as the baseline names it: relative to pytest's rootdir when under it."""
    if not file:
        return file
    root = str(config.rootpath)
    for r, p in ((root, file), (os.path.realpath(root), os.path.realpath(file))):
        if p.startswith(r.rstrip("/") + "/"):
            return p[len(r.rstrip("/")) + 1:]
    return file


def pytest_sessionfinish(session, exitstatus):
    config = session.config
    if not config.getoption("syncbench_update_baseline"):
        return
    if exitstatus in (pytest.ExitCode.INTERRUPTED, pytest.ExitCode.USAGE_ERROR,
                      pytest.ExitCode.INTERNAL_ERROR):
        return  # not every test ran: the files stay as they were
    targets = dict(config._syncbench_observed)
    path = config._syncbench_baseline_path
    if path is not None and path not in targets:  # no marked test wrote to it: its sites go
        old = config._syncbench_baseline
        m = _gate.Mode(old.per, old.range, old.skip_first) if old else _gate.Mode()
        targets[path] = _baseline.Observed(m.per, m.range, m.skip_first)
    for target, obs in targets.items():
        old = (config._syncbench_baseline if target == path
               else config._syncbench_baselines.get(target))
        _baseline.write(target, obs, old)
        config._syncbench_written.append((target, len(obs.sites)))


def _repo_path(file):
    """file relative to the repository's root (GITHUB_WORKSPACE, else the current folder), as
    syncbench's C side names it (src/sinks/github.c, sb_gh_repo_path); None when outside."""
    cwd = os.getcwd()
    root = os.environ.get("GITHUB_WORKSPACE") or cwd
    path = os.path.join(cwd, file)  # an absolute file stays as it is
    for r, p in ((root, path), (os.path.realpath(root), os.path.realpath(path))):
        r = r.rstrip("/")
        if p.startswith(r + "/"):
            rest = p[len(r) + 1:]
            while rest.startswith("./"):
                rest = rest[2:]
            return rest or None
    return None


def annotations(nodeid, sites):
    """The workflow commands for a test failed by SyncError: one `::error` per site with a
    Python line; the message is the audit's (count, class, operation, fix)."""
    title = workflow_escape(f"syncbench no_syncs: {nodeid}", prop=True)
    out = []
    for s in sites:
        if not s.file:  # a native site: no line of the test's to put it on
            continue
        what = s.operation or "unknown operation (no rule knows this call)"
        msg = f"{s.count} blocking call{'' if s.count == 1 else 's'} ({s.cls}): {what}"
        if s.operation and s.fix:
            msg += f"\nfix: {s.fix}"
            if s.scenario:
                msg += f" (priced by: syncbench --scenario {s.scenario})"
        path = _repo_path(s.file)
        where = (f"file={workflow_escape(path, prop=True)},line={s.line}," if path
                 else "")
        if not path:  # outside the repository: the message names the line
            msg = f"{s.where}: {msg}"
        out.append(f"::error {where}title={title}::{workflow_escape(msg)}")
    return out


def _with_count(site, n):
    """site as an annotation names it: n of its calls (those not allowed)."""
    if n == site.count:
        return site
    shown = copy.copy(site)
    shown.count = n
    return shown


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    yield
    if (call.when == "call" and call.excinfo is not None
            and isinstance(call.excinfo.value, syncbench.SyncError)
            and os.environ.get("GITHUB_ACTIONS") == "true"):
        e = call.excinfo.value
        # with sites allowed (allow=, a baseline) only the calls not allowed, else every site
        sites = ([_with_count(s, n) for s, n in e.disallowed] if e.disallowed is not None
                 else e.syncs.sites)
        item.config._syncbench_annotations += annotations(item.nodeid, sites)


@pytest.fixture
def syncbench_syncs(request):
    """The test's host-blocking CUDA calls, counted from this fixture's setup on (the calling
    thread's): a syncbench.Syncs, live (.blocking, .by_class, .polls). Where nothing can be
    recorded the test errors with the cause in one line (skipped with
    --syncbench-skip-unavailable)."""
    __tracebackhide__ = True
    cm = syncbench.count_syncs()
    try:
        syncs, failed = cm.__enter__(), None
    except syncbench.SyncbenchUnavailable as e:
        failed = e
    if failed is not None:  # outside the handler: no chained traceback
        _unavailable(request.config, failed, "fixture syncbench_syncs")
    try:
        yield syncs
    finally:
        cm.__exit__(None, None, None)


def pytest_terminal_summary(terminalreporter, config):
    for path, written in config._syncbench_written:
        terminalreporter.write_line(
            f"syncbench: wrote the baseline {escape(path)}: "
            f"{written} site{'s' if written != 1 else ''}")
    if config._syncbench_annotations:  # whole lines, which the runner reads as commands
        terminalreporter.ensure_newline()
        for line in config._syncbench_annotations:
            terminalreporter.write_line(line)
    if not config.getoption("syncbench_report"):
        return
    tr = terminalreporter
    tr.section("syncbench: host-blocking CUDA calls per test")
    if config._syncbench_unavailable:
        tr.write_line(config._syncbench_unavailable)
        return
    rows = sorted(config._syncbench_rows, key=lambda r: (-r[1].blocking, r[0]))
    with_syncs = [(escape(n), s) for n, s in rows if s.blocking or s.polls]  # polls: listed
    width = max([len("test")] + [len(n) for n, _ in with_syncs])
    tr.write_line(f"{'test':<{width}}  {'blocking':>8}  {'polls':>5}  by class; first site")
    for nodeid, s in with_syncs:
        classes = ", ".join(f"{k} {v}" for k, v in sorted(s.by_class.items()) if k != "poll")
        first = escape(s.sites[0].where) if s.blocking and s.sites else ""
        if first and s.sites[0].via:  # made inside a library: its line too
            first += f" via {escape(s.sites[0].via)}"
        tr.write_line(f"{nodeid:<{width}}  {s.blocking:>8}  {s.polls:>5}  {classes}"
                      f"{'; ' + first if first else ''}")
    clean = sum(1 for _, s in rows if not s.blocking)
    tr.write_line(f"{clean} of {len(rows)} tests made no host-blocking CUDA call")
