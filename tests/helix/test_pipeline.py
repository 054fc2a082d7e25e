"""TestHelix pipeline guarantees on the simulated fixture task (sim:* models are test doubles)."""

import json
import shutil
from pathlib import Path

import pytest

from testhelix.core.digest import tree_sha256
from testhelix.helix.config import CONFIGS, get_config
from testhelix.helix.runner import HelixRunner, default_model_factory
from testhelix.llm.registry import model_ref
from testhelix.llm.testing import FunctionModel
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Lesson, Strategy
from testhelix.tasks.task import load_task

SIM_TASK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01"


def runner(tmp_path, executor, factory=default_model_factory, coverage=False):
    return HelixRunner(RunStore(tmp_path / "run"), executor, tmp_path / "work", model_factory=factory,
                       coverage=coverage)


@pytest.mark.parametrize("name", ["A", "B", "C", "D", "E"])
def test_every_configuration_runs_and_is_scored_on_the_panel(tmp_path, executor, task, name):
    strategy = Strategy(lessons=(Lesson(id="l1", triggers=("chunk",), text="Test the boundary the report names."),)) \
        if name == "E" else Strategy()
    r = runner(tmp_path, executor)
    result = r.run_one(task, strategy, get_config(name), model_ref("sim:strong"), f"sim:strong/{name}")
    rows = r.store.task_outcomes(f"sim:strong/{name}")
    assert {row["program_id"] for row in rows} >= {"initial", "reference"}
    assert len(rows) == 1 + len(task.candidates)
    allowed = {"A": {"only-qualified", "none"}, "B": {"random", "none"}}.get(
        name, {"witness-support", "merged", "fallback", "none"})   # C, D, E: peer cross validation rules
    assert result.rule in allowed
    assert (result.rule == "none") == (result.detail.pair is None)
    detail = result.detail
    assert detail.simulated is True and len(detail.pairs) == CONFIGS[name].pairs


def test_budget_shared_across_pairs_never_exceeded_k5(tmp_path, executor, task):
    cap = 60_000
    r = runner(tmp_path, executor)
    r.run_one(task, Strategy(), get_config("D", token_cap=cap), model_ref("sim:strong"), "sim:strong/D")
    calls = r.store.model_calls("sim:strong/D")
    charged = sum((c["input_tokens"] or 0) + (c["output_tokens"] or 0) for c in calls)
    assert calls and charged <= cap
    assert {c["pair"] for c in calls if c["pair"] is not None} <= set(range(5))
    assert {c["role"] for c in calls} >= {"planning", "generation"}


def test_same_seed_same_results(tmp_path, executor, task):
    a = runner(tmp_path / "a", executor).run_one(task, Strategy(), get_config("C"), model_ref("sim:strong"), "x/C")
    b = runner(tmp_path / "b", executor).run_one(task, Strategy(), get_config("C"), model_ref("sim:strong"), "x/C")
    def strip(r):
        return {"metrics": r.metrics, "rule": r.rule, "pairs": r.detail.pairs}

    assert strip(a) == strip(b)


def test_disabled_features_never_reach_a_prompt(tmp_path, executor, task):
    for name in ("A", "B"):
        r = runner(tmp_path / name, executor)
        r.run_one(task, Strategy(), get_config(name), model_ref("sim:strong"), f"sim:strong/{name}")
        roles = {c["role"] for c in r.store.model_calls(f"sim:strong/{name}")}
        assert roles.isdisjoint({"review", "feedback", "challenge"}), roles


def test_configuration_b_picks_among_qualified_with_fixed_seed(tmp_path, executor, task):
    """Uniform choice among the locally qualified pairs only, seeded by the run seed and the task;
    no qualified pair submits nothing."""
    import random
    from dataclasses import replace

    from testhelix.agent.budget import Budget
    from testhelix.agent.tools import AgentWorkspace
    from testhelix.helix.context import HelixContext
    from testhelix.helix.pairs import Pair
    from testhelix.helix.selection import select

    def pairs(qualified):
        return [Pair(i, f"d{i}", workspace=AgentWorkspace(tmp_path / f"ws{i}"), qualified=i in qualified)
                for i in range(3)]

    no_model = FunctionModel(lambda request: AssertionError("selection calls no model"))

    def choose(task_id, qualified, seed=42):
        ctx = HelixContext(replace(task, id=task_id), Strategy(), get_config("B", seed=seed), no_model, Budget(1000),
                           executor, tmp_path / "work")
        return select(ctx, pairs(qualified), None)

    picks = {}
    for t in (f"task-{i}" for i in range(40)):
        sub = choose(t, {0, 2})
        assert sub.rule == "random" and sub.pair in (0, 2) and sub.suite_dir == tmp_path / f"ws{sub.pair}" / "suite"
        assert sub.pair == random.Random(f"42:{t}").choice([0, 2])       # the documented seeding
        assert choose(t, {0, 2}).pair == sub.pair                          # fixed for a task
        picks[t] = sub.pair
    assert set(picks.values()) == {0, 2}                                   # not always the first qualified
    assert any(choose(t, {0, 2}, seed=7).pair != p for t, p in picks.items())  # the seed matters
    none = choose("task-0", set())
    assert (none.rule, none.pair, none.suite_dir) == ("none", None, None)


def recording_model(inner, sink: list[str]) -> FunctionModel:
    """The inner model, keeping every request and completion text in `sink` (for the canary scan)."""
    def answer(request):
        for m in request.messages:
            sink.append(m.content)
            sink.extend(json.dumps(c.arguments) for c in m.tool_calls)
        completion = inner.complete(request)
        sink.append(completion.text)
        return completion

    return FunctionModel(answer, name=inner.name, context_window=inner.context_window)


def test_agents_never_see_hidden_material(tmp_path, executor, task):
    """Canary strings planted in the reference, every panel program and the trusted tests never
    appear in any prompt, tool output or model answer of a whole run."""
    copy = tmp_path / "task"
    shutil.copytree(SIM_TASK, copy)
    canaries = []
    for i, folder in enumerate([copy / "solution" / "program", copy / "tests",
                                *sorted(p for p in (copy / "panel").iterdir() if p.is_dir())]):
        canary = f"CANARY_{i}_7f3a9c"
        canaries.append(canary)
        target = next(folder.rglob("*.py"))
        target.write_text(target.read_text() + f"\n# {canary}\n")
    manifest = json.loads((copy / "panel" / "manifest.json").read_text())
    for c in manifest["candidates"]:
        c["sha256"] = tree_sha256(copy / c["artifact"])
    (copy / "panel" / "manifest.json").write_text(json.dumps(manifest))
    planted = load_task(copy)
    seen: list[str] = []
    def factory(name, t, seed):
        return recording_model(default_model_factory(name, t, seed), seen)

    r = runner(tmp_path, executor, factory)
    for name in ("C", "D"):
        r.run_one(planted, Strategy(), get_config(name), model_ref("sim:strong"), f"sim:strong/{name}")
    text = "\n".join(seen)
    assert len(seen) > 50
    for canary in canaries:
        assert canary not in text
    for traj in (tmp_path / "work").rglob("trajectory-*.json"):
        assert not any(c in traj.read_text() for c in canaries)


def test_internal_qualification_gives_no_credit(tmp_path, executor, task):
    """A suite that qualifies against its own repair still scores F=0 when the hidden reference
    disagrees: only the hidden evaluation scores."""
    copy = tmp_path / "task"
    shutil.copytree(SIM_TASK, copy)
    broken_reference = copy / "solution" / "program"
    for f in broken_reference.rglob("*.py"):
        f.write_text(f.read_text() + "\nraise ImportError('reference withdrawn for this test')\n")
    manifest = json.loads((copy / "panel" / "manifest.json").read_text())
    for c in manifest["candidates"]:
        c["sha256"] = tree_sha256(copy / c["artifact"])
    (copy / "panel" / "manifest.json").write_text(json.dumps(manifest))
    r = runner(tmp_path, executor)
    res = r.run_one(load_task(copy), Strategy(), get_config("A"), model_ref("sim:strong"), "sim:strong/A")
    assert any(p.qualified for p in res.detail.pairs)
    assert not res.metrics.indicators.F


def test_resume_skips_finished_tasks(tmp_path, executor, task):
    r = runner(tmp_path, executor)
    seen = []
    plans = [(model_ref("sim:strong"), get_config("A"), Strategy())]
    r.run([task], plans, lambda label, res: seen.append(res))
    r.run([task], plans, lambda label, res: seen.append(res))
    assert seen[0] is not None and seen[1] is None
