"""A merged suite is a new suite: with review on it is reviewed afresh before it can be submitted."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

from testhelix.helix.config import get_config
from testhelix.helix.selection import _try_merge
from tests.helix.test_review_feedback import Ctx, ScriptedBudget, evidence, make_ctx, make_pair, review


@dataclass
class MergeCtx(Ctx):
    work_dir: Path = Path(".")

    def execute(self, suite, program, repetition=0):
        # the merged suite fails the best pair's initial program and passes every witness repair
        return SimpleNamespace(status="fail" if program.name == "program" else "pass")


def merge_with(tmp_path, verdict, config="C"):
    budget = ScriptedBudget({"review": review(verdict)})
    base = make_ctx(tmp_path, budget)
    ctx = MergeCtx(**{**base.__dict__, "config": get_config(config)}, work_dir=tmp_path / "work")
    pairs = [make_pair(tmp_path, i) for i in range(3)]
    ev = evidence(1, [])
    ev.witnesses = {"repair0": 0, "repair1": 1, "repair2": 2}
    ev.matrix = {(0, "repair2"): "pass", (1, "repair2"): "pass"}  # pairs 0 and 1 share the witness repair2
    for p in pairs:
        p.approved = True
    # MergeCtx holds only the parts of a HelixContext that merging and its review read
    return _try_merge(ctx, pairs[0], pairs[:2], ev, {p.index: p for p in pairs}), budget, ctx  # type: ignore[arg-type]


def test_a_merged_suite_is_submitted_only_after_its_own_review_approves_it(tmp_path):
    approved, budget, ctx = merge_with(tmp_path / "a", "approve")
    assert approved is not None and approved.rule == "merged" and budget.roles() == ["review"]
    assert any(e["step"] == "review" and e["pair"] == "merged" for e in ctx.events)
    # the reviewer saw the merged files (both pairs' tests), not one pair's suite
    assert "test_x_p1.py" in budget.requests[0].messages[-1].content
    rejected, budget, _ = merge_with(tmp_path / "r", "revise")
    assert rejected is None and budget.roles() == ["review"]  # the best suite is submitted instead
