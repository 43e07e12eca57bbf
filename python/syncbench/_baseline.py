"""The sync baseline: the INI file `syncbench audit --update-baseline` writes and the pytest
plugin reads and writes (--syncbench-baseline FILE, --syncbench-update-baseline, the marker's
baseline=FILE), docs/baseline.md; one format, read as strictly as the C reader
(src/analyze/baseline_file.c) reads it:

    [syncbench]
    version = 1
    per = step           ; step: per step of the range; run: per run (the plugin: per test)
    range = train_step
    skip_first = 2
    syncs_per_step = 3
    blocked_us_per_step = 41.5
    [site.1]
    file = train.py
    function = train_step
    text = loss.item()
    operation = scalar read: .item()
    library_line =
    line = 42
    budget = 1
    skip_first = 0       ; optional: this site's own warm-up
    thread =             ; optional: a tid, this thread's calls only
    note = ...

A site is keyed by file, function, text, operation, library_line and thread (without its line
number: "pkg/mod.py:120 in f" and "pkg/mod.py:131 in f" are one library line), never by
`line`, which says where it was when written. `budget`: the calls allowed at the site in one
step (per = step) or in one run (per = run: for the plugin, one test). A file is matched at the
call's recorded path: the same, or ending with /FILE. Values are compared as the file holds
them (norm(): the C side's sb_bl_norm)."""
import configparser
import os
import re
import tempfile

from ._text import escape

SITE_KEYS = ("file", "function", "text", "operation", "library_line", "line", "budget",
             "skip_first", "thread", "note")
REQUIRED = ("file", "function", "text", "operation", "budget")
# syncs_per_step and blocked_us_per_step: the numbers a run recorded (read, not judged here)
HEAD_KEYS = ("version", "per", "range", "skip_first", "syncs_per_step", "blocked_us_per_step")
VERSION = 1
VALUE_MAX = 180  # SB_BL_VALUE_MAX: a value's bytes, as written and matched
LINE_MAX = 199  # the C reader's longest line (base/iniline.c)
_LIB_LINE = re.compile(r":\d+ in ")


class BaselineError(ValueError):
    """A malformed baseline: one line naming the file and the entry."""


def norm(text):
    """A value as the file holds it, written and matched alike (src/analyze/baseline_diff.c,
    sb_bl_norm): control characters as '?', cut where an inline comment (" ;") would start and
    at VALUE_MAX bytes on a character boundary, blanks trimmed."""
    s = str(text or "").encode("utf-8", "replace").lstrip(b" \t")
    out = bytearray()
    n = 0
    while n < len(s) and n < VALUE_MAX:
        ch = s[n]
        if ch == 0x3B and out and out[-1] in (0x20, 0x09):
            break
        out.append(0x3F if ch < 0x20 or ch == 0x7F else ch)
        n += 1
    if n < len(s) and n == VALUE_MAX:  # cut: not inside a character
        while n and (s[n] & 0xC0) == 0x80:
            n -= 1
        del out[n:]
    return bytes(out).rstrip(b" \t").decode("utf-8", "replace")


def lib_key(library_line):
    """A library line as `syncbench audit --update-baseline` writes it, FILE:FUNCTION: the
    report's "transformers/trainer.py:1847 in _run_epoch" without its line number."""
    return _LIB_LINE.sub(":", (library_line or "").strip(), count=1)


def _file_matches(path, recorded):
    if not recorded:
        return not path
    return recorded == path or recorded.endswith("/" + path.lstrip("./"))


def key_of(site, file):
    """A call site's key, file as the baseline will name it (a native site: its name); each
    value as the file holds it. Without an operation (no analyzer) the C side's "unknown"."""
    return tuple(norm(v) for v in (file or site.where, site.function or "", site.source,
                                   site.operation or "unknown", lib_key(site.via)))


class Site:
    """One [site.N] section; an entry of a block's allowance (_allow.judge). skip_first None:
    the file's. A site without a thread takes the calls of every thread that no site of the
    same key names (`taken`, set by load)."""

    def __init__(self, name, fields, baseline):
        self.name, self.baseline = name, baseline
        self.file, self.function, self.text = fields["file"], fields["function"], fields["text"]
        self.operation, self.library_line = fields["operation"], fields["library_line"]
        self.line, self.budget = fields["line"], fields["budget"]
        self.skip_first, self.thread, self.note = (fields["skip_first"], fields["thread"],
                                                   fields["note"])
        self.taken = frozenset()
        self.label = f"{self.file}:{self.function}: {self.text}" if self.function else self.file
        if self.thread:
            self.label += f" [thread {self.thread}]"

    def key(self):
        return tuple(norm(v) for v in (self.file, self.function, self.text, self.operation,
                                       lib_key(self.library_line)))

    def holds_thread(self, thread):
        """Does this site count the calls of thread (a tid as text; None: unknown)?"""
        if self.thread:
            return thread == self.thread
        return thread is None or thread not in self.taken

    def matches(self, site):
        return (_file_matches(norm(self.file), norm(site.file or site.where))
                and norm(site.function or "") == norm(self.function)
                and norm(site.source) == norm(self.text)
                and norm(site.operation or "unknown") == norm(self.operation)
                and norm(lib_key(site.via)) == norm(lib_key(self.library_line))
                and self.holds_thread(getattr(site, "thread", None)))

    def __repr__(self):
        return f"{self.label} x{self.budget}"


class Baseline:
    """per "step" (range, skip_first) or "run"; syncs_per_step and blocked_us_per_step as
    recorded (None: not given)."""

    def __init__(self, path, per="run", range_="", skip_first=0, sites=(), syncs_per_step=None,
                 blocked_us_per_step=None):
        self.path, self.per, self.range, self.skip_first = path, per, range_, skip_first
        self.syncs_per_step, self.blocked_us_per_step = syncs_per_step, blocked_us_per_step
        self.sites = list(sites)


def _whole(bad, value, where, empty=None, low=0):
    if value == "" and empty is not None:
        return empty
    if not re.fullmatch(r"\d+", value) or int(value) < low:
        raise bad(where, f"must be a whole number >= {low}, not {escape(value)!r}")
    return int(value)


def _number(bad, value, key):
    try:
        x = float(value)
    except ValueError:
        x = -1.0
    if not (0 <= x < 1e15) or not re.fullmatch(r"[0-9.eE+-]+", value):
        raise bad(f"[syncbench] {key}", f"must be a number >= 0, not {escape(value)!r}")
    return x


def _check_lines(path, raw, bad):
    """What the C reader refuses line by line (base/iniline.c): a NUL byte, a carriage return
    inside a line, a line over LINE_MAX bytes."""
    for n, line in enumerate(raw.split(b"\n"), 1):
        if line.endswith(b"\r"):
            line = line[:-1]
        if b"\0" in line:
            raise bad(f"line {n}", "a NUL byte")
        if b"\r" in line:
            raise bad(f"line {n}", "a carriage return inside a line")
        if len(line) - (3 if n == 1 and line.startswith(b"\xef\xbb\xbf") else 0) > LINE_MAX:
            raise bad(f"line {n}", f"longer than {LINE_MAX} bytes")


def _parse(path, bad):
    cp = configparser.ConfigParser(interpolation=None, default_section="\x00none",
                                   inline_comment_prefixes=(";",),
                                   empty_lines_in_values=False, strict=True)
    cp.optionxform = str
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise BaselineError(f"syncbench: baseline {escape(path)}: cannot read it: "
                            f"{escape(e.strerror or e)}") from None
    _check_lines(path, raw, bad)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise bad("the file", "not UTF-8 text") from None
    try:
        cp.read_string(text.lstrip("\ufeff"), source=str(path))
    except configparser.MissingSectionHeaderError as e:
        raise bad(f"line {e.lineno}", "a key before any [section]") from None
    except configparser.DuplicateSectionError as e:
        raise bad(f"[{e.section}]", f"a second [{e.section}] (line {e.lineno})") from None
    except configparser.DuplicateOptionError as e:
        raise bad(f"[{e.section}] {e.option}", f"given twice (line {e.lineno})") from None
    except configparser.Error as e:
        raise bad("the file", escape(str(e).splitlines()[0])) from None
    return cp


def _head(cp, path, bad):
    if "syncbench" not in cp:
        raise bad("[syncbench]", "missing (the file's header section)")
    head = cp["syncbench"]
    for k in head:
        if k not in HEAD_KEYS:
            raise bad(f"[syncbench] {escape(k)}", f"unknown key ({', '.join(HEAD_KEYS)})")
    for k in ("version", "per"):
        if k not in head:
            raise bad(f"[syncbench] {k}", "missing")
    version = _whole(bad, head["version"].strip(), "[syncbench] version", low=1)
    if version > VERSION:
        raise bad("[syncbench] version", f"{version}: newer than this syncbench reads "
                                         f"({VERSION}); update syncbench")
    per = head["per"].strip()
    if per not in ("step", "run"):
        raise bad("[syncbench] per", f"must be step or run, not {escape(per)!r}")
    range_ = head.get("range", "").strip()
    if per == "step" and not range_:
        raise bad("[syncbench] range", "per = step needs a range (the range a step is)")
    skip = _whole(bad, head.get("skip_first", "0").strip(), "[syncbench] skip_first", 0)
    numbers = {k: _number(bad, head[k].strip(), k) if k in head else None
               for k in ("syncs_per_step", "blocked_us_per_step")}
    return Baseline(str(path), per, range_, skip, **numbers)


def _site(cp, name, base, bad):
    if not re.fullmatch(r"site\.\d+", name):
        raise bad(f"[{escape(name)}]", "unknown section ([syncbench], [site.N])")
    sec = cp[name]
    for k in sec:
        if k not in SITE_KEYS:
            raise bad(f"[{name}] {escape(k)}", f"unknown key ({', '.join(SITE_KEYS)})")
    for k in REQUIRED:
        if k not in sec:
            raise bad(f"[{name}] {k}", "missing")
    fields = {k: sec.get(k, "").strip() for k in SITE_KEYS}
    for k in ("file", "operation", "budget"):
        if not fields[k]:
            raise bad(f"[{name}] {k}", "empty")
    fields["budget"] = _whole(bad, fields["budget"], f"[{name}] budget")
    fields["line"] = _whole(bad, fields["line"], f"[{name}] line", 0)
    fields["skip_first"] = (_whole(bad, fields["skip_first"], f"[{name}] skip_first")
                            if fields["skip_first"] else None)
    if fields["thread"] and not fields["thread"].isdigit():
        raise bad(f"[{name}] thread", f"{escape(fields['thread'])!r}: not a thread id (the "
                                      f"records name threads by tid)")
    return Site(name, fields, base.path)


def load(path):
    """The baseline at path; BaselineError (one line: the file, the entry, what is wrong)."""
    def bad(where, what):
        return BaselineError(f"syncbench: baseline {escape(path)}: {where}: {what}")

    cp = _parse(path, bad)
    base = _head(cp, path, bad)
    seen = {}
    for name in cp.sections():
        if name == "syncbench":
            continue
        site = _site(cp, name, base, bad)
        key = site.key() + (site.thread,)
        if key in seen:
            raise bad(f"[{name}]", f"the same site as [{seen[key]}] (file, function, text, "
                                   f"operation, library_line, thread)")
        seen[key] = name
        base.sites.append(site)
    threads = {}
    for s in base.sites:
        if s.thread:
            threads.setdefault(s.key(), set()).add(s.thread)
    for s in base.sites:
        if not s.thread:
            s.taken = frozenset(threads.get(s.key(), ()))
    base.sites.sort(key=lambda s: int(s.name.split(".")[1]))
    return base


class Observed:
    """What --syncbench-update-baseline writes to one file: its mode, each site's most calls in
    one counted step (per run: one test), and the counted calls and steps."""

    def __init__(self, per="run", range_="", skip_first=0):
        self.per, self.range, self.skip_first = per, range_, skip_first
        self.sites = {}  # (key, thread) -> [site, budget, line, old Site or None]
        self.calls, self.steps, self.blocked_us = 0, 0, 0.0
        self.file_of = lambda file: file  # a call's file as the baseline names it

    def add(self, key, thread, site, calls, old=None):
        """calls at key (and thread: an old site's) in one counted step."""
        got = self.sites.get((key, thread))
        if got is None:
            self.sites[(key, thread)] = [site, calls, site.line, old]
        elif calls > got[1]:
            got[1] = calls


def _value(text):
    """One line's value, as the file holds it."""
    return norm(" ".join(str(text or "").splitlines()))


def text_of(obs, old=None):
    """The file's text: obs (an Observed), each site's note (and skip_first) kept from old (a
    Baseline) where it remains; sites sorted by their key."""
    notes = {s.key() + (s.thread,): s for s in old.sites} if old else {}
    steps = obs.steps or 1
    lines = ["# syncbench sync baseline: written by the pytest plugin "
             "(--syncbench-update-baseline); edit by hand",
             "[syncbench]", f"version = {VERSION}", f"per = {obs.per}"]
    if obs.per == "step":
        lines += [f"range = {_value(obs.range)}", f"skip_first = {obs.skip_first}"]
    lines += [f"syncs_per_step = {obs.calls / steps:.6g}",
              f"blocked_us_per_step = {obs.blocked_us / steps:.1f}"]
    for i, (key, thread) in enumerate(sorted(obs.sites), 1):
        site, budget, line, matched = obs.sites[(key, thread)]
        kept = notes.get(key + (thread,)) or matched
        file, function, text, operation, library_line = key
        lines += ["", f"[site.{i}]"]
        for k, v in (("file", file), ("function", function), ("text", text),
                     ("operation", operation), ("library_line", library_line)):
            lines.append(f"{k} = {v}" if v else f"{k} =")
        lines += [f"line = {line}", f"budget = {budget}"]
        if kept is not None and kept.skip_first is not None:
            lines.append(f"skip_first = {kept.skip_first}")
        if thread:
            lines.append(f"thread = {thread}")
        if kept is not None and kept.note:
            lines.append(f"note = {_value(kept.note)}")
    return "\n".join(lines) + "\n"


def write(path, obs, old=None):
    """Writes text_of(obs, old) at path atomically (a temporary file beside it, renamed; the old
    file's mode kept)."""
    data = text_of(obs, old)
    d = os.path.dirname(os.path.abspath(path))
    try:
        mode = os.stat(path).st_mode & 0o777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        mode = 0o666 & ~mask
    fd, tmp = tempfile.mkstemp(prefix=".syncbench-baseline-", dir=d)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
