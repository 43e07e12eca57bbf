"""The pytest plugin's sync baseline on a real GPU (issue 46): tests that run
tests/audit/baseline_loop.py's training loop, its two threads and its generate() calls under
`@pytest.mark.no_syncs(baseline=FILE, range=..., skip_first=...)`, each step in
syncbench.step(NAME). A session with --syncbench-update-baseline writes each marker's file (per
step, the warm-up steps left out); a second session holds the same tests and their variants to
those files: the same loops pass; a new .item() fails, annotated at its line under GitHub
Actions; the loss read twice a step fails; the warm-up steps fail once counted; a thread's
step over its budget fails alone, the other thread's step passing; a new int(tensor) after
generate() fails. A third session with lines inserted above every sync passes. Skipped
without a GPU or torch (generate() without transformers)."""
import pytest

import baseline_gpu as h

pytestmark = h.needs()

GENERATE = h.has("transformers")

UPDATE = '''
import pytest
import baseline_loop


@pytest.mark.no_syncs(baseline="train.ini", range="train_step", skip_first=2)
def test_train():
    baseline_loop.run(["train", "--warm-syncs", "2"])


@pytest.mark.no_syncs(baseline="threads.ini", range="work", scope="process")
def test_threads():
    baseline_loop.run(["threads", "--reads-each", "1,3"])
'''

UPDATE_GENERATE = '''

@pytest.mark.no_syncs(baseline="gen.ini", range="generate", skip_first=1)
def test_generate():
    baseline_loop.run(["generate"])
'''

CHECK = '''
import pytest
import baseline_loop

TRAIN = ["train", "--warm-syncs", "2"]


@pytest.mark.no_syncs(baseline="train.ini")  # per step of train_step, skip_first 2: the file's
def test_train():
    baseline_loop.run(TRAIN)


@pytest.mark.no_syncs(baseline="train.ini")
def test_train_extra_item():
    baseline_loop.run(TRAIN + ["--extra-item"])


@pytest.mark.no_syncs(baseline="train.ini")
def test_train_loss_read_twice():
    baseline_loop.run(TRAIN + ["--reads", "2"])


@pytest.mark.no_syncs(baseline="train.ini", skip_first=0)
def test_train_warm_up_counted():
    baseline_loop.run(TRAIN)


@pytest.mark.no_syncs(baseline="threads.ini", scope="process")
def test_threads():
    baseline_loop.run(["threads", "--reads-each", "1,3"])


@pytest.mark.no_syncs(baseline="threads_tight.ini", scope="process")
def test_threads_tight():
    baseline_loop.run(["threads", "--reads-each", "1,3"])
'''

SHIFTED = '''
import pytest
import baseline_loop


@pytest.mark.no_syncs(baseline="train.ini")
def test_train():
    baseline_loop.run(["train", "--warm-syncs", "2"])
'''

CHECK_GENERATE = '''

@pytest.mark.no_syncs(baseline="gen.ini")
def test_generate():
    baseline_loop.run(["generate"])


@pytest.mark.no_syncs(baseline="gen.ini")
def test_generate_extra_item():
    baseline_loop.run(["generate", "--extra-item"])
'''

EXPECTED = {"test_train": "passed", "test_train_extra_item": "failed",
            "test_train_loss_read_twice": "failed", "test_train_warm_up_counted": "failed",
            "test_threads": "passed", "test_threads_tight": "failed"}
if GENERATE:
    EXPECTED.update(test_generate="passed", test_generate_extra_item="failed")


@pytest.fixture(scope="module")
def updated(tmp_path_factory):
    """The folder where a session with --syncbench-update-baseline wrote train.ini,
    threads.ini (and gen.ini): (folder, its process, {test: outcome})."""
    folder = tmp_path_factory.mktemp("plugin")
    h.place(folder)
    (folder / "test_upd.py").write_text(UPDATE + (UPDATE_GENERATE if GENERATE else ""))
    r, got = h.pytest_session(folder, "test_upd.py", "--syncbench-update-baseline")
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    return folder, r, got


@pytest.fixture(scope="module")
def checked(updated):
    """The second session, under GitHub Actions, held to those files (threads_tight.ini: the
    threads' site one call under its budget): (folder, its process, {test: (outcome, text)})."""
    folder = updated[0]
    cp = h.read_ini(folder / "threads.ini")
    name = h.site_at(cp, h.marks(folder / "baseline_loop.py")["thread"])
    cp[name]["budget"] = str(int(cp[name]["budget"]) - 1)
    h.write_ini(cp, folder / "threads_tight.ini")
    (folder / "test_chk.py").write_text(CHECK + (CHECK_GENERATE if GENERATE else ""))
    r, got = h.pytest_session(folder, "test_chk.py", github=True)
    return folder, r, got


def test_the_update_session_writes_each_markers_file(updated):
    folder, r, got = updated
    assert {k: v[0] for k, v in got.items()} == {k: "passed" for k in got} and got, got
    lines = h.marks(folder / "baseline_loop.py")
    cp = h.read_ini(folder / "train.ini")
    assert (cp["syncbench"]["per"], cp["syncbench"]["range"],
            cp["syncbench"]["skip_first"]) == ("step", "train_step", "2")
    loss = cp[h.site_at(cp, lines["loss"])]
    assert loss["file"] == "baseline_loop.py" and loss["function"] == "train", dict(loss)
    assert loss["text"].startswith("logged = loss.item()") and int(loss["budget"]) >= 1
    assert not [s for s in cp.sections() if cp[s].get("line") == str(lines["warm"])]
    assert f"syncbench: wrote the baseline {folder / 'train.ini'}" in r.stdout, r.stdout
    cp = h.read_ini(folder / "threads.ini")
    assert cp["syncbench"]["range"] == "work"
    reads = cp[h.site_at(cp, lines["thread"])]
    # the most calls of one step: worker-2's three reads, not the test's four
    assert int(reads["budget"]) >= 3 and not reads.get("thread"), dict(reads)
    if GENERATE:
        cp = h.read_ini(folder / "gen.ini")
        sites = [cp[s] for s in cp.sections() if s != "syncbench"]
        assert any(s["line"] == str(lines["gen"]) and "transformers/" in s["library_line"]
                   for s in sites), {s.name: dict(s) for s in sites}


def test_the_check_session_passes_the_same_and_fails_each_change(checked):
    folder, r, got = checked
    assert {k: v[0] for k, v in got.items()} == EXPECTED, r.stdout[-8000:]
    text = {k: v[1] for k, v in got.items()}
    extra = text["test_train_extra_item"]
    assert "6 steps of 'train_step' made host-blocking CUDA calls not allowed" in extra, extra
    assert "6 steps counted, the first 2 left out" in extra, extra
    assert "logged += loss.detach().abs().max().item()" in extra, extra
    assert "(not in the baseline: " in extra, extra
    twice = text["test_train_loss_read_twice"]
    assert "6 steps of 'train_step' made" in twice and "(over its budget: " in twice, twice
    warm = text["test_train_warm_up_counted"]
    assert "8 steps counted, the first 0 left out" in warm, warm
    assert "torch.cuda.synchronize()  # SYNC:warm" in warm, warm
    # worker-2's step over, worker-1's within: one step of two fails
    tight = text["test_threads_tight"]
    assert "1 step of 'work' made" in tight and "2 steps counted" in tight, tight
    if GENERATE:
        gen = text["test_generate_extra_item"]
        assert "int(out[0, -1])" in gen and "(not in the baseline: " in gen, gen


def test_the_new_item_is_annotated_at_its_line(checked):
    folder, r, _ = checked
    extra = h.marks(folder / "baseline_loop.py")["extra"]
    notes = [a for a in h.annotations(r) if "test_train_extra_item" in a]
    assert notes, r.stdout[-6000:]
    assert all(a.startswith(f"::error file=baseline_loop.py,line={extra},") for a in notes), notes


def test_lines_inserted_above_every_sync_pass(updated, tmp_path):
    folder = h.variant(updated[0], tmp_path, shift=3, files=("train.ini",))
    (folder / "test_shift.py").write_text(SHIFTED)
    r, got = h.pytest_session(folder, "test_shift.py")
    assert {k: v[0] for k, v in got.items()} == {"test_train": "passed"}, r.stdout[-6000:]
