"""What the CI outputs' tests share (docs/ci.md): record streams whose blocking calls sit on
Python lines of files in a workspace, as `syncbench audit --keep` leaves them, and the JUnit
checks: the schema CI tools accept (tests/cli/junit.xsd, through lxml or xmllint) and what a
schema cannot hold (every count the number of its cases)."""
import json
import pathlib
import shutil
import subprocess
import xml.etree.ElementTree as ET

XSD = pathlib.Path(__file__).with_name("junit.xsd")
TORCH_ITEM = ["/usr/lib/libtorch_cuda.so", "at::native::_local_scalar_dense_cuda(at::Tensor const&)",
              4660, 140000000000000]
NATIVE_SYNC = ["/opt/app/libsolver.so", "solver_wait", 64, 140000000001000]


class Site:
    """A line that makes `calls` blocking calls: file None is a native site (no Python)."""

    def __init__(self, file, line, function, source, calls, native=TORCH_ITEM):
        self.file, self.line, self.function, self.source = file, line, function, source
        self.calls, self.native = calls, native


def write_source(site):
    """The site's file, its line holding the source (the audit reads it for the rule)."""
    path = pathlib.Path(site.file)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n" * (site.line - 1) + site.source + "\n")


def write_records(folder, sites, range_name=None, pid=7, cmd="python3 train.py"):
    """folder/proc-PID.jsonl (src/record/records.h) with every site's calls of
    cudaStreamSynchronize; with range_name, each call in an instance of that NVTX range."""
    folder = pathlib.Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    recs = [{"t": "proc", "v": 1, "pid": pid, "ppid": 1, "rank": -1, "local_rank": -1,
             "cmd": cmd, "clock_ns": 0, "mono_ns": 0, "mode": "count", "kernels": 0,
             "symsize": 1}]  # the frames' symbols cover their addresses (a writer of now)
    corr = 0
    for i, s in enumerate(sites, 1):
        recs.append({"t": "stack", "id": i, "frames": [s.native]})
        if s.file:
            write_source(s)
            recs.append({"t": "pystack", "id": i, "frames": [[str(s.file), s.function, s.line]]})
        for _ in range(s.calls):
            corr += 1
            t0 = corr * 10_000_000
            ranges = []
            if range_name is not None:
                recs.append({"t": "range", "tid": 1, "id": corr, "name": range_name,
                             "start": t0, "end": t0 + 9_000_000, "depth": 0})
                ranges = [[corr, range_name]]
            recs.append({"t": "call", "api": "cudaStreamSynchronize_v3020", "dom": "rt",
                         "tid": 1, "ctx": 1, "corr": corr, "start": t0 + 1000,
                         "end": t0 + 5000, "ranges": ranges, "stack": i,
                         "py": i if s.file else -1})
    recs.append({"t": "end", "clock_ns": 10**9, "mono_ns": 10**9, "why": "exit", "dropped": 0})
    (folder / f"proc-{pid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in recs))
    return folder


# ---- JUnit -------------------------------------------------------------------------------

def validate_schema(path):
    """The file against tests/cli/junit.xsd: lxml where this Python has it, else xmllint."""
    try:
        from lxml import etree
    except ImportError:
        etree = None
    if etree is not None:
        schema = etree.XMLSchema(etree.parse(str(XSD)))
        try:
            doc = etree.parse(str(path))
        except etree.XMLSyntaxError as e:
            raise AssertionError(f"{path}: not well-formed XML: {e}") from None
        assert schema.validate(doc), schema.error_log
        return
    xmllint = shutil.which("xmllint")
    assert xmllint, "neither lxml nor xmllint: cannot validate JUnit XML (apt-get install " \
                    "python3-lxml or libxml2-utils)"
    r = subprocess.run([xmllint, "--noout", "--schema", str(XSD), str(path)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr


def outcome(case):
    """'failed', 'error', 'skipped' or 'passed', from the case's children."""
    for tag, what in (("failure", "failed"), ("error", "error"), ("skipped", "skipped")):
        if case.find(tag) is not None:
            return what
    return "passed"


def check_junit(path):
    """Valid against the schema, every count the number of its cases, every failure and skip
    with its message in the body too (GitLab shows the body only). Returns
    {(classname, name): (outcome, element or None)} of every case."""
    validate_schema(path)
    root = ET.parse(path).getroot()
    assert root.tag == "testsuites", root.tag
    cases, totals = {}, dict(tests=0, failures=0, errors=0, skipped=0)
    for suite in root.findall("testsuite"):
        got = [outcome(c) for c in suite.findall("testcase")]
        want = dict(tests=len(got), failures=got.count("failed"), errors=got.count("error"),
                    skipped=got.count("skipped"))
        for k, v in want.items():
            assert int(suite.get(k, "0")) == v, (suite.get("name"), k, suite.get(k), v)
            totals[k] += v
        for c in suite.findall("testcase"):
            key = (c.get("classname"), c.get("name"))
            assert key not in cases, f"case {key} twice"
            el = next((c.find(t) for t in ("failure", "error", "skipped") if c.find(t) is not None),
                      None)
            if el is not None and el.tag != "skipped":
                assert el.get("message") and el.get("message") in (el.text or ""), \
                    "a failure's message must be in its body too (GitLab shows the body)"
            if el is not None and el.tag == "skipped":
                assert el.get("message") and (el.text or "").strip(), "a skip without a reason"
            cases[key] = (outcome(c), el)
    for k, v in totals.items():
        assert int(root.get(k, "0")) == v, ("testsuites", k, root.get(k), v)
    return cases
