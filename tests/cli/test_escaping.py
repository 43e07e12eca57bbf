"""Nothing from outside reaches the terminal raw (issue 19 item 4): names typed on the command
line, a CSV's gpu and run_id and file names in compare's table and Markdown, the audited
command line in the audit's header. C0 controls, DEL, C1 controls (ESC's 8-bit twins, which
terminals obey) and bytes that are not UTF-8 come out as \\xNN escapes."""
import os
import re
import subprocess
import sys

from conftest import BIN, ROOT

HOSTILE = b"a\x1b[31m\xc2\x9b31m\xc2\x9d0;title\x07\xff\x7f"


def raw_controls(data: bytes):
    """The bytes a terminal would obey: C0 (but newline), DEL, C1 as UTF-8, and invalid UTF-8."""
    found = re.findall(rb"[\x00-\x09\x0b-\x1f\x7f]|\xc2[\x80-\x9f]", data)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as e:
        found.append(data[e.start:e.end])
    return found


def run_bytes(*args, cwd=None):
    return subprocess.run([BIN, *args], capture_output=True, timeout=120, cwd=cwd)


def test_a_scenario_name_with_c1_controls():
    r = run_bytes(b"--scenario", HOSTILE)
    assert r.returncode == 2
    assert not raw_controls(r.stdout + r.stderr), r.stderr
    assert b"\\xc2\\x9b31m" in r.stderr and b"\\x1b[31m" in r.stderr and b"\\xff" in r.stderr


HEADER = ("run_id,timestamp,host,gpu,driver,cuda_runtime,scenario,variant,params,iters,reps,"
          "metric,unit,better,median,mean,stddev,min,max,p05,p95,cv,flags\n").encode()


def test_compare_header_and_markdown(tmp_path):
    row = (b"RID" + HOSTILE + b",t,h,GPU" + HOSTILE +
           b",580,13.0,copy,h2d-pinned,bytes=64MiB,10,20,GBps,GB/s,higher,10,10,0.1,10,10,10,10,1,\n")
    a = tmp_path / ("base" + "\x1b[2J" + ".csv")
    b = tmp_path / "new.csv"
    a.write_bytes(HEADER + row)
    b.write_bytes(HEADER + row)
    md = tmp_path / "out.md"
    r = run_bytes(b"compare", bytes(a), bytes(b), b"--markdown", bytes(md))
    assert r.returncode == 0, r.stderr
    assert not raw_controls(r.stdout + r.stderr), r.stdout
    assert b"(GPUa\\x1b[31m\\xc2\\x9b31m" in r.stdout
    text = md.read_bytes()
    assert not raw_controls(text), text
    assert b"\\x1b[2J" in text


def test_audit_header_shows_the_command_escaped(tmp_path):
    r = run_bytes(b"audit", b"--", b"sh", b"-c", b"exit 0", HOSTILE)
    assert r.returncode == 0, r.stderr
    assert not raw_controls(r.stderr), r.stderr
    assert b"exit 0 a\\x1b[31m\\xc2\\x9b31m" in r.stderr


# --- the Python tools (issue 32 item 8): the same escaper, the same form --------------------

PLOT = ROOT / "plot" / "plot.py"
TIMELINE = ROOT / "plot" / "timeline.py"
# every kind of piece the C escaper has: C0 (\t, \n named), ESC, C1, DEL, bytes that are not
# UTF-8 (a lone 0xff; an encoded surrogate, which UTF-8 forbids), and a character kept as it is
NAME = HOSTILE + b"\t\n\xed\xa0\x80\xc3\xa9.csv"


def escaped_name_in(line: bytes, prog: bytes, suffix: bytes):
    assert line.startswith(prog + b": ") and line.endswith(suffix), line
    return line[len(prog) + 2:len(line) - len(suffix)]


def test_python_tools_escape_a_file_name_as_the_c_side_does(tmp_path):
    """A file name that is not there, given to compare, plot.py and timeline.py: each says it
    cannot open it, the name shown in one and the same escaped form."""
    missing = bytes(tmp_path) + b"/" + NAME
    c = run_bytes(b"compare", missing, missing)
    assert c.returncode == 2, c.stderr
    line = c.stderr.splitlines()[0]
    want = escaped_name_in(line, b"syncbench", b": cannot open: No such file or directory")
    assert b"\\x1b[31m\\xc2\\x9b31m\\xc2\\x9d0;title\\x07\\xff\\x7f\\t\\n\\xed\\xa0\\x80\xc3\xa9" \
           in want, want
    for tool, prog, out in ((PLOT, b"plot.py", tmp_path / "plots"),
                            (TIMELINE, b"timeline.py", tmp_path / "t.png")):
        r = subprocess.run([sys.executable, tool, missing, "-o", out], capture_output=True,
                           timeout=120)
        assert r.returncode == 2, r.stderr
        assert not raw_controls(r.stdout + r.stderr), r.stderr
        lines = r.stderr.splitlines()
        assert len(lines) == 1, r.stderr
        assert escaped_name_in(lines[0], prog, b": cannot open: No such file or directory") \
            == want


def test_python_tools_escape_an_output_name(tmp_path):
    """-o names with control characters: in the errors (plot.py's folder under a file,
    timeline.py's name not ending in .png) and on stdout (the paths written) escaped."""
    row = ("r,2026-11-24T00:00:00Z,h,GPU,580,13.0,readback,{},pending=spin,10,20,readback_us,"
           "us,lower,{},5,0,5,5,5,5,0,\n")
    (tmp_path / "run.csv").write_bytes(HEADER + (row.format("idle-pageable", 5) +
                                                 row.format("pending-pageable", 50)).encode())
    (tmp_path / "file").write_text("")
    shown = b"a\\x1b[31m\\xc2\\x9b31m\\xc2\\x9d0;title\\x07\\xff\\x7f"

    def tool(script, out):
        return subprocess.run([sys.executable, script, "run.csv", "-o", out],
                              capture_output=True, timeout=300, cwd=tmp_path)

    r = tool(PLOT, b"file/" + HOSTILE)
    assert r.returncode == 2, r.stderr
    assert not raw_controls(r.stderr), r.stderr
    assert b"file/" + shown + b": cannot create the folder" in r.stderr, r.stderr
    r = tool(TIMELINE, HOSTILE)
    assert r.returncode == 2, r.stderr
    assert not raw_controls(r.stderr), r.stderr
    assert b"-o '" + shown[:30] in r.stderr, r.stderr  # clipped to 40 characters, not raw
    assert b"': the output name must end in .png" in r.stderr, r.stderr
    r = tool(PLOT, HOSTILE)
    assert r.returncode == 0, r.stderr
    assert not raw_controls(r.stdout + r.stderr), r.stdout
    assert r.stdout == shown + b"/readback.png\n"
    assert os.listdir(tmp_path / os.fsdecode(HOSTILE)) == ["readback.png"]
