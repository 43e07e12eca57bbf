"""Two threads and two asyncio tasks counted apart (issue 46), on a real GPU with
tests/audit/baseline_loop.py: two threads each read a GPU value at one line, worker-1 once and
worker-2 three times, each in its own step "work"; `syncbench audit --baseline` holds each
thread to its own budget at that line (`thread = TID`), or every thread to one; two asyncio
tasks reading alternately on one thread count their own reads with
`syncbench.count_syncs(scope="task")`, and `no_syncs(allow=N, scope="task")` passes at a task's
own count while the other task reads, and fails one below. Skipped without a GPU or torch."""
import json

import baseline_gpu as h

pytestmark = h.needs()


def _tids(r):
    """{thread name: tid} the program printed."""
    line = next(x for x in r.stdout.splitlines() if x.startswith('{"tids"'))
    return json.loads(line)["tids"]


def test_two_threads_are_held_each_to_its_own_budget(tmp_path):
    h.place(tmp_path)
    r, report = h.audit(tmp_path, "--range", "work", "--update-baseline", "syncs.ini", "--keep",
                        "r1", prog=("threads", "--reads-each", "1,3"), name="update")
    assert r.returncode == 0, h.detail(r, report)
    tids = _tids(r)
    assert len(set(tids.values())) == 2, tids
    line = h.marks(tmp_path / "baseline_loop.py")["thread"]
    cp = h.read_ini(tmp_path / "syncs.ini")
    name = h.site_at(cp, line)
    assert not cp[name].get("thread"), dict(cp[name])  # written for every thread

    def gate(*budgets):
        """The run's records against the file with the site at the line split by thread:
        budgets [(thread name or "", budget)]."""
        out = h.read_ini(tmp_path / "syncs.ini")
        site = dict(out[name])
        out.remove_section(name)
        for k, (who, budget) in enumerate(budgets):
            sec = f"site.{900 + k}"
            out.add_section(sec)
            for key, value in site.items():
                out[sec][key] = value
            out[sec]["budget"] = str(budget)
            if who:
                out[sec]["thread"] = str(tids[who])
        h.write_ini(out, tmp_path / "split.ini")
        return h.audit(tmp_path, "--from", "r1", "--baseline", "split.ini", name="split")

    # each thread's calls at the line in its step, as the gate counts them: over budgets of 0
    r, report = gate(("worker-1", 0), ("worker-2", 0))
    assert r.returncode == 1, h.detail(r, report)
    now = {o["thread"]: o["now_per_step"] for o in report["baseline"]["over_budget"]}
    assert set(now) == {str(tids["worker-1"]), str(tids["worker-2"])}, report["baseline"]
    one, three = now[str(tids["worker-1"])], now[str(tids["worker-2"])]
    # one read and three: counted apart (together, in one step, they would be 4 reads' calls)
    assert 0 < one < three, now
    assert cp[name]["budget"] == str(three), dict(cp[name])  # the most of one step
    r, report = gate(("worker-1", one), ("worker-2", three))
    assert r.returncode == 0, h.detail(r, report)
    r, report = gate(("worker-1", three), ("worker-2", one))
    assert r.returncode == 1, h.detail(r, report)
    (over,) = report["baseline"]["over_budget"]
    assert over["thread"] == str(tids["worker-2"]) and over["now_per_step"] == three, over
    # a thread's own site takes its calls; the site of every thread takes the others'
    r, report = gate(("worker-2", three), ("", one))
    assert r.returncode == 0, h.detail(r, report)
    r, report = gate(("", one))
    assert r.returncode == 1, h.detail(r, report)
    (over,) = report["baseline"]["over_budget"]
    assert over["thread"] == "" and over["now_per_step"] == three, over


def test_two_asyncio_tasks_count_their_own_calls(tmp_path):
    h.place(tmp_path)
    r, out = h.program(tmp_path, "tasks", "--reads-each", "1,3")
    assert out is not None, r.stdout[-2000:] + r.stderr[-4000:]
    per = out["per_read"]
    assert per >= 1, out
    # each task's reads alone, while the other read between them; the thread saw both
    assert (out["task-1"], out["task-2"], out["thread"]) == (per, 3 * per, 4 * per), out
    assert (out["exact"], out["one_less"]) == ("passed", "failed"), out
