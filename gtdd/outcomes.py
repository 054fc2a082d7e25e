"""Development outcomes (seed Section 3.2) and the acceptance-rule comparison (Section 3.3) of a run.

Per trajectory (one block, one policy), from what `gtdd_rounds` and `gtdd_audits` hold:

  discovery        valid nonduplicate failures on the current candidate / traces proposed, summed over
                   the testing rounds (invalid and duplicate proposals stay in the denominator)
  repair rate      of the counterexamples reported in round t, the share the round-(t+1) candidate
                   passes, summed over rounds
  unseen risk      equation (9) for the last recorded candidate: its failure rate on the population
                   cases whose identity never reached the coder (public examples and reported
                   counterexamples with their originals excluded)
  regressions      saved tests a candidate fails after the previous candidate passed them, summed
  cost terms       traces proposed (generation), saved tests executed (re-execution), reduction
                   executions, audit executions

The acceptance-rule comparison applies every rule of gtdd.rules to the SAME recorded candidates and
evidence, stopping each trajectory at its first acceptance (so development is held fixed across
rules, as Section 3.3 asks). A false acceptance is an accepted candidate with Q_t = 0: some family's
population failure rate exceeds its tolerance. The delivered candidate is the first accepted one,
or the last recorded one when nothing was accepted.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction
from typing import Any, TypedDict

import numpy as np

from gtdd.rules import GUARANTEES, RULE_NAMES, Evidence, decide, family_tolerance

# the report's paired statistics of within-block differences first - second (gtdd.report.paired_contrast)
Contrast = Callable[[str, str, np.ndarray], object]

OUTCOMES = ("discovery", "repair_rate", "unseen_risk", "regressions", "proposed", "executed",
            "reduction_executions")
PAIRED_OUTCOMES = ("discovery", "repair_rate", "unseen_risk", "regressions")  # cost terms: means only
COMPARED_RULES = tuple(r for r in RULE_NAMES if r != "none")

# A gtdd_rounds row as the store returns it (columns: gtdd/schema.py; `detail` is its JSON text).
RoundRow = Mapping[str, Any]
# An audit record as stored in gtdd_audits (JSON): the acceptance rules (gtdd/rules.py) read it as such.
AuditJson = dict[str, Any]
# One trajectory's development outcomes, by name (OUTCOMES); None where a ratio has no denominator.
TrajectoryOutcomes = dict[str, float | None]


class RuleApplied(TypedDict):
    """One acceptance rule applied to one recorded trajectory, stopping at its first acceptance."""

    accepted: bool
    round: int | None           # the round of the first acceptance
    false: bool                 # accepted while some family's population failure rate exceeds its tolerance
    delivered_rate: float       # the delivered candidate's population failure rate
    audit_cases: int            # audit executions spent up to the stop


def _ratio(num: float, den: float) -> float | None:
    return num / den if den else None


def trajectory_outcomes(rounds: Sequence[RoundRow]) -> TrajectoryOutcomes:
    rs = sorted(rounds, key=lambda r: r["round"])
    repaired = sum(r["repaired_previous"] for r in rs[1:])
    reported = sum(r["counterexamples"] for r in rs[:-1])
    last = rs[-1]
    return {"discovery": _ratio(sum(r["new_failures"] for r in rs), sum(r["proposed"] for r in rs)),
            "repair_rate": _ratio(repaired, reported),
            "unseen_risk": _ratio(last["unseen_failures"], last["unseen_size"]),
            "regressions": float(sum(r["regressions"] for r in rs)),
            "proposed": float(sum(r["proposed"] for r in rs)),
            "executed": float(sum(r["executed"] for r in rs)),
            "reduction_executions": float(sum(json.loads(r["detail"]).get("reduction_executions", 0) for r in rs))}


def within_tolerance(row: RoundRow, audit: AuditJson) -> bool:
    """Q_t: every family's population failure rate is at most its tolerance."""
    by_family = json.loads(row["detail"]).get("population_by_family", {})
    sizes = {f: v["population"] for f, v in audit["families"].items()}
    return all(Fraction(failures, sizes[f]) <= Fraction(family_tolerance(audit["rule"], f))
               for f, failures in by_family.items() if f in sizes)


def apply_rule(rule: str, rounds: Sequence[RoundRow], audits: Mapping[int, AuditJson]) -> RuleApplied:
    """Stop at the first acceptance under `rule` on one recorded trajectory."""
    cases = 0
    rs = sorted(rounds, key=lambda r: r["round"])
    for r in rs:
        audit = audits[r["round"]]
        detail = json.loads(r["detail"])
        evidence = Evidence(detail.get("snapshot_intact", True), bool(r["public_pass"]), bool(r["regression_pass"]),
                            audit)
        decision = decide(rule, evidence, bool(audit["rule"].get("require_regression", True)))
        cases += decision.audit_cases
        if decision.accepted:
            return {"accepted": True, "round": r["round"], "false": not within_tolerance(r, audit),
                    "delivered_rate": r["failure_rate"], "audit_cases": cases}
    return {"accepted": False, "round": None, "false": False, "delivered_rate": rs[-1]["failure_rate"],
            "audit_cases": cases}


def _contrasts(values: Mapping[tuple[int, str], float | None], policies: list[str], contrast: Contrast) -> list[dict]:
    out = []
    for a, b in itertools.combinations(policies, 2):
        blocks = sorted(blk for (blk, p) in values if p == a and values[(blk, a)] is not None
                        and values.get((blk, b)) is not None)
        if blocks:
            diffs = np.array([values[(blk, a)] - values[(blk, b)] for blk in blocks])  # type: ignore[operator]
            out.append(contrast(a, b, diffs).__dict__)
    return out


def development_and_acceptance(rows: list[dict], audits: dict, policies: list[str], contrast: Contrast) -> dict:
    """`rows`: gtdd_rounds rows; `audits`: (block, policy, round) -> audit record JSON;
    `contrast(first, second, diffs)`: the report's paired statistics."""
    trajectories: dict[tuple[int, str], list[dict]] = {}
    for r in rows:
        trajectories.setdefault((r["block"], r["policy"]), []).append(r)
    per = {key: trajectory_outcomes(rs) for key, rs in trajectories.items()}
    development: dict[str, dict] = {"means": {}, "contrasts": {}}
    for name in OUTCOMES:
        values = {key: o[name] for key, o in per.items()}
        development["means"][name] = {p: _mean([v for (b, q), v in values.items() if q == p]) for p in policies}
        if name in PAIRED_OUTCOMES:
            development["contrasts"][name] = _contrasts(values, policies, contrast)
    rules, delivered_by_rule = {}, {}
    for rule in COMPARED_RULES:
        applied = {key: apply_rule(rule, rs, {t: audits[(key[0], key[1], t)] for t in (r["round"] for r in rs)})
                   for key, rs in trajectories.items()}
        summary = {p: {"trajectories": sum(1 for (b, q) in applied if q == p),
                       "accepted": sum(a["accepted"] for (b, q), a in applied.items() if q == p),
                       "false_acceptances": sum(a["false"] for (b, q), a in applied.items() if q == p),
                       "mean_round_of_acceptance": _mean([a["round"] for (b, q), a in applied.items()
                                                          if q == p and a["accepted"]]),
                       "mean_delivered_rate": _mean([a["delivered_rate"] for (b, q), a in applied.items() if q == p]),
                       "mean_audit_cases": _mean([a["audit_cases"] for (b, q), a in applied.items() if q == p])}
                   for p in policies}
        delivered = {key: a["delivered_rate"] for key, a in applied.items()}
        delivered_by_rule[rule] = delivered
        rules[rule] = {"guarantee": GUARANTEES[rule], "by_policy": summary,
                       "contrasts": _contrasts(delivered, policies, contrast)}
    # Rule against rule on the same trajectories (pairs are (block, policy)): what each delivers.
    between = [contrast(a, b, np.array([delivered_by_rule[a][key] - delivered_by_rule[b][key]
                                        for key in sorted(trajectories)])).__dict__
               for a, b in itertools.combinations(COMPARED_RULES, 2)]
    return {"development": development, "acceptance_rules": rules, "rule_contrasts": between}


def _mean(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return float(np.mean(values)) if values else None
