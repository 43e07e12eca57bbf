"""coalesce, log-every, graph, dynamic-shape and device-branch without a GPU: --list, the plans
they make (iterations, references) and a bad parameter in a suite. Their bad parameters on the
command line are in test_cli.py's table (exit 2, one line, before any CUDA call: the runs hide
every GPU, so touching CUDA first would be exit 3)."""
import pytest

from conftest import NO_GPU, run

SCENARIOS = {
    "coalesce": (["per-value", "stacked"], ["values", "work_us"]),
    "log-every": (["every-step", "every-n", "never"], ["every", "kernels", "work_us"]),
    "graph": (["launches", "graph"], ["kernels", "work_us"]),
    "dynamic-shape": (["count-readback", "fixed-shape"], ["n", "density"]),
    "device-branch": (["host-branch", "device-select"], ["work_us"]),
}


def plan(*args):
    """[(scenario, variant, params, iters)] of a --dry-run."""
    r = run(*args, "--dry-run", env=NO_GPU)
    assert r.returncode == 0, r.stderr
    rows = []
    for line in r.stdout.splitlines()[1:]:
        _, scenario, variant, params, iters = line.split()
        assert iters.startswith("iters=")
        rows.append((scenario, variant, params, int(iters[len("iters="):])))
    return rows


def test_list_shows_the_fixes():
    out = run("--list", env=NO_GPU).stdout
    for scenario, (variants, params) in SCENARIOS.items():
        block = out.split(f"\n{scenario}\n", 1)[1].split("\n\n", 1)[0]
        for word in variants + params + ["step_us", "saving_us", "saving_pct",
                                         "syncs_per_step"]:
            assert word in block, (scenario, word)
    assert "launch_us" in out.split("\ngraph\n", 1)[1].split("\n\n", 1)[0]


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_default_plan_pairs_every_fix_with_the_syncing_way(scenario):
    variants, _ = SCENARIOS[scenario]
    rows = plan("--scenario", scenario)
    assert [r[1] for r in rows] == variants
    assert len({r[3] for r in rows}) == 1  # the same steps for every variant


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_a_fix_runs_with_the_variant_it_saves_against(scenario):
    variants, _ = SCENARIOS[scenario]
    reference, variant = variants[0], variants[-1]  # the syncing way, and the last fix
    rows = plan("--scenario", scenario, "--variant", variant)
    assert [r[1] for r in rows] == [reference, variant]


def test_default_iterations():
    iters = {r[0]: r[3] for r in plan("--scenario", ",".join(SCENARIOS))}
    assert iters == {"coalesce": 61, "log-every": 200, "graph": 42, "dynamic-shape": 85,
                     "device-branch": 120}


def test_iterations_follow_the_parameters():
    # K readbacks per step: fewer steps for more values, at least one
    assert plan("--scenario", "coalesce", "--set", "values=4096")[0][3] == 1
    assert plan("--scenario", "coalesce", "--set", "values=8")[0][3] == 33
    # log-every: whole intervals of `every` steps, two at least, unless `every` is far longer
    # than a repetition
    rows = plan("--scenario", "log-every", "--variant", "every-n", "--set",
                "every=1,7,100,1000000")
    got = {r[2].split(";")[0]: r[3] for r in rows}
    assert got == {"every=1": 60, "every=7": 63, "every=100": 200, "every=1000000": 60}
    assert plan("--scenario", "dynamic-shape", "--set", "n=268435456")[0][3] == 2  # ~1.4 ms a step
    assert plan("--scenario", "graph", "--set", "kernels=10000")[0][3] == 1
    assert plan("--scenario", "device-branch", "--set", "work_us=1000000")[0][3] == 1


def test_iters_option_overrides():
    rows = plan("--scenario", "log-every", "--iters", "250")
    assert {r[3] for r in rows} == {250}


def test_bad_parameter_in_a_suite_names_its_line(tmp_path):
    ini = tmp_path / "fixes.ini"
    ini.write_text("[coalesce]\nvalues = 8\n\n[log-every]\nevery = 0\n")
    r = run("--config", ini, "--dry-run", env=NO_GPU)
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert f"{ini}:5" in r.stderr and "every=0: out of range" in r.stderr
