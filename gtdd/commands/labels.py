"""What each number a GTDD calculator prints means: a label and a one-line explanation per result
field. The text output prints `label: value` and the explanation under it; `--json` keeps the
field names (stable for scripts)."""

from __future__ import annotations

import click

EXPLAINED: dict[str, tuple[str, str]] = {  # field -> (label, explanation)
    # audit-size, history-bound
    "exact_n": ("exact audit size n", "the fewest hidden cases to audit so that a candidate above tolerance "
                "passes with probability at most the error target (computed exactly)"),
    "exponential_n": ("exponential sufficient size", "a simpler, larger size that is always enough: it uses "
                      "(1 - rho)^n in place of the exact probability (n/a when failures are allowed)"),
    "q": ("false-acceptance probability q at n", "the exact chance that a candidate just above tolerance "
          "passes an audit of exact_n cases (at most the error target)"),
    # accept-prob
    "probability": ("acceptance probability", "the chance that a candidate with K failing cases among N "
                    "passes an audit of n cases drawn without replacement"),
    # probe
    "union_lower_bound": ("success, union lower bound", "Theorem 4.6's lower bound on the chance that the "
                          "probing construction succeeds (0 where the theorem does not apply)"),
    "exact_success": ("success, exact", "the exact chance that the probing construction succeeds (eq. 23)"),
    # recorded-audit
    "sample": ("audit size n", "the number of hidden cases each audit checks"),
    "expected_false_acceptances": ("expected false acceptances", "per trajectory: the chance the rule first "
                                   "accepts a candidate above tolerance"),
    "expected_tolerable_acceptances": ("expected tolerable acceptances", "per trajectory: the chance the rule "
                                       "first accepts a candidate within tolerance"),
    "mean_no_acceptance": ("no acceptance", "per trajectory: the chance that no round is accepted"),
    # supermartingale
    "draws": ("draws observed", "the audit draws given, in order"),
    "W": ("supermartingale W", "the evidence after the last draw: 1 / q_{N,rho}(passing draws), 0 after a failure"),
    "threshold": ("threshold", "the value the evidence must reach: 1 / epsilon (or 1 / alpha)"),
    "crossed_at": ("crossed at", "the draw (or audit) at which the evidence first reached the threshold"),
    "endpoint": ("endpoint", "passing draws that prove the candidate within tolerance outright: N - K_rho + 1"),
    "within_tolerance_proven": ("within tolerance proven", "whether the endpoint was reached without a failure"),
    "decision": ("decision", "accept (threshold reached), reject (a draw failed) or continue (draw more)"),
    "guarantee": ("guarantee", "what an acceptance promises"),
    # e-process
    "audits": ("audits observed", "candidates' audits given, in order"),
    "Z": ("e-process Z after each audit", "the product of 1 / q over passed audits (0 after a failed one)"),
    "factors": ("factors", "which q each audit's factor uses"),
    "caveat": ("caveat", "what crossing the threshold does and does not show"),
}


def emit(result: dict, as_json: bool) -> None:
    """`result` as JSON, or as labelled lines, each followed by what it means."""
    if as_json:
        from testhelix.commands.plumbing import print_json

        print_json(result)
        return
    for key, value in result.items():
        label, meaning = EXPLAINED.get(key, (key, ""))
        click.echo(f"{label}: {'n/a' if value is None else value}")
        if meaning:
            click.echo(f"    {meaning}")
