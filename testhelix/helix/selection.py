"""Choosing the one submitted suite.

- Configuration B: uniform random choice among locally qualified suites (seed fixed per run).
- Without peer cross validation (A): the qualified suite (the first, for K = 1 the only one).
- With it (C, D, E): eligible suites are locally qualified and, with review on, approved. The most
  witness support wins (ties: lower pair index). Compatible eligible suites that pass a common
  witness may merge, when the merged suite still fails the initial program, passes the witnesses
  they share and, with review on, is approved by a fresh review of its own (it is a new suite).
  With no common witness, the execution-positive fallback keeps an eligible suite.
"""

from __future__ import annotations

import random
import shutil
from dataclasses import dataclass
from pathlib import Path

from testhelix.helix.context import HelixContext
from testhelix.helix.crossval import Evidence, review_merged_suite
from testhelix.helix.pairs import Pair


@dataclass(frozen=True)
class Submission:
    suite_dir: Path | None
    pair: int | None
    rule: str               # random | only-qualified | witness-support | merged | fallback | none
    support: int = 0


def select(ctx: HelixContext, pairs: list[Pair], ev: Evidence | None) -> Submission:
    qualified = [p for p in pairs if p.qualified]
    if ctx.config.random_submission:
        if not qualified:
            return Submission(None, None, "none")
        chosen = random.Random(f"{ctx.config.seed}:{ctx.task.id}").choice(qualified)
        return Submission(chosen.require_workspace().suite, chosen.index, "random")
    if ev is None or not ctx.config.peer_cross_validation:
        return Submission(qualified[0].require_workspace().suite, qualified[0].index, "only-qualified") if qualified \
            else Submission(None, None, "none")
    eligible = [p for p in qualified if not ctx.config.semantic_review or p.approved]
    if not eligible:
        return Submission(None, None, "none")
    best = max(eligible, key=lambda p: (ev.support(p), -p.index))
    if ev.support(best) == 0:
        if ctx.config.execution_positive_fallback:
            return Submission(best.require_workspace().suite, best.index, "fallback")
        return Submission(None, None, "none")
    if ctx.config.merge_suites:
        merged = _try_merge(ctx, best, eligible, ev, {p.index: p for p in pairs})
        if merged is not None:
            return merged
    return Submission(best.require_workspace().suite, best.index, "witness-support", ev.support(best))


def _try_merge(ctx: HelixContext, best: Pair, eligible: list[Pair], ev: Evidence,
               by_index: dict[int, Pair]) -> Submission | None:
    partners = [p for p in eligible if p is not best and ev.passed(p) & ev.passed(best)]
    if not partners:
        return None
    shared = set.intersection(ev.passed(best), *(ev.passed(p) for p in partners))
    if not shared:
        return None
    merged = ctx.work_dir / "merged-suite"
    if merged.exists():
        shutil.rmtree(merged)
    merged.mkdir(parents=True)
    for p in [best, *partners]:
        for f in sorted(p.require_workspace().suite.glob("*.py")):
            name = f.name if f.name == "conftest.py" and p is best else f"{f.stem}_p{p.index}{f.suffix}"
            if f.name == "conftest.py" and p is not best:
                continue  # one conftest only: the best suite's
            shutil.copy2(f, merged / name)
    holds = all(ctx.execute(merged, best.require_workspace().program, i).status == "fail"
                for i in range(max(1, ctx.config.repetitions)))
    holds = holds and all(ctx.execute(merged, by_index[ev.witnesses[d]].require_workspace().repair).status == "pass"
                          for d in sorted(shared))
    ctx.log("merge", pairs=[best.index, *(p.index for p in partners)], holds=holds)
    if not holds:
        return None
    if ctx.config.semantic_review and not review_merged_suite(ctx, best, merged, ev):
        return None  # the best suite, approved on its own, is submitted instead
    return Submission(merged, best.index, "merged", len(shared))
