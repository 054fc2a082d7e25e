"""Judged loss: a domain whose replies are judged acceptable or not instead of compared for equality.

Exact reply equality suits a key-value store; a text normaliser, a speech or a language task has
replies that differ without being wrong. Such a domain declares a `ReplyJudge`, implements its
`first_divergence` hook with `judged_first_divergence(judge, ...)` and states the judge in `loss`:
the loss of a case is ℓ(f; z) = 1 when some reply of the candidate is judged unacceptable against the reference's reply
for the same operation (or the candidate fails to execute, or answers more or fewer operations),
else 0. Everything downstream -- failures, counterexamples, regression tests, audits, population
risk, Γ_t -- reads that loss through the domain, so nothing else changes.

Two kinds of judge:

* `RubricJudge`: a deterministic function with its rubric text (the example domain gtdd/domains/
  textnorm uses one). ℓ is then a fixed function of (candidate, case).
* `ModelJudge`: a chat model asked for ACCEPT or REJECT under the rubric, through any metered call
  (`complete(request) -> Completion`, e.g. a Budget's). Its verdict for an (operation, expected,
  observed) triple is kept for the judge's lifetime, so within a run ℓ stays a fixed function.

What the audits guarantee (docs/gtdd.md, "Judged loss"): the acceptance bounds hold for the risk
under the declared judge, R_j(f) = mean ℓ_judge over the family's population, because the audit is a
uniform sample and ℓ_judge is fixed before it is drawn. They say nothing about how well the judge
agrees with a human's judgement: that is the judge's own error, to be measured separately.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from gtdd.domains.base import TraceResult
from testhelix.llm.base import CallTags, Completion, Message, ModelRequest


class ReplyJudge(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def rubric(self) -> str: ...

    def acceptable(self, expected: Any, observed: Any) -> bool: ...


def judged_first_divergence(judge: ReplyJudge, expected: TraceResult, got: TraceResult) -> int | None:
    """Index of the first reply the judge rejects, or where an execution failure or a different
    number of replies departs; None when every reply is acceptable."""
    for i, (e, g) in enumerate(zip(expected.replies, got.replies)):
        if not judge.acceptable(e, g):
            return i
    n_exp, n_got = len(expected.replies), len(got.replies)
    if n_exp != n_got or expected.error != got.error:
        return min(n_exp, n_got)
    return None


@dataclass(frozen=True)
class RubricJudge:
    name: str
    rubric: str
    check: Callable[[Any, Any], bool]

    def acceptable(self, expected: Any, observed: Any) -> bool:
        return bool(self.check(expected, observed))


JUDGE_SYSTEM = ("You judge one reply of a program against the reference reply under a rubric. "
                "Answer with exactly one word: ACCEPT or REJECT.")


@dataclass
class ModelJudge:
    """A model's verdict under the rubric; a reply that is neither word counts as REJECT."""

    name: str
    rubric: str
    complete: Callable[[ModelRequest], Completion]
    verdicts: dict[str, bool] = field(default_factory=dict)

    def acceptable(self, expected: Any, observed: Any) -> bool:
        key = json.dumps([expected, observed], sort_keys=True, default=str)
        if key not in self.verdicts:
            user = f"Rubric: {self.rubric}\n\nReference reply: {json.dumps(expected)}\nProgram reply: {json.dumps(observed)}"
            request = ModelRequest((Message("system", JUDGE_SYSTEM), Message("user", user)), max_output_tokens=8,
                                   settings=(("temperature", 0),), tags=CallTags(role="judge"))
            self.verdicts[key] = (self.complete(request).text or "").strip().upper().startswith("ACCEPT")
        return self.verdicts[key]
