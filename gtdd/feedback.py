"""Feedback rules: which observed development failures reach the coder (docs/design.md §8).

Both rules pick at most k failures deterministically, from the same observed failures, with no
access to audits or population results. They are applied twice per round: once to the unreduced
failures to choose a reduction pool of 4k originals, and again to the reduced pool.

* standard: favour a requirement family not yet selected this round, then a failure mechanism not
  yet selected, then shorter traces, then the canonical id;
* compact: favour shorter traces, then fewer distinct operations, then families already reported
  in an earlier round, then the canonical id.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from gtdd.domains.base import Trace
from gtdd.execution import Failure
from testhelix.core.errors import UserError

POOL_FACTOR = 4  # the reduction pool holds 4k originals


@dataclass(frozen=True)
class ObservedFailure:
    """One observed failure as a feedback rule sees it."""

    trace: Trace
    failure: Failure

    @property
    def family(self) -> str:
        return self.failure.family

    @property
    def length(self) -> int:
        return len(self.trace.ops)

    @property
    def distinct_commands(self) -> int:
        return len({op["cmd"] for op in self.trace.ops})


class FeedbackRule(Protocol):
    name: str

    def select(self, candidates: Sequence[ObservedFailure], k: int,
               reported_families: frozenset[str]) -> list[ObservedFailure]: ...


class StandardRule:
    """Diversity first: a new family, else a new mechanism, else the shortest, else the lowest id."""

    name = "standard"

    def select(self, candidates: Sequence[ObservedFailure], k: int,
               reported_families: frozenset[str] = frozenset()  # noqa: ARG002 - the FeedbackRule protocol's signature
               ) -> list[ObservedFailure]:
        # Greedy because "not yet selected" changes with every pick; k is small (<= 4 * 6).
        remaining = sorted(candidates, key=lambda c: (c.length, c.trace.id))
        chosen: list[ObservedFailure] = []
        families: set[str] = set()
        mechanisms: set[str] = set()
        while remaining and len(chosen) < k:
            best = min(remaining, key=lambda c: (c.family in families,
                                                 c.failure.mechanism in mechanisms,
                                                 c.length, c.trace.id))
            remaining.remove(best)
            chosen.append(best)
            families.add(best.family)
            mechanisms.add(best.failure.mechanism)
        return chosen


class CompactRule:
    """Compact failures first: short, few distinct operations, families reported before."""

    name = "compact"

    def select(self, candidates: Sequence[ObservedFailure], k: int,
               reported_families: frozenset[str] = frozenset()) -> list[ObservedFailure]:
        ordered = sorted(candidates, key=lambda c: (c.length, c.distinct_commands,
                                                    c.family not in reported_families, c.trace.id))
        return ordered[:k]


RULES: dict[str, FeedbackRule] = {"standard": StandardRule(), "compact": CompactRule()}


def rule_named(name: str) -> FeedbackRule:
    try:
        return RULES[name]
    except KeyError:
        raise UserError(f"unknown feedback rule {name!r}; known: {', '.join(RULES)}") from None
