"""Issue 48: compare reads syncbench's JSON (item 4), --threshold takes 5% (item 5), short
options users guess and lists never cut (item 6), the dashboard exports (item 8)."""
import json

from conftest import BIN, NO_GPU, ROOT, run


def one_line(r, code, message):
    assert r.returncode == code, r.stdout + r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("syncbench: ")
    assert message in lines[0], lines[0]


# ---- item 6: -v is nobody's; -V is the version; lists are whole ----

def test_dash_v_is_not_variant():
    """`syncbench -v --dry-run` was "unknown variant '--dry-run'" with a list cut at 512."""
    one_line(run("-v", "--dry-run", env=NO_GPU), 2,
             "unknown option '-v' (--variant is spelled out; --version is -V)")


def test_dash_capital_v_is_the_version():
    for opt in ("-V", "--version"):
        r = run(opt, env=NO_GPU)
        assert r.returncode == 0, r.stderr
        assert r.stdout.startswith("syncbench "), r.stdout


def test_variant_list_is_never_cut():
    r = run("--variant", "zzzzzzzzzz", "--dry-run", env=NO_GPU)
    assert r.returncode == 2, r.stderr
    line = r.stderr.strip()
    assert "(one of: " in line and line.endswith(")"), line
    listed = line.split("(one of: ", 1)[1][:-1].split(", ")
    r = run("--list", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    # every variant of every scenario is in the message, the last one included
    for name in ("copy-p2p", "async", "sync-stream"):
        assert name in listed, listed
    assert len(line) > 512, len(line)
    assert len(listed) == len(set(listed))


def test_variant_still_spelled_out_works():
    r = run("--variant", "async", "--scenario", "small-gemm", "--dry-run", env=NO_GPU)
    assert r.returncode == 0, r.stderr


# ---- item 5: --threshold takes 5%; a bare number below 1 is refused ----

GATE = ROOT / "results" / "h100" / "gate"


def test_threshold_takes_a_percent_sign():
    a, b = GATE / "ci1.csv", GATE / "ci2.csv"
    plain = run("compare", a, b, "-q", "--threshold", "5", env=NO_GPU)
    sign = run("compare", a, b, "-q", "--threshold", "5%", env=NO_GPU)
    assert sign.returncode == plain.returncode, sign.stderr
    assert sign.stdout == plain.stdout
    assert "threshold 5 %" in sign.stdout


def test_a_bare_fraction_is_refused_with_the_hint():
    """--threshold 0.05 meant 0.05 % and turned two clean runs into 4 REGRESSION rows."""
    a, b = GATE / "ci1.csv", GATE / "ci2.csv"
    one_line(run("compare", a, b, "--threshold", "0.05", env=NO_GPU), 2,
             "compare: --threshold 0.05: ambiguous: a bare number is a percentage, and 0.05 "
             "reads as a fraction too; did you mean 5%? (write 0.05% for 0.05 %)")
    one_line(run("compare", a, b, "--threshold-for", "GBps=0.12", env=NO_GPU), 2,
             "did you mean 12%?")
    r = run("compare", a, b, "-q", "--threshold-for", "GBps=12%", env=NO_GPU)
    assert r.returncode in (0, 1), r.stderr


def test_compare_help_says_which():
    r = run("compare", "--help", env=NO_GPU)
    assert "5% or 5" in r.stdout and "between 0 and 1 is refused" in r.stdout, r.stdout
