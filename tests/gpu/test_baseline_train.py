"""The sync baseline on a real training loop (issue 46): `syncbench audit --update-baseline` on
tests/audit/baseline_loop.py's train mode (an MLP, AdamW, autocast float16 with a GradScaler,
a DataLoader's pageable batches; 8 steps, the first 2 with a torch.cuda.synchronize() of
warm-up), then `--baseline` on that run's records and on other runs: the run that wrote it and
a second one pass; a new .item() fails, annotated at its line; the same loop with lines
inserted above the syncs passes (its sites moved); the loss read twice a step fails (over its
budget); the warm-up steps are left out by skip_first and fail when counted. Counts and lines
only, no timing. Skipped without a GPU or torch."""
import pytest

import baseline_gpu as h

pytestmark = h.needs()

STEPS = 8
TRAIN = ("train", "--steps", STEPS, "--warm-syncs", 2)


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """The folder of the run that wrote syncs.ini (--range train_step --skip-first 2), its
    records kept in r1/: (folder, its process, its report)."""
    folder = tmp_path_factory.mktemp("train")
    h.place(folder)
    r, report = h.audit(folder, "--range", "train_step", "--skip-first", 2, "--update-baseline",
                        "syncs.ini", "--keep", "r1", prog=TRAIN, name="update")
    assert r.returncode == 0, h.detail(r, report)
    assert (folder / "syncs.ini").exists(), h.detail(r, report)
    return folder, r, report


def test_the_written_baseline_passes_its_run_and_a_second_one(base):
    folder, r, _ = base
    lines = h.marks(folder / "baseline_loop.py")
    cp = h.read_ini(folder / "syncs.ini")
    head = cp["syncbench"]
    assert (head["per"], head["range"], head["skip_first"]) == ("step", "train_step", "2")
    loss = cp[h.site_at(cp, lines["loss"])]
    assert loss["budget"] == str(int(loss["budget"])) and int(loss["budget"]) >= 1, dict(loss)
    assert loss["function"] == "train" and loss["text"].startswith("logged = loss.item()")
    assert loss["file"] == "baseline_loop.py", dict(loss)
    # the warm-up's synchronize() is in steps 0 and 1 only: left out, no site
    assert not [s for s in cp.sections() if cp[s].get("line") == str(lines["warm"])]
    # the run that wrote it, judged again from its records
    r, report = h.audit(folder, "--from", "r1", "--baseline", "syncs.ini", name="again")
    assert r.returncode == 0, h.detail(r, report)
    b = report["baseline"]
    assert b["passed"] and b["new"] == [] and b["over_budget"] == [] and b["gone"] == [], b
    assert b["steps"] == STEPS - 2, b
    # a second run of the same loop
    r, report = h.audit(folder, "--baseline", "syncs.ini", prog=TRAIN, name="second")
    assert r.returncode == 0, h.detail(r, report)
    b = report["baseline"]
    assert b["passed"] and b["steps"] == STEPS - 2, b
    assert b["syncs_per_step"]["now"] == b["syncs_per_step"]["base"] > 0, b


def test_a_new_item_fails_annotated_at_its_line(base, tmp_path):
    folder = h.variant(base[0], tmp_path)
    r, report = h.audit(folder, "--baseline", "syncs.ini", "--junit", "j.xml",
                        prog=(*TRAIN, "--extra-item"), github=True)
    assert r.returncode == 1, h.detail(r, report)
    extra = h.marks(folder / "baseline_loop.py")["extra"]
    b = report["baseline"]
    assert not b["passed"] and h.lines_of(b["new"]) == {extra}, h.detail(r, report)
    assert b["new"][0]["text"].startswith("logged += loss.detach().abs().max().item()"), b
    assert b["over_budget"] == [] and b["changed"] == [], b
    notes = h.annotations(r)
    assert len(notes) == 1, r.stdout
    assert notes[0].startswith(f"::error file=baseline_loop.py,line={extra},"), notes
    assert "baseline: new site, not in" in notes[0], notes
    assert f"baseline_loop.py:{extra}" in (folder / "j.xml").read_text()


def test_lines_inserted_above_the_syncs_pass_as_moved(base, tmp_path):
    folder = h.variant(base[0], tmp_path, shift=3)
    r, report = h.audit(folder, "--baseline", "syncs.ini", prog=TRAIN)
    assert r.returncode == 0, h.detail(r, report)
    b = report["baseline"]
    moved = {(s["base_line"], s["line"]) for s in b["moved"]}
    loss = h.marks(base[0] / "baseline_loop.py")["loss"]
    assert (loss, loss + 3) in moved, b["moved"]
    assert all(now == was + 3 for was, now in moved), moved
    assert b["new"] == [] and b["changed"] == [] and b["gone"] == [], b


def test_the_loss_read_twice_a_step_is_over_its_budget(base, tmp_path):
    folder = h.variant(base[0], tmp_path)
    r, report = h.audit(folder, "--baseline", "syncs.ini", prog=(*TRAIN, "--reads", 2))
    assert r.returncode == 1, h.detail(r, report)
    b = report["baseline"]
    loss = h.marks(folder / "baseline_loop.py")["loss"]
    assert h.lines_of(b["over_budget"]) == {loss} and b["new"] == [], h.detail(r, report)
    (over,) = b["over_budget"]
    assert over["now_per_step"] == 2 * over["budget"], over
    assert b["syncs_per_step"]["now"] > b["syncs_per_step"]["base"], b


def test_the_warm_up_steps_are_left_out(base):
    folder = base[0]
    warm = h.marks(folder / "baseline_loop.py")["warm"]
    # the file's skip_first (2) left them out above; counted from step 0 they are new
    r, report = h.audit(folder, "--from", "r1", "--baseline", "syncs.ini", "--skip-first", 0,
                        name="warm")
    assert r.returncode == 1, h.detail(r, report)
    b = report["baseline"]
    assert warm in h.lines_of(b["new"]) and b["steps"] == STEPS, h.detail(r, report)
    (site,) = [s for s in b["new"] if s["line"] == warm]
    assert site["text"].startswith("torch.cuda.synchronize()"), site
