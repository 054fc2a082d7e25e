"""The simulated models decide only from public material, and strategy text changes their decisions
exactly as the cue vocabulary (testhelix/llm/sim/cues.py) says."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from testhelix.agent.prompts import PublicTask, review_messages, session_messages
from testhelix.llm.base import CallTags, Message, ModelRequest
from testhelix.llm.registry import create_model, model_ref
from testhelix.llm.sim.agent import SUITE_FILE, SimAgentPolicy
from testhelix.llm.sim.bank import BankTest, SimBank, bank_for, incidental_reasons
from testhelix.llm.sim.draws import Draws
from testhelix.llm.sim.model import infer_role, request_seed
from testhelix.llm.sim.profiles import get_profile
from testhelix.strategy.model import Strategy, initial_strategy
from testhelix.tasks.task import load_task

SIM_TASK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01"


@pytest.fixture(scope="module")
def task():
    return load_task(SIM_TASK)


def _strategy(**fields) -> Strategy:
    return Strategy.model_validate(initial_strategy().model_dump(mode="json") | fields)


def _first_suites(task, strategy: Strategy, profile: str = "weak", n: int = 300) -> list[list[str]]:
    """The suite a fresh generation session writes first, for n seeds (no execution needed)."""
    bank = bank_for(task)
    prof = get_profile(profile)
    policy = SimAgentPolicy(prof.__class__(**{**prof.__dict__, "step_efficiency": 1.0, "malformed_rate": 0.0}),
                            bank, task.context, ("chunker/__init__.py",))
    msgs = tuple(session_messages(strategy, PublicTask.of(task), phase="generation", direction="d"))
    out = []
    for seed in range(n):
        _, calls = policy.decide(ModelRequest(msgs), "generation", Draws((seed, task.id, "generation", "d", "", 0)))
        suite = next(c.arguments["content"] for c in calls if c.arguments is not None and c.arguments["path"] == SUITE_FILE)
        out.append(re.findall(r"^def (test_\w+)\(", suite, re.M))
    return out


def _bank_test(bank: SimBank, name: str) -> BankTest:
    found = bank.test(name)
    assert found is not None, f"{name} is not in the bank"
    return found


def test_bank_labels_come_from_the_initial_program_and_own_repairs(task):
    bank = bank_for(task)
    data = json.loads((SIM_TASK / "bank" / "bank.json").read_text())
    assert {r["id"] for r in data["repairs"]} == {"r1", "r2", "r3"}          # neutral names only
    assert all(set(t) == {"name", "source", "fails_initial", "passes_repairs", "label"} for t in data["tests"])
    assert "correct" not in json.dumps(data["repairs"]) and "kind" not in data["tests"][0]
    # the fixture's chunks([1, 2, 3, 4, 5], 2) report: the test of the reported call reproduces it
    assert bank.role("test_keeps_last_partial_chunk") == "reproduces"
    assert bank.role("test_clamp_wrong_expectation") == "suspect"            # fails everywhere
    assert bank.role("test_clamp_inside_range") == "guard"
    assert incidental_reasons(_bank_test(bank, "test_size_error_message").source) == ["matches the text of an error message"]


def test_role_and_randomness_come_from_the_messages_not_the_tags(task):
    msgs = tuple(session_messages(initial_strategy(), PublicTask.of(task), phase="generation", direction="d"))
    assert infer_role(msgs) == "generation"
    repair = tuple(session_messages(initial_strategy(), PublicTask.of(task), phase="repair", direction="d"))
    assert infer_role(repair) == "repair"
    model = create_model(model_ref("sim:strong"), task=task, seed=3)
    a = model.complete(ModelRequest(msgs, tags=CallTags(role="generation", pair=0, round=0, step=0)))
    b = model.complete(ModelRequest(msgs, tags=CallTags(role="review", pair=2, round=5, step=9)))
    assert a == b
    # tool results (which carry run times) do not seed the randomness; own replies do
    with_tool = msgs + (Message("tool", "1 passed in 0.01s", tool_call_id="x"),)
    assert request_seed(3, with_tool) == request_seed(3, msgs)
    assert request_seed(3, msgs + (Message("assistant", "note"),)) != request_seed(3, msgs)


def test_reproduce_cue_raises_reproducing_first_picks(task):
    bank = bank_for(task)

    def share(strategy):
        suites = _first_suites(task, strategy)
        return sum(bank.role(s[0]) == "reproduces" for s in suites) / len(suites)

    plain = share(initial_strategy())
    cued = share(_strategy(guidance="Reproduce the bug report first."))
    assert 0.15 < plain < 0.40 and cued > plain + 0.06


def test_broaden_and_narrow_cues_change_suite_size(task):
    def sizes(s):
        return {len(x) for x in _first_suites(task, s, n=40)}

    assert sizes(initial_strategy()) == {3}
    assert sizes(_strategy(guidance="Add a regression test next to the fix.")) == {4}
    assert sizes(_strategy(guidance="Keep the suite minimal.")) == {2}


def test_narrow_avoids_and_messages_prefers_incidental_guards(task):
    bank = bank_for(task)

    def incidental(strategy):
        return sum(bool(_bank_test(bank, n).incidental) for s in _first_suites(task, strategy, profile="strong") for n in s[1:])

    plain = incidental(initial_strategy())
    assert incidental(_strategy(guidance="Assert only what the specification fixes.")) < plain
    assert incidental(_strategy(guidance="Check the exact error message of every failure.")) > plain


def test_reviewer_flags_from_evidence_it_can_see(task):
    model = create_model(model_ref("sim:strong"), task=task, seed=0)
    bank = bank_for(task)
    public = PublicTask.of(task)
    names = ["test_keeps_last_partial_chunk", "test_size_error_message", "test_clamp_wrong_expectation"]
    flagged = {n: 0 for n in names}
    for i in range(60):
        strat = _strategy(guidance=f"Attempt {i}.")
        msgs = review_messages(strat, public, "src", {"test_x.py": bank.suite_text(names)}, "initial program: fail")
        for n in json.loads(model.complete(ModelRequest(tuple(msgs))).text)["suspect_tests"]:
            flagged[n] += 1
    # evidence: a message match (text) and a test that fails on every own repair; none for the reproducing one
    assert flagged["test_size_error_message"] > 40 and flagged["test_clamp_wrong_expectation"] > 40
    assert flagged["test_keeps_last_partial_chunk"] < 10


# --- common random numbers (testhelix/llm/sim/draws.py) ---------------------------------------

def test_a_cue_free_edit_leaves_every_decision_unchanged(task):
    plain = _first_suites(task, initial_strategy())
    tidy = _strategy(guidance="Keep a tidy workspace and write clear test names.")
    assert _first_suites(task, tidy) == plain
    # a skill routed to a context this task does not have is no cue either
    other = next(c for c in ("visual", "cli", "framework") if c != task.context)
    assert _first_suites(task, _strategy(skillRoutes={other: ["boundary-values"]})) == plain


def test_a_cue_changes_only_what_the_cue_table_says(task):
    bank = bank_for(task)
    plain = _first_suites(task, initial_strategy())
    broad = _first_suites(task, _strategy(guidance="Add a regression test next to the fix."))
    assert all(len(b) == len(p) + 1 and b[:len(p)] == p for p, b in zip(plain, broad))   # one guard more
    narrow = _first_suites(task, _strategy(guidance="Keep the suite minimal."))
    assert all(len(n) == len(p) - 1 for p, n in zip(plain, narrow))
    cued = _first_suites(task, _strategy(guidance="Reproduce the bug report first."))
    kept = [(p, c) for p, c in zip(plain, cued) if bank.role(p[0]) == "reproduces"]
    assert kept and all(c[0] == p[0] for p, c in kept)          # a higher chance keeps every earlier success
    moved = [c for p, c in zip(plain, cued) if c[0] != p[0]]
    assert moved and all(bank.role(c[0]) == "reproduces" for c in moved)   # and adds only reproducing picks


def test_noise_is_drawn_per_evaluation(task):
    msgs = tuple(session_messages(initial_strategy(), PublicTask.of(task), phase="generation", direction="d"))

    def replies(name: str, seed: int) -> list:
        model = create_model(model_ref(name), task=task, seed=seed)
        return [model.complete(ModelRequest(msgs[:2] + (Message("user", f"variant {i}"),))).tool_calls
                for i in range(1)] + [model.complete(ModelRequest(msgs)).tool_calls]

    assert replies("sim:weak", 1) == replies("sim:weak", 2)            # no noise: the sampling seed is unused
    noisy = [replies("sim:weak?noise=1", s) for s in range(8)]
    assert noisy[0] == replies("sim:weak?noise=1", 0)                  # the same evaluation replays
    assert len({json.dumps([[c.raw_arguments for c in r] for r in x]) for x in noisy}) > 1
    assert replies("sim:weak?seed=5", 1) != replies("sim:weak", 1) or replies("sim:weak?seed=6", 1) != replies("sim:weak", 1)
