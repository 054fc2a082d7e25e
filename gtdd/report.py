"""The experiment report (docs/design.md §8): tables, paired statistics and a plot.

* the mean evaluation failure rate of every policy after each round, with the mean number of
  counterexamples newly reported in the last testing round;
* for every pair of policies, the within-block difference after the last round: mean, percentile
  bootstrap interval over blocks (10,000 resamples), seeded sign-flip p-value (100,000 sign
  assignments; scipy enumerates all of them exactly when there are fewer), median, 10% trimmed
  mean, exact sign test over the blocks without a tie, and the lower / higher counts;
* the recorded-candidate audit analysis (gtdd.stats.recorded): what a zero-failure audit sized for
  one trajectory's rounds, and for every audit opportunity of the run, would have done to the
  recorded candidates under stopping at the first acceptance;
* development outcomes per policy (discovery, repair rate, unseen-case risk of equation 9,
  regressions, cost terms) with the same paired statistics, and every acceptance rule applied to the
  same recorded candidates with stopping at the first acceptance (gtdd.outcomes);
* the development discrepancy Gamma_t = P_t - Q_t and the frequency of C^dev_t (gtdd.discrepancy);
* failure_by_round.png.

A trajectory that stopped at its first acceptance (`--stop-at-first-acceptance`) keeps its accepted
candidate: its rate is carried forward to the later rounds of the failure table.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
from scipy import stats

from gtdd import store as gtdd_store
from gtdd.discrepancy import development_discrepancy, discrepancy_lines
from gtdd.outcomes import OUTCOMES, development_and_acceptance
from gtdd.stats.audit import audit_size
from gtdd.stats.recorded import recorded_audit
from testhelix.core import atomic
from testhelix.core.atomic import atomic_path
from testhelix.core.errors import UserError
from testhelix.store.runstore import RunStore

BOOTSTRAP_RESAMPLES = 10_000
SIGN_FLIPS = 100_000
REPORT_SEED = 20250414
SIMULATED_NOTE = ("NOTE: the coder and tester in this run were simulated test doubles (sim:*), not "
                  "language models; these numbers exercise the harness and say nothing about models.\n"
                  "The simulated coder writes code by editing a copy of the reference source (a double has no "
                  "other way to write working code); which defects it repairs it decides only from the feedback's "
                  "expected replies and its own runs, and the simulated tester never reads the reference.")


@dataclass(frozen=True)
class Contrast:
    first: str
    second: str
    blocks: int
    mean: float
    interval: tuple[float, float] | None
    p_sign_flip: float | None
    median: float
    trimmed_mean: float
    p_sign_test: float | None
    lower: int
    higher: int


def paired_contrast(first: str, second: str, diffs: np.ndarray, seed: int = REPORT_SEED) -> Contrast:
    """Statistics of within-block differences first - second."""
    lower, higher = int((diffs < 0).sum()), int((diffs > 0).sum())
    interval = p_flip = None
    if len(diffs) >= 2 and np.ptp(diffs) > 0:
        boot = stats.bootstrap((diffs,), np.mean, n_resamples=BOOTSTRAP_RESAMPLES, method="percentile",
                               confidence_level=0.95, random_state=np.random.default_rng(seed))
        interval = (float(boot.confidence_interval.low), float(boot.confidence_interval.high))
    elif len(diffs) >= 2:  # every block differs by the same amount: the interval is that point
        interval = (float(diffs[0]), float(diffs[0]))
    if len(diffs) >= 2:  # scipy needs two blocks; one block has no sign-flip distribution to speak of
        flip = stats.permutation_test((diffs,), lambda x, axis: np.mean(x, axis=axis), vectorized=True,
                                      permutation_type="samples", n_resamples=SIGN_FLIPS,
                                      random_state=np.random.default_rng(seed + 1))
        p_flip = float(flip.pvalue)
    p_sign = float(stats.binomtest(lower, lower + higher, 0.5).pvalue) if lower + higher else None
    return Contrast(first, second, len(diffs), float(diffs.mean()), interval, p_flip,
                    float(np.median(diffs)), float(stats.trim_mean(diffs, 0.1)), p_sign, lower, higher)


def load(run_dir: Path, command: str = "gtdd report") -> tuple[dict, list[dict]]:
    if not (Path(run_dir) / "run.duckdb").exists():
        raise UserError(f"{run_dir}: no run store here (expected run.duckdb from `gtdd experiment`)")
    store = RunStore(Path(run_dir), read_only=True)
    try:
        store.require_kind("gtdd", command)
        config = gtdd_store.config_value(store, "experiment")
        if config is None:
            raise UserError(f"{run_dir}: no GTDD experiment was recorded here")
        rows = gtdd_store.rounds(store)
        config["audits"] = gtdd_store.audit_records(store)
        config["reaudited"] = gtdd_store.reaudit_count(store)
        config["per_audit_error"] = gtdd_store.per_audit_error(store)
    finally:
        store.close()
    return config, [asdict(r) for r in rows]


def build_report(run_dir: Path) -> dict:
    config, rows = load(run_dir)
    if not rows:
        raise UserError(f"{run_dir}: the experiment has no finished rounds yet")
    policies = [p for p in config["policies"] if any(r["policy"] == p for r in rows)]
    rounds = config["rounds"]
    audits = config.pop("audits")
    rate = {(r["block"], r["policy"], r["round"]): r["failure_rate"] for r in rows}
    if config.get("stop_at_first_acceptance"):  # a stopped trajectory delivers its accepted candidate
        for r in rows:
            if r["accepted"]:
                for later in range(r["round"] + 1, rounds + 1):
                    rate.setdefault((r["block"], r["policy"], later), r["failure_rate"])
    table = []
    for p in policies:
        means = []
        for t in range(1, rounds + 1):
            values = [v for (b, q, s), v in rate.items() if q == p and s == t]
            means.append(float(np.mean(values)) if values else None)
        last_testing = [r["counterexamples"] for r in rows if r["policy"] == p and r["round"] == rounds - 1]
        table.append({"policy": p, "rates": means,
                      "new_counterexamples_last_testing_round": float(np.mean(last_testing)) if last_testing else None,
                      "blocks": len({r["block"] for r in rows if r["policy"] == p and r["round"] == rounds})})
    contrasts = []
    for a, b in itertools.combinations(policies, 2):
        blocks = sorted({blk for (blk, q, s) in rate if q == a and s == rounds}
                        & {blk for (blk, q, s) in rate if q == b and s == rounds})
        if blocks:
            diffs = np.array([rate[(blk, a, rounds)] - rate[(blk, b, rounds)] for blk in blocks])
            contrasts.append(paired_contrast(a, b, diffs).__dict__)
    return {"run_dir": str(run_dir), "config": config, "rounds": rounds, "failure_table": table,
            "contrasts": contrasts, "recorded_audit": recorded_candidates(config, rows),
            **development_and_acceptance(rows, audits, policies, paired_contrast),
            "development_discrepancy": development_discrepancy(rows, audits, policies),
            "acceptance": {**config["acceptance"], "accepted": sum(bool(r["accepted"]) for r in rows),
                           "stop_at_first_acceptance": bool(config.get("stop_at_first_acceptance")),
                           "fixed_tests": config.get("fixed_tests", "hidden"),
                           "rounds_recorded": len(rows), "reaudited": config.get("reaudited", 0),
                           "per_audit_error": config.get("per_audit_error")},
            "simulated": any(r["simulated"] for r in rows)}


def recorded_candidates(config: dict, rows: list[dict], alpha: str = "0.05", tolerance: str = "0.05") -> dict:
    """The audit analysis of recorded candidates (stopping at first acceptance), on the whole
    population as one family, for two zero-failure audit sizes."""
    rounds = config["rounds"]
    trajectories: dict[tuple, list] = {}
    for r in rows:
        trajectories.setdefault((r["block"], r["policy"]), []).append(r)
    counts = [[r["population_failures"] for r in sorted(rs, key=lambda r: r["round"])]
              for rs in trajectories.values() if len(rs) == rounds]
    if not counts:
        return {}
    population = rows[0]["population_size"]
    a = Fraction(alpha)
    out = {"population": population, "tolerance": tolerance, "alpha": alpha, "trajectories": len(counts)}
    for label, opportunities in (("one_trajectory", rounds), ("all_opportunities", rounds * len(counts))):
        n = audit_size(population, tolerance, a / opportunities).exact_n
        rec = recorded_audit(counts, population, tolerance, n)
        out[label] = {"audit_size": n, "opportunities": opportunities,
                      "expected_false_acceptances": rec.expected_false_acceptances,
                      "expected_tolerable_acceptances": rec.expected_tolerable_acceptances,
                      "mean_no_acceptance": rec.mean_no_acceptance}
        out["candidates"] = rec.candidates
        out["candidates_within_tolerance"] = rec.candidates_within_tolerance
    return out


def _fmt(x: float | None, signed: bool = False, digits: int = 3) -> str:
    if x is None:
        return "n/a"
    return f"{x:+.{digits}f}" if signed else f"{x:.{digits}f}"


def _p(x: float | None) -> str:
    return "n/a" if x is None else (f"{x:.4f}" if x < 0.01 else f"{x:.3f}")


def render_text(report: dict) -> str:
    rounds = report["rounds"]
    lines = []
    if report["simulated"]:
        lines += [SIMULATED_NOTE, ""]
    lines.append("Mean evaluation failure rate after each round (blocks finished in brackets)")
    head = ["policy".ljust(24)] + [f"round {t}".rjust(8) for t in range(1, rounds + 1)] + ["  new cex (last testing round)"]
    lines.append(" ".join(head))
    for row in report["failure_table"]:
        cells = [f"{row['policy']} [{row['blocks']}]".ljust(24)] + [_fmt(v).rjust(8) for v in row["rates"]]
        cells.append(_fmt(row["new_counterexamples_last_testing_round"], digits=2).rjust(10))
        lines.append(" ".join(cells))
    lines += ["", f"Within-block differences after round {rounds} (first minus second)"]
    lines += contrast_lines(report["contrasts"])
    lines += _development_lines(report)
    lines += discrepancy_lines(report)
    acc = report.get("acceptance")
    if acc:
        tolerances = acc.get("family_tolerances") or {}
        lines += ["", f"Acting acceptance rule: {acc.get('rule', 'audit')}"
                  + (", trajectories stop at their first acceptance" if acc.get("stop_at_first_acceptance") else "")
                  + f"; fixed tests {acc.get('fixed_tests', 'hidden')}"
                  + ("; family tolerances " + ", ".join(f"{f}={v}" for f, v in tolerances.items()) if tolerances else ""),
                  f"Acceptance: {acc['allocation']} allocation, alpha {acc['alpha']}, tolerance {acc['tolerance']}, "
                  f"M = {acc['trajectories']} trajectories, T = {acc['rounds']} rounds, per-audit error "
                  f"{acc['per_audit_error']}; {acc['accepted']} of {acc['rounds_recorded']} recorded rounds "
                  f"accepted; re-audited {acc['reaudited']} rounds after extensions"]
    lines += _rule_lines(report)
    audit = report["recorded_audit"]
    if audit:
        lines += ["", f"Audits of the recorded candidates ({audit['candidates']} candidates in "
                  f"{audit['trajectories']} trajectories, {audit['candidates_within_tolerance']} within "
                  f"tolerance {audit['tolerance']}; population {audit['population']}; zero-failure audit, "
                  f"stop at first acceptance)"]
        for label in ("one_trajectory", "all_opportunities"):
            a = audit[label]
            lines.append(f"  alpha {audit['alpha']} over {a['opportunities']:>4} audits: n = {a['audit_size']:>4}  "
                         f"expected false acceptances {a['expected_false_acceptances']:.5f}  expected "
                         f"acceptances within tolerance {a['expected_tolerable_acceptances']:.3f}  mean P(no "
                         f"acceptance) {a['mean_no_acceptance']:.3f}")
    return "\n".join(lines)


def contrast_lines(contrasts: list[dict], label: str = "contrast") -> list[str]:
    lines = [f"{label:<46} {'n':>3} {'mean':>7} {'95% interval':>18} {'p flip':>7} "
             f"{'median':>7} {'trim10':>7} {'p sign':>7} {'lower,higher':>12}"]
    for c in contrasts:
        interval = "n/a" if c["interval"] is None else f"[{c['interval'][0]:+.3f},{c['interval'][1]:+.3f}]"
        name = c["first"] + (" - " + c["second"] if c["second"] else "")  # no second: a labelled difference
        lines.append(f"{name:<46} {c['blocks']:>3} {_fmt(c['mean'], True):>7} "
                     f"{interval:>18} {_p(c['p_sign_flip']):>7} {_fmt(c['median'], True):>7} "
                     f"{_fmt(c['trimmed_mean'], True):>7} {_p(c['p_sign_test']):>7} "
                     f"{str(c['lower']) + ',' + str(c['higher']):>12}")
    return lines


def _development_lines(report: dict) -> list[str]:
    dev = report.get("development")
    if not dev:
        return []
    policies = [row["policy"] for row in report["failure_table"]]
    lines = ["", "Development outcomes per policy (mean over blocks; discovery = new failures / proposed, repair = "
             "share of reported counterexamples the next candidate passes, unseen risk = equation 9 for the "
             "last candidate; regressions, proposed, executed and reduction executions are totals per trajectory)",
             f"{'policy':<24}" + "".join(f"{_SHORT[name]:>11}" for name in OUTCOMES)]
    for p in policies:
        lines.append(f"{p:<24}" + "".join(
            f"{_fmt(dev['means'][name][p], digits=3 if name in ('discovery', 'repair_rate', 'unseen_risk') else 1):>11}"
            for name in OUTCOMES))
    for name, contrasts in dev["contrasts"].items():
        if contrasts:
            lines += ["", f"Within-block differences of {name} (first minus second)"]
            lines += contrast_lines(contrasts)
    return lines


_SHORT = {"discovery": "discovery", "repair_rate": "repair", "unseen_risk": "unseen", "regressions": "regress",
          "proposed": "proposed", "executed": "executed", "reduction_executions": "reductions"}


def _rule_lines(report: dict) -> list[str]:
    rules = report.get("acceptance_rules")
    if not rules:
        return []
    lines = ["", "Acceptance rules applied to the same recorded candidates, stopping at the first acceptance "
             "(false = accepted with a family above its tolerance; delivered = first accepted candidate, else the last)",
             f"{'rule':<18} {'policy':<24} {'accepted':>9} {'false':>6} {'round':>6} {'delivered':>10} {'audit cases':>12}"]
    for rule, r in rules.items():
        for p, s in r["by_policy"].items():
            lines.append(f"{rule:<18} {p:<24} {str(s['accepted']) + '/' + str(s['trajectories']):>9} "
                         f"{s['false_acceptances']:>6} {_fmt(s['mean_round_of_acceptance'], digits=2):>6} "
                         f"{_fmt(s['mean_delivered_rate']):>10} {_fmt(s['mean_audit_cases'], digits=1):>12}")
    for rule, r in rules.items():
        lines += ["", f"{rule}: guarantee: {r['guarantee']}"]
        if r["contrasts"]:
            lines += contrast_lines(r["contrasts"], "delivered failure rate, first minus second")
    if report.get("rule_contrasts"):
        lines += ["", "Rule against rule on the same trajectories (n = trajectories): delivered failure rate"]
        lines += contrast_lines(report["rule_contrasts"], "rule contrast")
    return lines


def plot(report: dict, path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.2))
    rounds = list(range(1, report["rounds"] + 1))
    for row in report["failure_table"]:
        ax.plot(rounds, [np.nan if v is None else v for v in row["rates"]], marker="o", label=row["policy"])
    ax.set_xlabel("coding round")
    ax.set_ylabel("mean evaluation failure rate")
    ax.set_xticks(rounds)
    title = "GTDD: failure rate by round and policy"
    ax.set_title(title + (" (simulated agents)" if report["simulated"] else ""))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    with atomic_path(path, suffix=".png") as tmp:
        fig.savefig(tmp, dpi=120)
    plt.close(fig)
    return path


def write_report(run_dir: Path) -> tuple[dict, str]:
    report = build_report(run_dir)
    text = render_text(report)
    png = plot(report, Path(run_dir) / "failure_by_round.png")
    atomic.write_text(Path(run_dir) / "report.md",
        "# GTDD experiment report\n\n```\n" + text + "\n```\n\n![failure rate by round](failure_by_round.png)\n")
    report["plot"] = str(png)
    atomic.write_text(Path(run_dir) / "report.json", json.dumps(report, indent=2, default=str))
    return report, text
