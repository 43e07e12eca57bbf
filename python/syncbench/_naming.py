"""Naming a block's calls as `syncbench audit` does: its record stream goes through the
analyzer (`syncbench audit --from DIR --json -`), which gives each call site its Python line,
source text, operation, class and fix. Without the analyzer binary, the calls are named from
the records alone (API and Python line)."""
import json
import os
import subprocess
import tempfile

from . import _native
from ._text import escape, unique_keys


class Site:
    """One call site of a block: what the audit's report row says of it. `where` is the user's
    line; `via` the line inside a library that made the call ("" when the user's line made it
    itself), `via_source` its text, `library` the package whose code it is ("" when none).
    `file`, `line`, `function`: the user's line's frame (file as recorded, None: a native
    site); `via_file`, `via_line`, `via_function`: the library line's (None: none)."""

    def __init__(self, count, cls, where, source="", operation="", fix="", blocked_us=0.0,
                 api="", file=None, line=0, scenario=None, via="", via_source="", library="",
                 function="", via_file=None, via_line=0, via_function=""):
        self.count, self.cls, self.where, self.source = count, cls, where, source
        self.operation, self.fix, self.blocked_us, self.api = operation, fix, blocked_us, api
        # the Python line (file as recorded, None: a native site) and the scenario pricing the fix
        self.file, self.line, self.scenario, self.function = file, line, scenario, function
        self.via, self.via_source, self.library = via, via_source, library
        self.via_file, self.via_line, self.via_function = via_file, via_line, via_function

    def head(self):
        """The user's line as a failed test shows it; text from outside escaped."""
        where = escape(self.where)
        return f"  {where}: {escape(self.source)}" if self.source else f"  {where}"

    def details(self):
        """Under the user's line: the line inside a library that made the calls, their class,
        count, operation and fix."""
        out, pad = [], "      "
        if self.via:
            via = escape(self.via)
            out.append(f"{pad}via {via}: {escape(self.via_source)}" if self.via_source
                       else f"{pad}via {via}")
            pad += "  "
        what = escape(self.operation or self.api or "a blocking call")
        out.append(f"{pad}{escape(self.cls)} x{self.count}: {what} "
                   f"(blocked {self.blocked_us / 1e3:.3f} ms)")
        if self.fix:
            out.append(f"{pad}fix: {escape(self.fix)}")
        return out

    def lines(self):
        """The site as a failed test shows it, one line each."""
        return [self.head()] + self.details()


def report_lines(sites):
    """The sites as a failed test shows them: each user's line once, the calls it made (and the
    library lines that made them) under it, the lines in the order of their most frequent
    site."""
    groups = {}
    for s in sites:
        groups.setdefault((s.where, s.source), []).append(s)
    out = []
    for group in groups.values():
        out.append(group[0].head())
        for s in group:
            out += s.details()
    return out


def _analyze(stream):
    exe = _native.analyzer()
    if not exe:
        return None
    with tempfile.TemporaryDirectory(prefix="syncbench-block-") as d:
        with open(os.path.join(d, f"proc-{os.getpid()}.jsonl"), "wb") as f:
            f.write(stream)
        try:
            # --ci none: under GitHub Actions the analyzer would add its own annotations and step
            # summary; the plugin annotates the test's lines itself
            r = subprocess.run([exe, "audit", "-q", "--ci", "none", "--from", d, "--json", "-"],
                               capture_output=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None
    if r.returncode != 0:
        return None
    try:
        report = json.loads(r.stdout, object_pairs_hook=unique_keys)
    except ValueError:
        return None
    sites = []
    for row in report.get("rows", []):
        if row.get("group") not in ("explicit", "implicit"):
            continue
        py = row.get("python") or {}
        via = row.get("via") or {}
        where = (f"{py.get('file')}:{py.get('line')} in {py.get('function')}" if py.get("file")
                 else row.get("site") or row.get("native_site") or "?")
        sites.append(Site(row.get("count", 0), row.get("class", "?"), where,
                          py.get("source") or "", row.get("operation") or "",
                          row.get("fix") or "", row.get("blocked_total_us") or 0.0,
                          file=py.get("file") or None, line=py.get("line") or 0,
                          scenario=row.get("scenario") or None,
                          via=via.get("site") or "", via_source=via.get("source") or "",
                          library=row.get("library") or "", function=py.get("function") or "",
                          via_file=via.get("file") or None, via_line=via.get("line") or 0,
                          via_function=via.get("function") or ""))
    return sites


def _library(file):
    """Not the user's code (the analyzer's rule): "<frozen ...>", the standard library and
    installed packages."""
    return (file.startswith("<") or "/site-packages/" in file or "/dist-packages/" in file
            or "/lib/python3" in file or "/lib64/python3" in file)


def _from_records(stream):
    """The calls named from the records alone: API name, the user's Python line (the innermost
    frame of the user's code) and the innermost frame when it is another."""
    pystacks, calls = {}, []
    for line in stream.decode(errors="replace").splitlines():
        try:
            o = json.loads(line, object_pairs_hook=unique_keys)
        except ValueError:
            continue
        if o.get("t") == "pystack":
            pystacks[o.get("id")] = o.get("frames") or []
        elif o.get("t") == "call":
            calls.append(o)
    by_site = {}
    def text(f):
        return f"{f[0]}:{f[2]} in {f[1]}"

    for c in calls:
        frames = [f for f in pystacks.get(c.get("py"), []) if len(f) >= 3]
        user = next((f for f in frames if not _library(str(f[0]))), frames[0] if frames else None)
        where = text(user) if user else "(no Python frame)"
        via = text(frames[0]) if frames and frames[0] is not user else ""
        key = (where, via, c.get("api", "?"))
        inner = frames[0] if via else None
        s = by_site.setdefault(key, Site(0, "blocking", where, api=c.get("api", "?"), via=via,
                                         file=user[0] if user else None,
                                         line=user[2] if user else 0,
                                         function=user[1] if user else "",
                                         via_file=inner[0] if inner else None,
                                         via_line=inner[2] if inner else 0,
                                         via_function=inner[1] if inner else ""))
        s.count += 1
        s.blocked_us += (c.get("end", 0) - c.get("start", 0)) / 1e3
    return list(by_site.values())


def sites_of(stream):
    """The block's blocking call sites, most frequent first."""
    if not stream:
        return []
    sites = _analyze(stream)
    if sites is None:
        sites = _from_records(stream)
    return sorted(sites, key=lambda s: (-s.count, s.where))
