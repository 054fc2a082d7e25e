"""Acceptance of a committed candidate (docs/design.md §8).

Evidence, in order: an intact snapshot, passing public tests, passing regression tests (when the
rule requires them) and a fresh audit of every requirement family. Each family audit is a uniform
sample without replacement from that family's population, drawn *after* commitment and testing
with randomness independent of everything before it, sized exactly with the statistics package
(`gtdd.stats.audit.audit_size_for`) for the rule's error allocation. A family passes when its sample
holds at most c failures.

The coder sees only the aggregate decision. The `AuditRecord` -- allocation, per-audit error,
randomness, sampled ids and per-family outcomes -- is private: it is stored for verification and
never reaches an agent.
"""

from __future__ import annotations

import hashlib
import random
import secrets
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from gtdd.domains.base import Trace
from gtdd.execution import Failure
from gtdd.rules import RULE_NAMES, Evidence
from gtdd.rules import decide as rule_decides
from gtdd.stats import allocation as alloc
from gtdd.stats.audit import audit_size_for
from gtdd.stats.params import open_unit
from testhelix.core.errors import UserError

ALLOCATIONS = ("one-candidate", "repository", "family-wise", "unbounded")


@dataclass(frozen=True)
class AcceptanceRule:
    allocation: str = "repository"
    alpha: str = "0.05"
    tolerance: str = "0.05"
    failures_allowed: int = 0
    require_regression: bool = True
    trajectories: int = 1  # M
    rounds: int = 4  # T (ignored by the unbounded allocation)
    rule: str = "audit"  # the rule that acts in the loop (gtdd.rules)
    family_tolerances: dict = field(default_factory=dict)  # family -> rho_j; others use `tolerance`

    def __post_init__(self) -> None:
        if self.allocation not in ALLOCATIONS:
            raise UserError(f"allocation {self.allocation!r}: expected one of {', '.join(ALLOCATIONS)}")
        if self.rule not in RULE_NAMES:
            raise UserError(f"acceptance rule {self.rule!r}: expected one of {', '.join(RULE_NAMES)}")
        open_unit(self.alpha, "alpha")
        open_unit(self.tolerance, "tolerance")
        for family, rho in self.family_tolerances.items():
            open_unit(rho, f"tolerance of family {family!r}")

    def tolerance_of(self, family: str) -> str:
        return self.family_tolerances.get(family, self.tolerance)

    def check_families(self, families: Sequence[str]) -> None:
        unknown = sorted(set(self.family_tolerances) - set(families))
        if unknown:
            raise UserError(f"--family-tolerance: unknown family {', '.join(map(repr, unknown))}; this "
                            f"domain's families are {', '.join(families)}")

    def error_allocation(self, families: int) -> alloc.ErrorAllocation:
        if self.allocation == "one-candidate":
            return alloc.one_candidate(self.alpha)
        if self.allocation == "repository":
            return alloc.repository(self.alpha, self.trajectories, self.rounds)
        if self.allocation == "family-wise":
            return alloc.family_wise(self.alpha, self.trajectories, self.rounds, families)
        return alloc.unbounded(self.alpha, self.trajectories)

    def audit_sizes(self, family_sizes: dict[str, int], round_index: int) -> dict[str, int]:
        allocation = self.error_allocation(len(family_sizes))
        if not allocation.unbounded and round_index > self.rounds:
            raise UserError(f"round {round_index} is past the acceptance horizon of {self.rounds} rounds")
        return {family: audit_size_for(allocation, size, self.tolerance_of(family), round_index,
                                       self.failures_allowed).exact_n
                for family, size in family_sizes.items()}

    def to_json(self) -> dict:
        return {**self.__dict__, "family_tolerances": dict(self.family_tolerances)}


@dataclass(frozen=True)
class AuditRecord:
    """The private record of one round's audits."""

    round: int
    rule: dict
    per_audit_error: str  # the allocation's epsilon for this round, exactly
    randomness: str  # hex; with the family name it seeds each family's sample
    families: dict  # family -> {population, sample, failures, passed, first_failure, sampled_ids}

    @property
    def passed(self) -> bool:
        return all(f["passed"] for f in self.families.values())

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class AcceptanceDecision:
    accepted: bool | None  # None: the rule `none` makes no decision
    snapshot_intact: bool
    public_pass: bool
    regression_pass: bool
    audits_pass: bool


def population_by_family(population: Sequence[Trace]) -> dict[str, list[Trace]]:
    groups: dict[str, list[Trace]] = defaultdict(list)
    for trace in population:
        groups[trace.family].append(trace)
    return dict(sorted(groups.items()))


def fresh_randomness() -> bytes:
    """Audit randomness from the OS; drawn only when the audit is sampled (after testing)."""
    return secrets.token_bytes(32)


def draw_audit(families: dict[str, list[Trace]], sizes: dict[str, int], randomness: bytes
               ) -> dict[str, list[Trace]]:
    """Uniform samples without replacement, one per family, reproducible from the randomness.

    random.Random (Mersenne Twister) turns the 256 random bits into a sample; treating that as
    uniform is an implementation assumption, as it is for any pseudorandom source."""
    out = {}
    for family, traces in families.items():
        seed = hashlib.sha256(randomness + family.encode()).digest()
        rng = random.Random(int.from_bytes(seed, "big"))
        out[family] = rng.sample(traces, sizes[family])
    return out


def run_audit(rule: AcceptanceRule, families: dict[str, list[Trace]], round_index: int,
              randomness: bytes, failures_of: Callable[[list[Trace]], list[Failure | None]]
              ) -> AuditRecord:
    sizes = rule.audit_sizes({f: len(t) for f, t in families.items()}, round_index)
    samples = draw_audit(families, sizes, randomness)
    flat = [t for traces in samples.values() for t in traces]
    outcomes = dict(zip((t.id for t in flat), failures_of(flat)))
    record = {}
    for family, traces in samples.items():
        failed_at = [i for i, t in enumerate(traces) if outcomes[t.id] is not None]
        failed = len(failed_at)
        record[family] = {"population": len(families[family]), "sample": len(traces),
                          "failures": failed, "passed": failed <= rule.failures_allowed,
                          "first_failure": failed_at[0] if failed_at else None,  # for the sequential rule
                          "sampled_ids": [t.id for t in traces]}
    allocation = rule.error_allocation(len(families))
    epsilon = allocation.per_audit(round_index)
    return AuditRecord(round_index, rule.to_json(), str(Fraction(epsilon)), randomness.hex(), record)


def decide(rule: AcceptanceRule, snapshot_intact: bool, public_pass: bool, regression_pass: bool,
           audit: AuditRecord) -> AcceptanceDecision:
    """The acting rule's decision (gtdd.rules); `audits_pass` is recorded whatever the rule."""
    evidence = Evidence(snapshot_intact, public_pass, regression_pass, audit.to_json())
    accepted = rule_decides(rule.rule, evidence, rule.require_regression).accepted
    return AcceptanceDecision(accepted, snapshot_intact, public_pass, regression_pass, audit.passed)
