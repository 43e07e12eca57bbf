"""What a block allows: a count of calls, sites or libraries (each with a count, or any number),
and a baseline's sites (_baseline.py). A blocking call is allowed by the first entry, in the
order given, that matches its site and has calls left; calls no entry takes are allowed up to
the count (0 when sites or libraries are given); the rest fail the block.

A site entry is `PATH`, `PATH:LINE`, `PATH:FUNCTION` or `PATH:LINE in FUNCTION` (the audit's
own naming, copied from a failure), PATH a Python file (ending in .py): it matches a call whose
user's line, or whose line inside a library that made it, is in a file whose recorded path is
PATH or ends with /PATH (an absolute PATH: that file only), at that line, in that function. A
library entry is a package name (`transformers`, `torch.amp`): it matches a call the analyzer
says was made inside that package (its `library`), or whose library line is in a file of that
package (under site-packages/ or dist-packages/ as `torch/amp/...`)."""
import re

_SITE = re.compile(r"^(?P<path>.+?\.py)(?::(?:(?P<line>\d+)(?: in (?P<func1>\S+))?|"
                   r"(?P<func2>[A-Za-z_<][\w.<>-]*)))?$")
_LIBRARY = re.compile(r"^[A-Za-z_][\w-]*(?:\.[A-Za-z_][\w-]*)*$")


def _file_matches(path, recorded):
    if not recorded:
        return False
    if path.startswith("/"):
        return recorded == path
    return recorded == path or recorded.endswith("/" + path)


def _in_package(recorded, package):
    if not recorded:
        return False
    part = package.replace(".", "/")
    return any(f"/{top}/{part}/" in recorded or recorded.endswith(f"/{top}/{part}.py")
               for top in ("site-packages", "dist-packages"))


class Entry:
    """One allowed site or library: `label` as given, `budget` (None: any number)."""

    def __init__(self, label, budget, where):
        if not isinstance(label, str) or not label.strip():
            raise ValueError(f"syncbench.{where}: an allowed site or library must be a "
                             f"non-empty string, not {label!r}")
        if budget is not None and (budget.__class__ is not int or budget < 0):
            raise ValueError(f"syncbench.{where}: the count allowed for {label!r} must be a "
                             f"whole number >= 0, not {budget!r}")
        self.label, self.budget = label, budget
        text = label.strip()
        while text.startswith("./"):
            text = text[2:]
        m = _SITE.match(text)
        if m:
            self.kind = "site"
            self.path = m.group("path")
            self.line = int(m.group("line")) if m.group("line") else None
            self.function = m.group("func1") or m.group("func2")
        elif _LIBRARY.match(text):
            self.kind, self.package = "library", text
        else:
            raise ValueError(f"syncbench.{where}: {label!r} is neither a site (FILE.py, "
                             f"FILE.py:LINE, FILE.py:FUNCTION, FILE.py:LINE in FUNCTION) nor a "
                             f"library (a package name)")

    def _frame(self, file, line, function):
        return (_file_matches(self.path, file)
                and (self.line is None or self.line == line)
                and (self.function is None or self.function == function))

    def matches(self, site):
        if self.kind == "site":
            return (self._frame(site.file, site.line, site.function)
                    or self._frame(site.via_file, site.via_line, site.via_function))
        return site.library == self.package or _in_package(site.via_file, self.package)

    def __repr__(self):
        return self.label if self.budget is None else f"{self.label} x{self.budget}"


def entries_of(spec, where):
    """allow's sites or libraries: a list (any number each) or a dict {entry: count}."""
    if isinstance(spec, dict):
        return [Entry(k, v, where) for k, v in spec.items()]
    return [Entry(k, None, where) for k in spec]


def parse(allow, where):
    """(count, entries) of an allow argument; ValueError naming what is wrong."""
    if allow.__class__ is int and allow >= 0:
        return allow, []
    if isinstance(allow, (list, tuple, dict)):
        return 0, entries_of(allow, where)
    raise ValueError(f"syncbench.{where}: allow must be a whole number >= 0, a list of sites or "
                     f"libraries, or a dict {{site or library: count}}, not {allow!r}")


def judge(sites, blocking, count, entries):
    """The calls no entry and no count allow: [(site, calls)], and the calls not named (a block
    names its first 256: those beyond cannot match an entry)."""
    left = [e.budget for e in entries]
    bad, others = [], count
    for s in sites:
        n = s.count
        for i, e in enumerate(entries):
            if not n:
                break
            if left[i] != 0 and e.matches(s):
                take = n if left[i] is None else min(n, left[i])
                n -= take
                if left[i] is not None:
                    left[i] -= take
        take = min(n, others)
        n, others = n - take, others - take
        if n:
            bad.append((s, n))
    unnamed = max(0, blocking - sum(s.count for s in sites))
    unnamed -= min(unnamed, others)
    return bad, unnamed
