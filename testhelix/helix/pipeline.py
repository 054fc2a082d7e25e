"""TestHelix for one task (docs/design.md §3), in one screen:

plan K directions → develop K pairs (generation + self-correction; concurrently, each on an equal
share of the budget) → local qualification →
[peer cross validation rounds: cross execution, independent review, corrective feedback or a
differential challenge, revised suites re-executed and re-reviewed] → selection → one suite.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from testhelix.agent.budget import BudgetExhausted, DeadlineExceeded
from testhelix.agent.calls import FALLBACK_DIRECTIONS, plan_directions
from testhelix.helix.context import HelixContext
from testhelix.helix.crossval import Evidence, cross_execute, review_pairs
from testhelix.helix.detail import PairSummary
from testhelix.helix.pairs import Pair, develop, for_each_pair
from testhelix.helix.revise import revise
from testhelix.helix.selection import Submission, select


@dataclass(frozen=True)
class TaskRun:
    submission: Submission
    pairs: tuple[PairSummary, ...]
    # the task's log as `HelixContext.log` wrote it (each step its own fields; typed as `HelixEvent`
    # where it is stored, in the runner's SubmissionDetail)
    events: tuple[dict[str, Any], ...]


def run_task(ctx: HelixContext) -> TaskRun:
    pairs = [Pair(i, d) for i, d in enumerate(plan(ctx))]
    for_each_pair(ctx, pairs, develop)
    evidence: Evidence | None = None
    if ctx.config.peer_cross_validation and not ctx.config.random_submission:
        challenges = 0
        for round_index in range(1, ctx.strategy.rounds + 1):
            evidence = cross_execute(ctx, pairs, round_index)
            review_pairs(ctx, pairs, evidence)
            if round_index == ctx.strategy.rounds:
                break
            revised, challenges = revise(ctx, pairs, evidence, round_index, challenges)
            if not revised:
                break
    submission = select(ctx, pairs, evidence)
    ctx.log("submit", rule=submission.rule, pair=submission.pair, support=submission.support)
    return TaskRun(submission, tuple(p.summary() for p in pairs), tuple(ctx.events))


def plan(ctx: HelixContext) -> list[str]:
    """K distinct synthesis directions (one call; K = 1 needs no planning)."""
    k = ctx.config.pairs
    if k == 1:
        return ["reproduce the reported behaviour directly"]
    try:
        directions = list(plan_directions(ctx.model, ctx.budget, ctx.task, ctx.strategy, k, ctx.library).directions)
    except (BudgetExhausted, DeadlineExceeded):   # provider failures propagate: the task is incomplete
        directions = list(FALLBACK_DIRECTIONS[:k])
    ctx.log("plan", directions=directions)
    return directions
