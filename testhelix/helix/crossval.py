"""Peer cross validation evidence: the cross-execution matrix, witnesses and independent review.

A witness for a suite is a locally qualified repair of ANOTHER pair (distinct lineage) whose source
digest differs from the suite owner's own repair; repairs with the same digest count once. The
reviewer never sees a repair: it gets the task, the original source, the tests and bounded
execution symptoms (which peer programs the suite passed or failed, by anonymous label, and the
failing test names).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NotRequired, TypedDict

from testhelix.agent.budget import BudgetExhausted, DeadlineExceeded
from testhelix.agent.calls import review_suite
from testhelix.core.digest import tree_sha256
from testhelix.helix.context import HelixContext
from testhelix.helix.pairs import Pair, for_each_pair
from testhelix.strategy.skills import reviewer_skills

MAX_SYMPTOM_CHARS = 1500
_FAILED = re.compile(r"(?:FAILED|ERROR) [^\s:]*::(test_\w+)")


class Counterexample(TypedDict):
    """A peer repair the pair's suite rejects (or the reviewer's objection), as the corrective
    feedback prompt prints it."""

    peer: str                      # "peer repair 2", or "independent reviewer"
    status: str
    failing_tests: list[str]
    reasons: NotRequired[list[str]]   # the reviewer's reasons (its own entry only)


@dataclass
class Evidence:
    round: int
    # (suite owner, witness digest) -> status; witness digests map to the pair that produced them
    matrix: dict[tuple[int, str], str] = field(default_factory=dict)
    failing_tests: dict[tuple[int, str], tuple[str, ...]] = field(default_factory=dict)
    witnesses: dict[str, int] = field(default_factory=dict)

    def witnesses_for(self, pair: Pair) -> list[str]:
        return [d for d, owner in self.witnesses.items() if owner != pair.index and d != pair.repair_digest]

    def passed(self, pair: Pair) -> set[str]:
        return {d for d in self.witnesses_for(pair) if self.matrix.get((pair.index, d)) == "pass"}

    def support(self, pair: Pair) -> int:
        return len(self.passed(pair)) if pair.qualified else 0

    def counterexamples(self, pair: Pair) -> list[Counterexample]:
        """Peer repairs the suite rejects: evidence that a test may be wrong (or the peer is)."""
        return [{"peer": f"peer repair {self.witnesses[d] + 1}", "status": self.matrix[(pair.index, d)],
                 "failing_tests": list(self.failing_tests.get((pair.index, d), ()))}
                for d in self.witnesses_for(pair) if self.matrix.get((pair.index, d)) != "pass"]

    def reviewed_counterexamples(self, pair: Pair) -> list[Counterexample]:
        """The counterexamples the independent review confirmed: the reviewer asked for a revision
        and named, among its suspect tests, a test that failed on that peer repair. Only these may
        feed corrective feedback; the rest are as likely to show a wrong peer as a wrong test."""
        if pair.approved is not False or not pair.suspect_tests:
            return []
        suspects = set(pair.suspect_tests)
        confirmed: list[Counterexample] = []
        for c in self.counterexamples(pair):
            tests = [t for t in c["failing_tests"] if t in suspects]
            if tests:
                confirmed.append({**c, "failing_tests": tests})
        return confirmed


def cross_execute(ctx: HelixContext, pairs: list[Pair], round_index: int) -> Evidence:
    ev = Evidence(round=round_index)
    for p in pairs:
        if p.qualified and p.repair_digest not in ev.witnesses:
            ev.witnesses[p.repair_digest] = p.index
    if not ctx.config.cross_execution:
        return ev
    cells = [(p, digest) for p in pairs if p.workspace is not None for digest in ev.witnesses_for(p)]
    owners = {q.index: q for q in pairs}
    # one batched executor call: the pool runs every cell of the matrix in parallel
    outcomes = ctx.execute_many([(p.require_workspace().suite, owners[ev.witnesses[digest]].require_workspace().repair)
                                 for p, digest in cells])
    for (p, digest), out in zip(cells, outcomes):
        ev.matrix[(p.index, digest)] = out.status
        ev.failing_tests[(p.index, digest)] = tuple(dict.fromkeys(_FAILED.findall(out.output)))
    ctx.log("cross_execute", round=round_index, cells=len(ev.matrix),
            passing=sum(1 for s in ev.matrix.values() if s == "pass"))
    return ev


def review_pairs(ctx: HelixContext, pairs: list[Pair], ev: Evidence) -> None:
    """Independent semantic review of every suite not yet reviewed in its current form.

    A verdict belongs to the suite it judged (`Pair.reviewed_digest`): an unchanged suite keeps
    its verdict, so a later round cannot revoke an approval (not even by running out of budget);
    only a revised suite is reviewed afresh, and until that review succeeds it is not approved.
    """
    if not ctx.config.semantic_review:
        return
    original = _source(ctx.task.initial_dir)
    skills = reviewer_skills(ctx.library or {}, ctx.task.context)
    skills_text = "\n\n".join(f"## Skill: {s.name}\n{s.body}" for s in skills)

    def review(view: HelixContext, p: Pair) -> None:
        suite = p.require_workspace().suite
        digest = tree_sha256(suite)
        if digest == p.reviewed_digest:      # an approval (or rejection) stands until its suite changes
            return
        files = {f.name: f.read_text(errors="replace") for f in sorted(suite.glob("*.py"))}
        try:
            review = review_suite(view.model, view.budget, view.task, view.strategy, original, files,
                                  _symptoms(p, ev), skills_text, pair=p.index, round_index=ev.round)
        except (BudgetExhausted, DeadlineExceeded) as stop:   # provider failures propagate: task incomplete
            p.approved, p.suspect_tests = False, ()
            p.review_reasons = ("not reviewed: " + ("the inference budget is exhausted"
                                                    if isinstance(stop, BudgetExhausted) else "the time is up"),)
            return
        p.approved = review.verdict == "approve"
        p.review_reasons, p.suspect_tests = review.reasons, review.suspect_tests
        p.reviewed_digest = digest
        view.log("review", pair=p.index, round=ev.round, verdict=review.verdict, suspects=list(review.suspect_tests))

    # reviews are independent of each other: concurrent, each on an equal share of the budget
    for_each_pair(ctx, [p for p in pairs if p.workspace is not None and any(p.workspace.suite.glob("test_*.py"))],
                  review)


def review_merged_suite(ctx: HelixContext, best: Pair, suite: Path, ev: Evidence) -> bool:
    """A merged suite is a new suite, so it gets a fresh independent review like any revised one
    (the seed: revised suites undergo fresh execution and review). Symptoms are the best pair's.
    Running out of budget or time counts as not approved, as it does for a pair's suite."""
    files = {f.name: f.read_text(errors="replace") for f in sorted(suite.glob("*.py"))}
    skills = reviewer_skills(ctx.library or {}, ctx.task.context)
    try:
        review = review_suite(ctx.model, ctx.budget, ctx.task, ctx.strategy, _source(ctx.task.initial_dir), files,
                              _symptoms(best, ev), "\n\n".join(f"## Skill: {s.name}\n{s.body}" for s in skills),
                              pair=best.index, round_index=ev.round)
    except (BudgetExhausted, DeadlineExceeded):
        ctx.log("review", pair="merged", round=ev.round, verdict="not reviewed", suspects=[])
        return False
    ctx.log("review", pair="merged", round=ev.round, verdict=review.verdict, suspects=list(review.suspect_tests))
    return review.verdict == "approve"


def _symptoms(p: Pair, ev: Evidence) -> str:
    lines = [f"initial program: {'/'.join(p.initial_statuses) or 'not run'}"]
    for d in ev.witnesses_for(p):
        status = ev.matrix.get((p.index, d))
        if status is None:
            continue
        failing = ", ".join(ev.failing_tests.get((p.index, d), ())) or "-"
        lines.append(f"peer program {ev.witnesses[d] + 1}: {status} (failing tests: {failing})")
    return "\n".join(lines)[:MAX_SYMPTOM_CHARS]


def _source(root: Path) -> str:
    parts = [f"# file: {f.relative_to(root)}\n{f.read_text(errors='replace')}"
             for f in sorted(root.rglob("*.py")) if "__pycache__" not in f.parts]
    return "\n\n".join(parts)
