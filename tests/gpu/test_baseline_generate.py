"""The sync baseline on transformers' generate() (issue 46): a GPT-2 built from a config (random
weights, nothing downloaded), 4 greedy generate() calls of 8 new tokens, each a step
(tests/audit/baseline_loop.py's generate mode). `syncbench audit --update-baseline` writes the
file (the first call left out: warm-up); the run that wrote it and a second run pass; a new
int(tensor) after the call fails, annotated at its line; 16 tokens a call instead of 8 put the
per-token syncs inside generate() over their budgets, at the user's generate() line. Skipped
without a GPU, torch or transformers."""
import pytest

import baseline_gpu as h

pytestmark = h.needs("transformers")

STEPS = 4
GEN = ("generate", "--steps", STEPS, "--new-tokens", 8)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    folder = tmp_path_factory.mktemp("generate")
    h.place(folder)
    r, report = h.audit(folder, "--range", "generate", "--skip-first", 1, "--update-baseline",
                        "syncs.ini", "--keep", "r1", prog=GEN, name="update")
    assert r.returncode == 0, h.detail(r, report)
    return folder


def test_the_written_baseline_passes_its_run_and_a_second_one(base):
    gen = h.marks(base / "baseline_loop.py")["gen"]
    cp = h.read_ini(base / "syncs.ini")
    sites = [cp[s] for s in cp.sections() if s != "syncbench"]
    # generate()'s own syncs, each at the user's line, made inside transformers
    inside = [s for s in sites if s["line"] == str(gen) and "transformers/" in s["library_line"]]
    assert inside, {s.name: dict(s) for s in sites}
    r, report = h.audit(base, "--from", "r1", "--baseline", "syncs.ini", name="again")
    assert r.returncode == 0, h.detail(r, report)
    assert report["baseline"]["steps"] == STEPS - 1, report["baseline"]
    r, report = h.audit(base, "--baseline", "syncs.ini", prog=GEN, name="second")
    assert r.returncode == 0, h.detail(r, report)
    b = report["baseline"]
    assert b["passed"] and b["new"] == [] and b["over_budget"] == [], b
    assert b["syncs_per_step"]["now"] == b["syncs_per_step"]["base"] > 0, b


def test_a_new_scalar_read_fails_annotated_at_its_line(base, tmp_path):
    folder = h.variant(base, tmp_path)
    r, report = h.audit(folder, "--baseline", "syncs.ini", prog=(*GEN, "--extra-item"),
                        github=True)
    assert r.returncode == 1, h.detail(r, report)
    extra = h.marks(folder / "baseline_loop.py")["gen_extra"]
    b = report["baseline"]
    assert h.lines_of(b["new"]) == {extra} and b["over_budget"] == [], h.detail(r, report)
    notes = h.annotations(r)
    assert len(notes) == 1 and notes[0].startswith(
        f"::error file=baseline_loop.py,line={extra},"), r.stdout


def test_more_tokens_a_call_are_over_the_budgets_of_generates_line(base, tmp_path):
    folder = h.variant(base, tmp_path)
    r, report = h.audit(folder, "--baseline", "syncs.ini",
                        prog=("generate", "--steps", STEPS, "--new-tokens", 16))
    assert r.returncode == 1, h.detail(r, report)
    b = report["baseline"]
    gen = h.marks(folder / "baseline_loop.py")["gen"]
    assert h.lines_of(b["over_budget"]) == {gen}, h.detail(r, report)
    assert all(s["now_per_step"] > s["budget"] for s in b["over_budget"]), b["over_budget"]
    assert any("transformers/" in s["library_line"] for s in b["over_budget"]), b["over_budget"]
