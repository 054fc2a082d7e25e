"""Revision between rounds: corrective feedback from reviewed peer counterexamples, and the
differential challenge when distinct qualified repairs agree on every suite.

A revised pair runs a repair-phase session with the feedback, and its suite is qualified again; the
next round executes and reviews it afresh. Disabled features never reach a prompt.
"""

from __future__ import annotations

from testhelix.agent.budget import BudgetExhausted, DeadlineExceeded
from testhelix.agent.calls import corrective_feedback, differential_challenge
from testhelix.helix.context import HelixContext
from testhelix.helix.crossval import Evidence
from testhelix.helix.pairs import Pair, for_each_pair, qualify, run_session


def revise(ctx: HelixContext, pairs: list[Pair], ev: Evidence, round_index: int, challenges_used: int) -> tuple[bool, int]:
    """Revise what the evidence asks for; returns (anything revised, challenges used so far)."""
    notes = _feedback_notes(ctx, pairs, ev, round_index) if ctx.config.corrective_feedback else {}
    if not notes and _challenge_due(ctx, pairs, ev, challenges_used):
        text = _challenge(ctx, pairs, round_index)
        if text:
            notes = {p.index: f"Differential challenge: {text}" for p in pairs if p.workspace is not None}
            challenges_used += 1
    def repair(view: HelixContext, p: Pair) -> None:
        if view.budget.remaining > 0 and not view.time_is_up():
            run_session(view, p, "repair", round_index, notes[p.index])
            qualify(view, p)

    for_each_pair(ctx, [p for p in pairs if p.index in notes], repair)   # concurrent, equal budget shares
    return bool(notes), challenges_used


def _feedback_notes(ctx: HelixContext, pairs: list[Pair], ev: Evidence, round_index: int) -> dict[int, str]:
    notes = {}
    for p in pairs:
        if p.workspace is None:
            continue
        counterexamples = ev.reviewed_counterexamples(p)
        if p.approved is False and p.suspect_tests:
            counterexamples.append({"peer": "independent reviewer", "status": "revise",
                                    "failing_tests": list(p.suspect_tests), "reasons": list(p.review_reasons)[:3]})
        if not counterexamples and p.qualified:
            continue
        if not counterexamples:
            notes[p.index] = "Your suite does not qualify locally yet: " + ", ".join(p.initial_statuses or ("no run",))
            continue
        try:
            notes[p.index] = corrective_feedback(ctx.model, ctx.budget, ctx.task, counterexamples,
                                                 pair=p.index, round_index=round_index)
        except (BudgetExhausted, DeadlineExceeded):   # provider failures propagate: task incomplete
            break
    ctx.log("feedback", round=round_index, pairs=sorted(notes))
    return notes


def _challenge_due(ctx: HelixContext, pairs: list[Pair], ev: Evidence, used: int) -> bool:
    """Distinct qualified repairs all pass all suites, and every suite passed review."""
    if used >= ctx.config.challenge_steps or len(ev.witnesses) < 2:
        return False
    suites = [p for p in pairs if p.qualified]
    all_pass = all(ev.matrix.get((p.index, d)) == "pass" for p in suites for d in ev.witnesses_for(p))
    approved = all(p.approved is not False for p in suites)
    return bool(suites) and all_pass and approved


def _challenge(ctx: HelixContext, pairs: list[Pair], round_index: int) -> str:
    summary = "\n".join(f"suite {p.index + 1}: tests " + ", ".join(
        sorted(f.stem for f in p.workspace.suite.glob("test_*.py"))) for p in pairs if p.workspace is not None)
    try:
        text = differential_challenge(ctx.model, ctx.budget, ctx.task, summary, round_index=round_index)
    except (BudgetExhausted, DeadlineExceeded):
        return ""
    ctx.log("challenge", round=round_index)
    return text
