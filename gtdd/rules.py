"""The acceptance rules of seed Section 3.3 behind one seam: which evidence accepts a committed candidate.

Every rule needs an intact snapshot and passing public tests. Then:

  public-screening  stops there.
  regression-only   also needs every saved development test (G_{t-1} and this round's V_t) to pass.
  audit             also needs the fresh post-commit audit of every requirement family to pass (at
                    most c failures in each family's sample), and the regression tests when the
                    acceptance settings require them. Guarantee: P(some accepted candidate of the
                    run exceeds a family tolerance) <= alpha under the chosen error allocation
                    (Theorems 4.12 / 4.14; 4.10 for the family-wise allocation).
  sequential        inspects each family's audit sample case by case with the supermartingale
                    W_r = I_r / q_{N,rho}(r) (gtdd.stats.sequential) and accepts when every family's
                    W reaches 1/epsilon before its first failure, epsilon being the round's
                    allocation. Guarantee: by Ville's inequality a candidate above tolerance in some
                    family j* crosses there with probability <= epsilon, so the same run-level bound
                    as `audit` holds; it stops a family's inspection at the first failure, so a
                    rejected candidate costs fewer executions. With c = 0 it accepts exactly when
                    the zero-failure audit does (the audit size is the first r with q(r) <= epsilon).
  none              no acceptance gate (seed Section 6): nothing is decided and the coder sees no
                    decision. The trajectory runs all T rounds.

Rules other than `none` decide from evidence the harness records every round anyway, so `gtdd
report` can also apply every rule to the same recorded candidates (the comparison keeps development
fixed, as Section 3.3 asks); the rule named by `--acceptance-rule` is the one that acted in the loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from gtdd.stats.sequential import CandidateSupermartingale

RULE_NAMES = ("audit", "sequential", "regression-only", "public-screening", "none")
GUARANTEES = {
    "audit": "P(any accepted candidate above a family tolerance) <= alpha (fresh post-commit audits, "
             "error allocation over the run)",
    "sequential": "the same bound as audit: each candidate's supermartingale crosses 1/epsilon with "
                  "probability <= epsilon when it is above tolerance (Ville's inequality)",
    "regression-only": "none: saved development tests chosen before or during development give no "
                       "bound on population risk",
    "public-screening": "none: passing the public examples says nothing about population risk",
    "none": "no acceptance decision is made",
}


@dataclass(frozen=True)
class Evidence:
    """What one round recorded about its committed candidate (the audit part is private)."""

    snapshot_intact: bool
    public_pass: bool
    regression_pass: bool
    audit: dict  # AuditRecord.to_json(): rule, per_audit_error, families -> sample outcomes


@dataclass(frozen=True)
class RuleDecision:
    accepted: bool | None  # None: the rule makes no decision
    audit_cases: int  # audit executions the rule needed


def decide(rule: str, evidence: Evidence, require_regression: bool) -> RuleDecision:
    if rule not in RULE_NAMES:
        raise ValueError(f"unknown acceptance rule {rule!r}")
    if rule == "none":
        return RuleDecision(None, 0)
    base = evidence.snapshot_intact and evidence.public_pass
    if rule == "public-screening":
        return RuleDecision(base, 0)
    if rule == "regression-only":
        return RuleDecision(base and evidence.regression_pass, 0)
    gate = base and (evidence.regression_pass or not require_regression)
    families = evidence.audit["families"]
    if rule == "audit":
        return RuleDecision(gate and all(f["passed"] for f in families.values()),
                            sum(f["sample"] for f in families.values()))
    epsilon = Fraction(evidence.audit["per_audit_error"])
    crossed, cases = True, 0
    for name, f in families.items():
        ok, used = sequential_family(f, family_tolerance(evidence.audit["rule"], name), epsilon)
        crossed &= ok
        cases += used
    return RuleDecision(gate and crossed, cases)


def family_tolerance(rule_json: dict, family: str) -> str:
    return (rule_json.get("family_tolerances") or {}).get(family, rule_json["tolerance"])


def sequential_family(family: dict, tolerance: str, epsilon: Fraction) -> tuple[bool, int]:
    """Run one family's supermartingale over its audit sample in draw order.

    Returns (crossed 1/epsilon before the first failure, cases inspected). A record made before
    draw positions were stored has only the failure count; a failure anywhere then counts as one
    before the crossing, which can only reject more."""
    if "first_failure" in family:
        first_failure = family["first_failure"]
    else:
        first_failure = 0 if family["failures"] else None
    martingale = CandidateSupermartingale(family["population"], tolerance, epsilon)
    for position in range(family["sample"]):
        failed = first_failure is not None and position == first_failure
        if martingale.observe(failed) or failed:
            return martingale.crossed, position + 1
    return martingale.crossed, family["sample"]
