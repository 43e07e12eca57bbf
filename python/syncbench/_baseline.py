"""The sync baseline: the INI file `syncbench audit --update-baseline` writes and the pytest
plugin reads and writes (--syncbench-baseline FILE, --syncbench-update-baseline):

    [syncbench]
    version = 1
    per = run            ; step: per step of the range; run: per run (the plugin: per test)
    range =
    skip_first = 0
    [site.1]
    file = train.py
    function = train_step
    text = loss.item()
    operation = scalar read: .item()
    library_line =
    line = 42
    budget = 1
    skip_first = 0
    thread =
    note = ...

A site is keyed by file, function, text, operation and library_line (without its line number:
"pkg/mod.py:120 in f" and "pkg/mod.py:131 in f" are one key), never by `line`, which says where
it was when written. `budget`: the calls allowed at the site per run. A file is matched at the
call's recorded path: the same, or ending with /FILE."""
import configparser
import os
import re
import tempfile

from ._text import escape

SITE_KEYS = ("file", "function", "text", "operation", "library_line", "line", "budget",
             "skip_first", "thread", "note")
# syncs_per_step and blocked_us_per_step: the numbers the audit recorded (read, not judged here)
HEAD_KEYS = ("version", "per", "range", "skip_first", "syncs_per_step", "blocked_us_per_step")
_LIB_LINE = re.compile(r":\d+ in ")


class BaselineError(ValueError):
    """A malformed baseline: one line naming the file and the entry."""


def lib_key(library_line):
    """A library line as `syncbench audit --update-baseline` writes it, FILE:FUNCTION: the
    report's "transformers/trainer.py:1847 in _run_epoch" without its line number."""
    return _LIB_LINE.sub(":", library_line.strip(), count=1)


def _file_matches(path, recorded):
    if not recorded:
        return not path
    return recorded == path or recorded.endswith("/" + path.lstrip("./"))


class Site:
    """One [site.N] section; an entry of a block's allowance (_allow.judge)."""

    def __init__(self, name, fields, baseline):
        self.name, self.baseline = name, baseline
        self.file, self.function, self.text = fields["file"], fields["function"], fields["text"]
        self.operation, self.library_line = fields["operation"], fields["library_line"]
        self.line, self.budget = fields["line"], fields["budget"]
        self.skip_first, self.thread, self.note = (fields["skip_first"], fields["thread"],
                                                   fields["note"])
        self.label = f"{self.file}:{self.function}: {self.text}" if self.function else self.file

    def key(self):
        return (self.file, self.function, self.text, self.operation, lib_key(self.library_line))

    def matches(self, site):
        return (_file_matches(self.file, site.file or site.where)
                and (site.function or "") == self.function
                and site.source.strip() == self.text and site.operation == self.operation
                and lib_key(site.via) == lib_key(self.library_line))

    def __repr__(self):
        return f"{self.label} x{self.budget}"


class Baseline:
    def __init__(self, path, per="run", range_="", skip_first=0, sites=()):
        self.path, self.per, self.range, self.skip_first = path, per, range_, skip_first
        self.sites = list(sites)


def _int(value, path, section, key, empty=None):
    if value == "" and empty is not None:
        return empty
    if not re.fullmatch(r"\d+", value):
        raise BaselineError(f"syncbench: baseline {escape(path)}: [{section}] {key}: must be a "
                            f"whole number >= 0, not {escape(value)!r}")
    return int(value)


def load(path, plugin=True):
    """The baseline at path; BaselineError (one line: the file, the entry, what is wrong)."""
    def bad(where, what):
        return BaselineError(f"syncbench: baseline {escape(path)}: {where}: {what}")

    cp = configparser.ConfigParser(interpolation=None, default_section="\x00none",
                                   inline_comment_prefixes=(";",),
                                   empty_lines_in_values=False, strict=True)
    cp.optionxform = str
    try:
        with open(path, encoding="utf-8") as f:
            cp.read_file(f, source=str(path))
    except OSError as e:
        raise BaselineError(f"syncbench: baseline {escape(path)}: cannot read it: "
                            f"{escape(e.strerror or e)}") from None
    except UnicodeDecodeError:
        raise bad("the file", "not UTF-8 text") from None
    except configparser.MissingSectionHeaderError as e:
        raise bad(f"line {e.lineno}", "a key before any [section]") from None
    except configparser.DuplicateSectionError as e:
        raise bad(f"[{e.section}]", f"a second [{e.section}] (line {e.lineno})") from None
    except configparser.DuplicateOptionError as e:
        raise bad(f"[{e.section}] {e.option}", f"given twice (line {e.lineno})") from None
    except configparser.Error as e:
        raise bad("the file", escape(str(e).splitlines()[0])) from None
    if "syncbench" not in cp:
        raise bad("[syncbench]", "missing (the file's header section)")
    head = cp["syncbench"]
    for k in head:
        if k not in HEAD_KEYS:
            raise bad(f"[syncbench] {escape(k)}", f"unknown key ({', '.join(HEAD_KEYS)})")
    if head.get("version", "").strip() != "1":
        raise bad("[syncbench] version", f"must be 1, not {escape(head.get('version', ''))!r}")
    per = head.get("per", "").strip()
    if per not in ("step", "run"):
        raise bad("[syncbench] per", f"must be step or run, not {escape(per)!r}")
    if plugin and per != "run":
        raise bad("[syncbench] per", "step: a budget per step of a range, which a test has not; "
                                     "the pytest plugin checks per = run (each test a run)")
    skip = _int(head.get("skip_first", "0").strip(), path, "syncbench", "skip_first", 0)
    if plugin and skip:
        raise bad("[syncbench] skip_first", f"{skip}: the pytest plugin checks every test "
                                            f"(0 only)")
    base = Baseline(str(path), per, head.get("range", "").strip(), skip)
    seen = {}
    for name in cp.sections():
        if name == "syncbench":
            continue
        if not re.fullmatch(r"site\.[1-9]\d*", name):
            raise bad(f"[{escape(name)}]", "unknown section ([syncbench], [site.N])")
        sec = cp[name]
        for k in sec:
            if k not in SITE_KEYS:
                raise bad(f"[{name}] {escape(k)}", f"unknown key ({', '.join(SITE_KEYS)})")
        fields = {k: sec.get(k, "").strip() for k in SITE_KEYS}
        for k in ("file", "budget"):
            if not fields[k]:
                raise bad(f"[{name}] {k}", "missing or empty")
        fields["budget"] = _int(fields["budget"], path, name, "budget")
        fields["line"] = _int(fields["line"], path, name, "line", 0)
        fields["skip_first"] = _int(fields["skip_first"], path, name, "skip_first", 0)
        if plugin and fields["skip_first"]:
            raise bad(f"[{name}] skip_first", f"{fields['skip_first']}: the pytest plugin "
                                              f"checks every test (0 only)")
        if plugin and fields["thread"]:
            raise bad(f"[{name}] thread", f"{escape(fields['thread'])!r}: the pytest plugin "
                                          f"counts the test's own thread (empty only)")
        site = Site(name, fields, str(path))
        if site.key() in seen:
            raise bad(f"[{name}]", f"the same site as [{seen[site.key()]}] (file, function, "
                                   f"text, operation, library_line)")
        seen[site.key()] = name
        base.sites.append(site)
    base.sites.sort(key=lambda s: int(s.name.split(".")[1]))
    return base


def _value(text):
    """One line's value: no line breaks (a configparser value would continue)."""
    return " ".join(str(text).split("\n")).replace("\r", " ").strip()


def key_of(site, file):
    """A call site's key, file as the baseline will name it (a native site: its name)."""
    return (file or site.where, site.function or "", site.source.strip(), site.operation,
            lib_key(site.via))


def write(path, observed, old=None):
    """Writes the baseline at path atomically: observed {key: [site, budget, line]}, each
    site's note kept from old (a Baseline) where it remains; sites sorted by their key."""
    notes = {s.key(): s.note for s in old.sites} if old else {}
    lines = ["[syncbench]", "version = 1", "per = run",
             f"range = {_value(old.range) if old else ''}", "skip_first = 0"]
    for i, key in enumerate(sorted(observed), 1):
        site, budget, line = observed[key]
        file, function, text, operation, _ = key
        lines += ["", f"[site.{i}]", f"file = {_value(file)}", f"function = {_value(function)}",
                  f"text = {_value(text)}", f"operation = {_value(operation)}",
                  f"library_line = {_value(lib_key(site.via or ''))}", f"line = {line}", f"budget = {budget}",
                  "skip_first = 0", "thread =", f"note = {_value(notes.get(key, ''))}"]
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
            f.write("\n".join(lines) + "\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
