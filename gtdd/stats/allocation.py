"""How an error budget alpha is split across audits (Theorems 4.10, 4.12 and 4.14).

Each audit gets an allocation epsilon and is sized so that q_{N,rho}(n) <= epsilon; the union bound
over audits then keeps the chance of any false acceptance at or below alpha.

* one candidate, one family: epsilon = alpha;
* joint repository acceptance over M trajectories x T rounds (Theorem 4.12): alpha / (M T), because
  a bad repository must pass the audit of one family already known to be bad;
* simultaneous family-wise conclusions over J families (Theorem 4.10): alpha / (M T J);
* an unbounded horizon (Theorem 4.14): alpha / (M t (t+1)) at round t, whose sum over t >= 1 is
  alpha / M (divide further by J for family-wise conclusions).
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from gtdd.stats import params
from gtdd.stats.params import Number


@dataclass(frozen=True)
class ErrorAllocation:
    """An error budget and the audit opportunities it must cover.

    `rounds=None` means an unbounded horizon. `families` > 1 asks for a conclusion about every
    family separately; leave it at 1 for joint acceptance of the whole repository.
    """

    alpha: Fraction
    trajectories: int = 1
    rounds: int | None = 1
    families: int = 1

    def __post_init__(self) -> None:
        object.__setattr__(self, "alpha", params.open_unit(self.alpha, "alpha"))
        params.count(self.trajectories, "trajectories", 1)
        params.count(self.families, "families", 1)
        if self.rounds is not None:
            params.count(self.rounds, "rounds", 1)

    @property
    def unbounded(self) -> bool:
        return self.rounds is None

    def per_audit(self, round_index: int = 1) -> Fraction:
        """epsilon for the audit in round `round_index` (1-based) of any trajectory."""
        params.count(round_index, "round", 1)
        share = self.alpha / (self.trajectories * self.families)
        if self.rounds is None:
            return share / (round_index * (round_index + 1))
        if round_index > self.rounds:
            raise ValueError(f"round {round_index} is past the horizon of {self.rounds} rounds")
        return share / self.rounds

    def opportunities(self) -> int | None:
        """How many audits share alpha (None for an unbounded horizon)."""
        if self.rounds is None:
            return None
        return self.trajectories * self.rounds * self.families


def one_candidate(alpha: Number) -> ErrorAllocation:
    return ErrorAllocation(params.open_unit(alpha, "alpha"))


def repository(alpha: Number, trajectories: int, rounds: int) -> ErrorAllocation:
    """Joint repository acceptance: alpha / (M T) per audit of every family."""
    return ErrorAllocation(params.open_unit(alpha, "alpha"), trajectories, rounds)


def family_wise(alpha: Number, trajectories: int, rounds: int, families: int) -> ErrorAllocation:
    """Simultaneous conclusions about every family: alpha / (M T J) per family audit."""
    return ErrorAllocation(params.open_unit(alpha, "alpha"), trajectories, rounds, families)


def unbounded(alpha: Number, trajectories: int = 1, families: int = 1) -> ErrorAllocation:
    """No fixed horizon: alpha / (M t (t+1)) at round t (and / J for family-wise conclusions)."""
    return ErrorAllocation(params.open_unit(alpha, "alpha"), trajectories, None, families)
