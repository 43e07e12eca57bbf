"""Nothing from outside reaches the terminal raw (issue 19 item 4): names typed on the command
line, a CSV's gpu and run_id and file names in compare's table and Markdown, the audited
command line in the audit's header. C0 controls, DEL, C1 controls (ESC's 8-bit twins, which
terminals obey) and bytes that are not UTF-8 come out as \\xNN escapes."""
import re
import subprocess

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
