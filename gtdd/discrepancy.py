"""The development discrepancy of a run (seed Definition 2.1): what passing the observed tests says
about meeting the target.

For each recorded round t of a trajectory:

  P_t        1 when the candidate passes every test whose pass criterion the coder observes: the
             public tests and the development tests run on it (the saved regression tests and the
             round's valid proposals), i.e. `public_pass and regression_pass` of gtdd_rounds
  Q_t        1 when every family's population failure rate is within its tolerance (the audit
             record's rule), the same Q_t the acceptance-rule comparison uses (gtdd.outcomes)
  Gamma_t    P_t - Q_t, in {-1, 0, 1}
  C^dev_t    P_t (1 - Q_t): the candidate passes what the coder can see and misses the target

Every quantity is a count of recorded rounds, so the means and frequencies are exact fractions
(reported unreduced as "count/rounds" beside a float). A mean of Gamma_t can cancel +1 against -1; the frequency of
C^dev_t is the one-sided discrepancy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from gtdd.outcomes import AuditJson, RoundRow, within_tolerance

DEFINITION = ("Gamma_t = P_t - Q_t (P_t: the candidate passes the public and development tests; Q_t: every "
              "family's population failure rate within tolerance); C^dev_t = P_t(1 - Q_t)")


def round_discrepancy(row: RoundRow, audit: AuditJson) -> tuple[int, int]:
    """(P_t, Q_t) of one recorded round."""
    return int(bool(row["public_pass"]) and bool(row["regression_pass"])), int(within_tolerance(row, audit))


def _fraction(count: int, n: int) -> dict[str, Any]:
    """count/n unreduced (so it reads as rounds), and its value."""
    return {"exact": f"{count}/{n}", "value": float(Fraction(count, n))}


def _summary(pq: Sequence[tuple[int, int]]) -> dict[str, Any]:
    n = len(pq)
    gammas = [p - q for p, q in pq]
    c_dev = sum(p * (1 - q) for p, q in pq)
    return {"rounds": n, "P": sum(p for p, _ in pq), "Q": sum(q for _, q in pq), "C_dev": c_dev,
            "mean_gamma": _fraction(sum(gammas), n), "c_dev_frequency": _fraction(c_dev, n),
            "gamma_counts": {str(g): gammas.count(g) for g in (-1, 0, 1)}}


def development_discrepancy(rows: Sequence[RoundRow], audits: Mapping[tuple[int, str, int], AuditJson],
                            policies: Sequence[str]) -> dict[str, Any]:
    """Gamma_t and C^dev_t per trajectory, per policy and round (over blocks), and per policy over
    every recorded round. `rows`: gtdd_rounds rows; `audits`: (block, policy, round) -> audit JSON."""
    pq = {(r["block"], r["policy"], r["round"]): round_discrepancy(r, audits[(r["block"], r["policy"], r["round"])])
          for r in rows}
    trajectories = []
    for block, policy in sorted({(b, p) for b, p, _ in pq}):
        rounds = sorted(t for b, p, t in pq if (b, p) == (block, policy))
        values = [pq[(block, policy, t)] for t in rounds]
        trajectories.append({"block": block, "policy": policy, "rounds": rounds,
                             "gamma": [p - q for p, q in values], "c_dev": [p * (1 - q) for p, q in values],
                             "c_dev_frequency": _fraction(sum(p * (1 - q) for p, q in values), len(values))})
    by_round = {policy: [{"round": t, **_summary([v for (b, p, s), v in sorted(pq.items()) if p == policy and s == t])}
                         for t in sorted({s for (_, p, s) in pq if p == policy})]
                for policy in policies}
    by_policy = {policy: _summary([v for (_, p, _), v in sorted(pq.items()) if p == policy])
                 for policy in policies if any(p == policy for _, p, _ in pq)}
    return {"definition": DEFINITION, "by_round": by_round, "by_policy": by_policy, "trajectories": trajectories}


def discrepancy_lines(report: Mapping[str, Any]) -> list[str]:
    d = report.get("development_discrepancy")
    if not d or not d["by_policy"]:
        return []
    lines = ["", "Development discrepancy (Definition 2.1): " + d["definition"],
             "mean Gamma_t and frequency of C^dev_t over trajectories, per round; 'all' = every recorded round",
             f"{'policy':<24} {'round':>5} {'n':>4} {'P=1':>4} {'Q=1':>4} {'mean Gamma':>14} {'C^dev freq':>14}"]
    for policy, summary in d["by_policy"].items():
        for row in [*d["by_round"][policy], {**summary, "round": "all"}]:
            lines.append(f"{policy:<24} {row['round']!s:>5} {row['rounds']:>4} {row['P']:>4} {row['Q']:>4} "
                         f"{_cell(row['mean_gamma']):>14} {_cell(row['c_dev_frequency']):>14}")
    return lines


def _cell(value: Mapping[str, Any]) -> str:
    return f"{value['exact']} ({value['value']:.2f})"
