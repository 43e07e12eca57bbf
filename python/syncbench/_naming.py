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
    """One call site of a block: what the audit's report row says of it."""

    def __init__(self, count, cls, where, source="", operation="", fix="", blocked_us=0.0,
                 api="", file=None, line=0, scenario=None):
        self.count, self.cls, self.where, self.source = count, cls, where, source
        self.operation, self.fix, self.blocked_us, self.api = operation, fix, blocked_us, api
        # the Python line (file as recorded, None: a native site) and the scenario pricing the fix
        self.file, self.line, self.scenario = file, line, scenario

    def lines(self):
        """The site as a failed test shows it; every text from outside (file, source line, the
        analyzer's words) escaped, one line each."""
        where = escape(self.where)
        head = f"{where}: {escape(self.source)}" if self.source else where
        what = escape(self.operation or self.api or "a blocking call")
        out = [f"  {head}",
               f"      {escape(self.cls)} x{self.count}: {what} "
               f"(blocked {self.blocked_us / 1e3:.3f} ms)"]
        if self.fix:
            out.append(f"      fix: {escape(self.fix)}")
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
        where = (f"{py.get('file')}:{py.get('line')} in {py.get('function')}" if py.get("file")
                 else row.get("site") or row.get("native_site") or "?")
        sites.append(Site(row.get("count", 0), row.get("class", "?"), where,
                          py.get("source") or "", row.get("operation") or "",
                          row.get("fix") or "", row.get("blocked_total_us") or 0.0,
                          file=py.get("file") or None, line=py.get("line") or 0,
                          scenario=row.get("scenario") or None))
    return sites


def _from_records(stream):
    """The calls named from the records alone: API name, innermost Python frame."""
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
    for c in calls:
        frames = pystacks.get(c.get("py"), [])
        where = f"{frames[0][0]}:{frames[0][2]} in {frames[0][1]}" if frames else "(no Python frame)"
        key = (where, c.get("api", "?"))
        s = by_site.setdefault(key, Site(0, "blocking", where, api=c.get("api", "?"),
                                         file=frames[0][0] if frames else None,
                                         line=frames[0][2] if frames else 0))
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
