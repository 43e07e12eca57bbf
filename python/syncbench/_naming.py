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

    thread = None  # the calling thread's tid (text), where the sites were named per thread
    thread_shown = False  # details() names it (sites of several threads side by side)

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
        on = f" on thread {self.thread}" if self.thread_shown and self.thread else ""
        out.append(f"{pad}{escape(self.cls)} x{self.count}{on}: {what} "
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


def _analyze(stream, by_range=False):
    """The sites the analyzer names; by_range: {the innermost range's name: [Site]} instead."""
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
    sites, ranges = [], {}
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
        ranges.setdefault(row.get("range") or "", []).append(sites[-1])
    return ranges if by_range else sites


def _library(file):
    """Not the user's code (the analyzer's rule): "<frozen ...>", the standard library and
    installed packages."""
    return (file.startswith("<") or "/site-packages/" in file or "/dist-packages/" in file
            or "/lib/python3" in file or "/lib64/python3" in file)


def _from_records(stream, by_range=False):
    """The calls named from the records alone: API name, the user's Python line (the innermost
    frame of the user's code) and the innermost frame when it is another; by_range: {the
    innermost range's name: [Site]}."""
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
        ranges = c.get("ranges") or [[0, ""]]
        tag = ranges[-1][1] if isinstance(ranges[-1], list) and len(ranges[-1]) > 1 else ""
        key = (tag if by_range else "", where, via, c.get("api", "?"))
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
    if not by_range:
        return list(by_site.values())
    ranges = {}
    for key, site in by_site.items():
        ranges.setdefault(key[0], []).append(site)
    return ranges


def sites_of(stream):
    """The block's blocking call sites, most frequent first."""
    if not stream:
        return []
    sites = _analyze(stream)
    if sites is None:
        sites = _from_records(stream)
    return sorted(sites, key=lambda s: (-s.count, s.where))


def _tagged(parts):
    """One record stream of parts [(tag, stream)]: each call line's ranges replaced by one of
    its own, named "TAG tid TID" (the innermost range names a report's row: the analyzer's
    rows come apart by part and thread); the first process line, each stack once, the last end
    line. {range name: (tag, tid, its index)} with it."""
    head, stacks, calls, seen, tail, names = [], [], [], set(), [], {}
    for tag, stream in parts:
        for line in (stream or b"").splitlines():
            try:
                o = json.loads(line)
                kind = o.get("t")
            except (ValueError, AttributeError):
                continue
            if kind == "proc":
                head = head or [line]
            elif kind == "end":
                tail = [line]
            elif kind == "call":
                tid = str(o.get("tid", ""))
                name = f"{tag} tid {tid}"
                if name not in names:
                    names[name] = (tag, tid, len(names))
                # ids far above the library's own: no instance of a real range is taken for it
                o["ranges"] = [[(1 << 40) + names[name][2], name]]
                calls.append(json.dumps(o, separators=(",", ":")).encode())
            elif line not in seen:
                seen.add(line)
                stacks.append(line)
    return b"\n".join(head + stacks + calls + tail) + b"\n", names


def sites_by_part(parts):
    """parts [(tag, stream or None)]: {(tag, tid): [Site, each with .thread = tid]}, the
    blocking call sites of each part and thread, most frequent first; one analyzer run for
    them all (without the analyzer, named from the records alone)."""
    parts = [(t, s) for t, s in parts if s]
    if not parts:
        return {}
    stream, names = _tagged(parts)
    named = _analyze(stream, by_range=True)
    if named is None:
        named = _from_records(stream, by_range=True)
    out = {}
    for name, sites in named.items():
        if name not in names:
            continue
        tag, tid, _ = names[name]
        for s in sites:
            s.thread = tid
        out[(tag, tid)] = sorted(sites, key=lambda s: (-s.count, s.where))
    return out
