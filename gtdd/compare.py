"""Paired comparison of GTDD runs that differ in a run setting (seed Section 3.3's "visible versus
hidden fixed tests", or any other setting that is chosen per run).

Two runs are pairable when they ran the same domain with the same experiment seed and the same
number of rounds, and each block started from the same first module (the block's shared starting
point is then the same program in both runs, so block b of one run is block b of the other). A
trajectory is paired with the trajectory of the same block and policy in the other run; only
trajectories that finished every round in both runs are paired. Anything else is refused with the
difference named.

For every pair of runs (first minus second), per policy and over all paired trajectories, the
statistics are those of `gtdd report` (gtdd.report.paired_contrast): the failure rate after the
last round (a trajectory that stopped at its first acceptance keeps that candidate's rate), the
development outcomes of gtdd.outcomes, and under every acceptance rule the 0/1 "accepted" of each
trajectory (stopping at the first acceptance): for those, the sign test over the pairs that differ
is the exact McNemar test, and lower,higher are the pairs where only the second / only the first
run accepted.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gtdd.outcomes import COMPARED_RULES, PAIRED_OUTCOMES, RuleApplied, apply_rule, trajectory_outcomes
from gtdd.report import SIMULATED_NOTE, contrast_lines, load, paired_contrast
from gtdd.store import first_modules
from testhelix.core.errors import UserError
from testhelix.store.runstore import RunStore

# Settings that decide which trajectories correspond; runs that differ in one are not pairable.
PAIRING = ("domain", "seed", "rounds")
NOT_SETTINGS = ("policies", "blocks", "audits", "reaudited", "per_audit_error")  # what a run holds, not a choice
ALL = "all policies"

Trajectory = tuple[int, str]  # (block, policy)


class Run:
    """One GTDD run folder: its settings, its complete trajectories and its blocks' first modules."""

    def __init__(self, run_dir: Path) -> None:
        self.dir = Path(run_dir)
        config, rows = load(self.dir, "gtdd compare")
        self.audits: dict[tuple[int, str, int], dict] = config.pop("audits")
        self.config = config
        self.rounds = int(config["rounds"])
        by: dict[Trajectory, list[dict]] = {}
        for r in rows:
            by.setdefault((r["block"], r["policy"]), []).append(r)
        self.stop_at_first_acceptance = bool(config.get("stop_at_first_acceptance"))
        self.trajectories = {key: sorted(rs, key=lambda r: r["round"]) for key, rs in by.items()
                             if self._complete(rs)}
        self.simulated = any(r["simulated"] for r in rows)
        store = RunStore(self.dir, read_only=True)
        try:
            self.first_modules = {block: hashlib.sha256((module or "").encode()).hexdigest()
                                  for block, module in first_modules(store).items()}
        finally:
            store.close()

    def _complete(self, rounds: list[dict]) -> bool:
        done = {r["round"] for r in rounds}
        if done == set(range(1, self.rounds + 1)):
            return True
        # a trajectory that stopped at its first acceptance is complete at that round
        return self.stop_at_first_acceptance and any(r["accepted"] for r in rounds) and \
            done == set(range(1, max(done) + 1))

    def settings(self) -> dict[str, Any]:
        flat = {k: v for k, v in self.config.items() if k not in NOT_SETTINGS and k != "acceptance"}
        flat.update({f"acceptance.{k}": v for k, v in (self.config.get("acceptance") or {}).items()
                     if k not in ("trajectories", "rounds")})  # M and T follow from blocks and policies
        return flat

    def final_rate(self, key: Trajectory) -> float:
        rs = self.trajectories[key]
        accepted = [r for r in rs if r["accepted"]] if self.stop_at_first_acceptance else []
        return float((accepted[0] if accepted else rs[-1])["failure_rate"])

    def acceptance(self, key: Trajectory, rule: str) -> RuleApplied:
        rs = self.trajectories[key]
        return apply_rule(rule, rs, {r["round"]: self.audits[(key[0], key[1], r["round"])] for r in rs})


def _name(run: Run) -> str:
    return str(run.dir)


def check_pairable(first: Run, second: Run) -> list[Trajectory]:
    """The trajectories both runs finished; refuses (UserError, exit 2) runs that are not pairable."""
    if first.dir.resolve() == second.dir.resolve():
        raise UserError(f"{second.dir}: the same run folder twice; compare two different runs")
    for setting in PAIRING:
        a, b = first.config.get(setting), second.config.get(setting)
        if a != b:
            raise UserError(f"{_name(second)} is not pairable with {_name(first)}: {setting} {a!r} vs {b!r} "
                            f"(pairs are the same block and policy of runs with the same "
                            f"{', '.join(PAIRING)})")
    shared = sorted(first.trajectories.keys() & second.trajectories.keys())
    if not shared:
        raise UserError(f"{_name(second)} is not pairable with {_name(first)}: no (block, policy) trajectory is "
                        f"complete in both (first: {_describe(first.trajectories)}; second: "
                        f"{_describe(second.trajectories)})")
    same_coder = first.config.get("coder") == second.config.get("coder")
    for block in sorted({b for b, _ in shared}):
        if same_coder and first.first_modules.get(block) != second.first_modules.get(block):
            raise UserError(f"{_name(second)} is not pairable with {_name(first)}: block {block} starts from a "
                            "different first module with the same coder (a run of another code version or "
                            "domain revision); pairs must start from the same program")
    return shared


def _describe(trajectories: dict[Trajectory, list[dict]]) -> str:
    if not trajectories:
        return "none complete"
    blocks = sorted({b for b, _ in trajectories})
    policies = sorted({p for _, p in trajectories})
    return f"blocks {blocks[0]}..{blocks[-1]}, policies {', '.join(policies)}"


def differences(first: Run, second: Run) -> dict[str, tuple[Any, Any]]:
    a, b = first.settings(), second.settings()
    return {k: (a.get(k), b.get(k)) for k in sorted(a.keys() | b.keys()) if a.get(k) != b.get(k)}


def _contrasts(label: str, keys: Sequence[Trajectory], xs: Mapping[Trajectory, float | None],
               ys: Mapping[Trajectory, float | None], policies: Sequence[str]) -> list[dict]:
    """Per policy and over all paired trajectories: xs - ys, over the pairs where both are defined."""
    out = []
    for policy in [*policies, ALL]:
        diffs = [x - y for key in keys if policy in (ALL, key[1])
                 for x, y in [(xs[key], ys[key])] if x is not None and y is not None]
        if diffs:
            out.append(paired_contrast(f"{policy}: {label}", "", np.array(diffs, dtype=float)).__dict__)
    return out


def compare(run_dirs: Sequence[Path]) -> dict:
    if len(run_dirs) < 2:
        raise UserError("give at least two GTDD run folders to compare")
    runs = [Run(d) for d in run_dirs]
    comparisons = []
    for first, second in itertools.combinations(runs, 2):
        keys = check_pairable(first, second)
        policies = [p for p in dict.fromkeys(first.config["policies"] + second.config["policies"])
                    if any(k[1] == p for k in keys)]
        outcomes = [{key: trajectory_outcomes(run.trajectories[key]) for key in keys} for run in (first, second)]
        section: dict[str, Any] = {
            "first": str(first.dir), "second": str(second.dir),
            "differences": {k: list(v) for k, v in differences(first, second).items()},
            "pairs": len(keys), "blocks": len({b for b, _ in keys}), "policies": policies,
            "failure_rate": _contrasts("failure rate", keys, {k: first.final_rate(k) for k in keys},
                                       {k: second.final_rate(k) for k in keys}, policies),
            "development": {name: _contrasts(name, keys, {k: outcomes[0][k][name] for k in keys},
                                             {k: outcomes[1][k][name] for k in keys}, policies)
                            for name in PAIRED_OUTCOMES},
            "acceptance": {},
        }
        for rule in COMPARED_RULES:
            x, y = ({key: run.acceptance(key, rule) for key in keys} for run in (first, second))
            section["acceptance"][rule] = {
                "accepted": {"first": sum(a["accepted"] for a in x.values()),
                             "second": sum(a["accepted"] for a in y.values())},
                "accepted_contrasts": _contrasts("accepted", keys, {k: float(x[k]["accepted"]) for k in keys},
                                                 {k: float(y[k]["accepted"]) for k in keys}, policies),
                "delivered_contrasts": _contrasts("delivered", keys, {k: x[k]["delivered_rate"] for k in keys},
                                                  {k: y[k]["delivered_rate"] for k in keys}, policies)}
        comparisons.append(section)
    return {"runs": [str(r.dir) for r in runs], "simulated": any(r.simulated for r in runs),
            "comparisons": comparisons}


def render_text(report: dict) -> str:
    lines = [SIMULATED_NOTE, ""] if report["simulated"] else []
    for c in report["comparisons"]:
        diffs = c["differences"]
        lines += [f"Paired comparison: first = {c['first']}, second = {c['second']}",
                  "Settings that differ: " + ("; ".join(f"{k}: {a} (first) vs {b} (second)"
                                                        for k, (a, b) in diffs.items())
                                              if diffs else "none (the runs are replicates)"),
                  f"Pairs: {c['pairs']} trajectories (same block and policy; {c['blocks']} blocks x "
                  f"{len(c['policies'])} policies), every difference first minus second", ""]
        lines.append("Failure rate after the last round")
        lines += contrast_lines(c["failure_rate"], "policy: measure")
        for name, contrasts in c["development"].items():
            if contrasts:
                lines += ["", f"Development outcome {name}"]
                lines += contrast_lines(contrasts, "policy: measure")
        lines += ["", "Acceptance rules applied to each run's recorded candidates, stopping at the first acceptance: "
                  "accepted (1/0 per trajectory; p sign = exact two-sided McNemar over the discordant pairs, "
                  "lower,higher = pairs only the second / only the first run accepted) and the delivered "
                  "failure rate"]
        for rule, r in c["acceptance"].items():
            lines += ["", f"{rule}: accepted {r['accepted']['first']} (first) and {r['accepted']['second']} (second) "
                      f"of {c['pairs']} trajectories"]
            lines += contrast_lines(r["accepted_contrasts"] + r["delivered_contrasts"], "policy: measure")
        lines.append("")
    return "\n".join(lines).rstrip()
