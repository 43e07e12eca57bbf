"""Syncs made inside a library (issue 35), on a real GPU: `syncbench audit` of
tests/audit/hf_lib_generate.py --warn (Hugging Face transformers' `model.generate()` of a small
GPT-2 built from a config, called 5 times from one line) lists every Python line torch's
`set_sync_debug_mode("warn")` names in the same run as the library line (`via`) of a row under
the script's generate() line (`--py-site user`, the default), each with an operation and a fix
that names the library. Lines only, no timing. Skipped without a GPU, torch or transformers."""
import json
import subprocess

import pytest

from conftest import ROOT, gpu_available, run, torch_python

SCRIPT = ROOT / "tests" / "audit" / "hf_lib_generate.py"
PY = torch_python() if gpu_available() else None
HF = PY is not None and subprocess.run([PY, "-c", "import transformers"],
                                       capture_output=True).returncode == 0

pytestmark = [pytest.mark.skipif(not gpu_available(), reason="no NVIDIA GPU on this machine"),
              pytest.mark.skipif(PY is None, reason="no torch with CUDA"),
              pytest.mark.skipif(not HF, reason="no transformers for the torch Python")]


def generate_line():
    """The line of the script that calls model.generate() (its `# GENERATE` marker)."""
    return next(i for i, text in enumerate(SCRIPT.read_text().splitlines(), 1)
                if "# GENERATE" in text)


def made_at(row, file, line):
    """Was the row's call made at (file, line): its library line, or its own line when the
    user's line made it itself?"""
    via = row.get("via") or {}
    py = row.get("python") or {}
    return (via.get("file"), via.get("line")) == (file, line) or \
        (not via and (py.get("file"), py.get("line")) == (file, line))


def test_every_warned_library_line_is_a_row_under_the_generate_line(tmp_path):
    keep, out = tmp_path / "recs", tmp_path / "audit.json"
    r = run("audit", "--keep", keep, "--json", out, "--", PY, SCRIPT, "--warn", cwd=ROOT,
            timeout=900)
    assert r.returncode == 0, r.stderr
    warned = json.loads(r.stdout.strip().splitlines()[-1])["warn_lines"]
    assert warned, "torch's warn mode named no line"
    report = json.loads(out.read_text())
    rows = [row for row in report["rows"] if row["group"] in ("explicit", "implicit")]
    line = generate_line()
    for file, wline in warned:
        matched = [row for row in rows if made_at(row, file, wline)]
        assert matched, (file, wline, sorted({(row["site"], (row.get("via") or {}).get("site"))
                                              for row in rows}))
        for row in matched:
            assert (row["python"]["file"], row["python"]["line"]) == (str(SCRIPT), line), row
            assert row["operation"] and "no rule knows" not in row["operation"], row
            assert row["via"], row  # a library's line, not the script's
            assert row["library"] and row["library"] in row["fix"], row
    # the table shows the library lines under the generate() line
    assert f"tests/audit/hf_lib_generate.py:{line} in main" in r.stderr, r.stderr
    assert "    via transformers/" in r.stderr, r.stderr
    # the records reread give the same rows (--from)
    again = tmp_path / "again.json"
    r = run("audit", "--from", keep, "--json", again, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr
    vias = sorted((row["site"], json.dumps(row["via"]), row["count"]) for row in rows)
    assert vias == sorted((row["site"], json.dumps(row["via"]), row["count"])
                          for row in json.loads(again.read_text())["rows"]
                          if row["group"] in ("explicit", "implicit"))
