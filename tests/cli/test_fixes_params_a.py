"""coalesce, log-every, graph, dynamic-shape and device-branch without a GPU: --list, the plans
they make (iterations, references) and every bad parameter (exit 2, one line, before any CUDA
call: the runs hide every GPU, so touching CUDA first would be exit 3)."""
import pytest

from conftest import run

NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}

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


@pytest.mark.parametrize("scenario,variant,reference", [
    ("coalesce", "stacked", "per-value"),
    ("log-every", "never", "every-step"),
    ("graph", "graph", "launches"),
    ("dynamic-shape", "fixed-shape", "count-readback"),
    ("device-branch", "device-select", "host-branch"),
])
def test_a_fix_runs_with_the_variant_it_saves_against(scenario, variant, reference):
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


BAD = [
    (["--scenario", "coalesce", "--set", "values=0"],
     "coalesce: --set values=0: out of range (1 to 4096)"),
    (["--scenario", "coalesce", "--set", "values=4097"], "--set values=4097: out of range"),
    (["--scenario", "coalesce", "--set", "work_us=-1"], "--set work_us=-1: out of range"),
    (["--scenario", "coalesce", "--set", "values=3.5"], "--set values=3.5: not an integer"),
    (["--scenario", "log-every", "--set", "every=0"],
     "log-every: --set every=0: out of range (1 to 1000000)"),
    (["--scenario", "log-every", "--set", "kernels=0"], "--set kernels=0: out of range"),
    (["--scenario", "log-every", "--set", "work_us=100001"], "--set work_us=100001: out of range"),
    (["--scenario", "graph", "--set", "kernels=0"],
     "graph: --set kernels=0: out of range (1 to 10000)"),
    (["--scenario", "graph", "--set", "kernels=10001"], "--set kernels=10001: out of range"),
    (["--scenario", "dynamic-shape", "--set", "n=0"],
     "dynamic-shape: --set n=0: out of range (1 to 268435456)"),
    (["--scenario", "dynamic-shape", "--set", "n=268435457"], "--set n=268435457: out of range"),
    (["--scenario", "dynamic-shape", "--set", "density=-1"],
     "--set density=-1: out of range (0 to 100)"),
    (["--scenario", "dynamic-shape", "--set", "density=101"],
     "--set density=101: out of range (0 to 100)"),
    (["--scenario", "dynamic-shape", "--set", "density=0.5"], "--set density=0.5: not an integer"),
    (["--scenario", "device-branch", "--set", "work_us=1000001"],
     "device-branch: --set work_us=1000001: out of range (0 to 1000000)"),
    (["--scenario", "device-branch", "--set", "every=2"],
     "--set every: unknown parameter for device-branch"),
    (["--scenario", "graph", "--variant", "graphs"], "unknown variant 'graphs'; did you mean"),
    (["--scenario", "log-every", "--variant", "every_n"], "did you mean 'every-n'?"),
    (["--scenario", "coalesce", "--variant", "async"], "unknown variant 'async'"),
]


@pytest.mark.parametrize("args,message", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_parameters_are_one_line_exit_2(args, message, tmp_path):
    r = run(*args, env=NO_GPU, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    lines = r.stderr.splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("syncbench: ")
    assert message in lines[0]
    assert r.stdout == ""
    assert list(tmp_path.iterdir()) == []


def test_bad_parameter_in_a_suite_names_its_line(tmp_path):
    ini = tmp_path / "fixes.ini"
    ini.write_text("[coalesce]\nvalues = 8\n\n[log-every]\nevery = 0\n")
    r = run("--config", ini, "--dry-run", env=NO_GPU)
    assert r.returncode == 2
    assert len(r.stderr.splitlines()) == 1, r.stderr
    assert f"{ini}:5" in r.stderr and "every=0: out of range" in r.stderr
