"""Review and feedback semantics of peer cross validation, with scripted single-call answers:
feedback uses only counterexamples the review confirmed; a verdict stands until its suite changes."""

from __future__ import annotations

import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import SimpleNamespace

from testhelix.agent.budget import BudgetExhausted
from testhelix.agent.tools import AgentWorkspace
from testhelix.helix.config import get_config
from testhelix.helix.crossval import Evidence, review_pairs
from testhelix.helix.pairs import Pair
from testhelix.helix.revise import _feedback_notes
from testhelix.llm.base import ModelRequest
from testhelix.strategy.model import Strategy


class ScriptedBudget:
    """Answers each metered call from a script (role -> text); records every request."""

    def __init__(self, answers: dict[str, str]):
        self.requests: list[ModelRequest] = []
        self.answers, self.exhausted = answers, False
        self.remaining = 10**6

    def complete(self, model, request):
        if self.exhausted:
            raise BudgetExhausted("scripted", 1000, 0)
        self.requests.append(request)
        return SimpleNamespace(text=self.answers[request.tags.role])

    def roles(self) -> list[str]:
        return [r.tags.role for r in self.requests]

    @contextmanager
    def shares(self, n: int):
        yield [self] * n            # one script for every pair: the order of calls is the pairs' order


@dataclass
class Ctx:
    """The parts of a HelixContext that review and feedback read (a dataclass, as pairs are given copies)."""

    task: object
    strategy: Strategy
    config: object
    model: object
    budget: ScriptedBudget
    library: dict
    events: list = field(default_factory=list)
    concurrent: bool = False

    def log(self, step: str, **data) -> None:
        self.events.append({"step": step, **data})


def make_ctx(tmp_path, budget):
    program = tmp_path / "program"
    program.mkdir(parents=True, exist_ok=True)
    (program / "mod.py").write_text("def f():\n    return 1\n")
    task = SimpleNamespace(id="t1", instruction="f returns the wrong value", context="general", packages=("mod",),
                           initial_dir=program)
    return Ctx(task=task, strategy=Strategy(), config=get_config("C"), model=None, budget=budget, library={})


def make_pair(tmp_path, index, tests=("test_a", "test_b")):
    ws = AgentWorkspace.create(tmp_path / f"pair{index}", tmp_path / "program")
    body = "\n\n".join(f"def {t}():\n    assert True" for t in tests)
    (ws.suite / "test_x.py").write_text(body + "\n")
    return Pair(index, f"direction {index}", workspace=ws, qualified=True, initial_statuses=("fail", "fail"),
                repair_statuses=("pass", "pass"), repair_digest=f"repair{index}")


def evidence(round_index, failing):
    """Pair 0's suite fails pair 1's repair with `failing` tests; pair 1's suite passes pair 0's."""
    ev = Evidence(round=round_index, witnesses={"repair0": 0, "repair1": 1})
    ev.matrix = {(0, "repair1"): "fail", (1, "repair0"): "pass"}
    ev.failing_tests = {(0, "repair1"): tuple(failing)}
    return ev


def review(verdict, suspects=()):
    return json.dumps({"verdict": verdict, "reasons": ["r"], "suspect_tests": list(suspects)})


def feedback_inputs(budget) -> list[list[dict]]:
    """The counterexamples each feedback call was given."""
    out = []
    for r in budget.requests:
        if r.tags.role == "feedback":
            body = r.messages[-1].content
            out.append(json.loads(body.split("## Reviewed counterexamples\n", 1)[1]))
    return out


def test_feedback_uses_only_review_confirmed_counterexamples(tmp_path):
    # The reviewer approves pair 0's suite: its counterexample (a failing test on a peer repair) is
    # not confirmed, so no feedback is asked for (it may be the peer's repair that is wrong).
    budget = ScriptedBudget({"review": review("approve"), "feedback": "fix it"})
    ctx = make_ctx(tmp_path / "approved", budget)
    pairs = [make_pair(tmp_path / "approved", 0), make_pair(tmp_path / "approved", 1)]
    review_pairs(ctx, pairs, evidence(1, ["test_a", "test_b"]))
    assert _feedback_notes(ctx, pairs, evidence(1, ["test_a", "test_b"]), 1) == {}
    assert "feedback" not in budget.roles()

    # The reviewer suspects test_b only: feedback carries the counterexample, narrowed to test_b.
    budget = ScriptedBudget({"review": review("revise", ["test_b"]), "feedback": "fix it"})
    ctx = make_ctx(tmp_path / "revise", budget)
    pairs = [make_pair(tmp_path / "revise", 0), make_pair(tmp_path / "revise", 1)]
    ev = evidence(1, ["test_a", "test_b"])
    review_pairs(ctx, pairs, ev)
    notes = _feedback_notes(ctx, pairs, ev, 1)
    assert set(notes) == {0, 1}                   # pair 1's suite was flagged too (no counterexample of its own)
    sent = feedback_inputs(budget)
    peer_items = [c for inputs in sent for c in inputs if c["peer"].startswith("peer repair")]
    assert peer_items == [{"peer": "peer repair 2", "status": "fail", "failing_tests": ["test_b"]}]


def test_an_approval_stands_until_its_suite_changes(tmp_path):
    budget = ScriptedBudget({"review": review("approve")})
    ctx = make_ctx(tmp_path, budget)
    pairs = [make_pair(tmp_path, 0), make_pair(tmp_path, 1)]
    review_pairs(ctx, pairs, evidence(1, ["test_a"]))
    assert [p.approved for p in pairs] == [True, True] and budget.roles() == ["review", "review"]
    # Round 2: nothing was revised, and the budget is gone: no review call, approvals stand.
    budget.exhausted = True
    review_pairs(ctx, pairs, evidence(2, ["test_a"]))
    assert [p.approved for p in pairs] == [True, True] and budget.roles() == ["review", "review"]
    # Pair 1's suite is revised: only it is reviewed afresh; with no budget it is no longer approved.
    (pairs[1].workspace.suite / "test_x.py").write_text("def test_c():\n    assert 1\n")
    review_pairs(ctx, pairs, evidence(3, ["test_a"]))
    assert [p.approved for p in pairs] == [True, False]
    budget.exhausted = False
    budget.answers["review"] = review("approve")
    review_pairs(ctx, pairs, evidence(4, ["test_a"]))
    assert budget.roles() == ["review", "review", "review"]
    assert [r.tags.pair for r in budget.requests] == [0, 1, 1] and pairs[1].approved is True
