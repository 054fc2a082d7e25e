"""Diagnostics beside the release gate's decision: how the result depends on a few clusters of tasks.

The gate's decision is the exact one-sided McNemar test over tasks (autosaddler/gate.py), which
treats the release tasks as independent. They are not quite: in the katas pack every task is a
mutant of one of a few katas, and mutants of one kata share a program and a reference. These
diagnostics regroup the same paired outcomes by cluster and never change the decision:

- the cluster of a task is its `kata` from the task's metadata (task.toml), else the middle of a
  pack-shaped id (`katas-lru_cache-m01` -> `lru_cache`: the id without its pack prefix and its
  last `-` part), else the task itself; `ClusterDiagnostics.grouping` says which was used;
- per cluster: tasks, challenger-only wins and baseline-only losses;
- a sign-flip (permutation) test over the clusters' differences (wins - losses): under no effect a
  cluster's difference is as likely to have either sign; one-sided p = P(T* >= T) for T the sum of
  the differences, over all 2^G sign patterns when G <= EXACT_CLUSTERS, else over RESAMPLES seeded
  random patterns (the observed pattern counted);
- a cluster bootstrap 95% interval of the difference in success rate: RESAMPLES draws of G clusters
  with replacement (seed SEED), each draw's difference is its summed (challenger - baseline) over
  its summed tasks; percentile interval;
- how many gates in the release ledger had already looked at tasks of the same pack before this
  one (the more looks, the less a single p-value means).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from autosaddler.gate import PairedOutcome

RESAMPLES = 10_000
SEED = 42
EXACT_CLUSTERS = 16


@dataclass(frozen=True)
class ClusterRow:
    cluster: str
    tasks: int
    wins: int        # challenger-only successes
    losses: int      # baseline-only successes


@dataclass(frozen=True)
class ClusterDiagnostics:
    grouping: str
    rows: tuple[ClusterRow, ...]
    sign_flip_p: float | None      # None: no cluster differs
    sign_flip_patterns: str        # "all 128 sign patterns" or "10000 seeded random sign patterns"
    ci95: tuple[float, float]      # cluster bootstrap, difference in success rate
    earlier_gates: int | None      # None: not known (decided from a CSV, without the ledger)

    def to_json(self) -> dict:
        return asdict(self) | {"rows": [asdict(r) for r in self.rows], "ci95": list(self.ci95)}


def cluster_of(task_id: str, kata: str | None) -> tuple[str, str]:
    """(the task's cluster, how it was found)."""
    if kata:
        return kata, "the `kata` of each task's metadata"
    parts = task_id.split("-")
    if len(parts) >= 3:
        return "-".join(parts[1:-1]), "the task id without its pack prefix and last part (pack-CLUSTER-mNN)"
    return task_id, "each task on its own (no kata in the metadata, no pack-CLUSTER-mNN id)"


def sign_flip_p(diffs: Sequence[int], resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float | None, str]:
    """One-sided p of the sum of cluster differences under random signs, and which patterns were used."""
    d = np.array([x for x in diffs if x != 0], dtype=float)   # a zero difference has no sign to flip
    if d.size == 0:
        return None, "no cluster differs"
    observed = d.sum()
    if d.size <= EXACT_CLUSTERS:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=d.size)))
        described = f"all {len(signs)} sign patterns of the {d.size} clusters that differ"
    else:
        rng = np.random.default_rng(seed)
        signs = np.vstack([np.ones(d.size), rng.choice((1.0, -1.0), size=(resamples - 1, d.size))])
        described = f"{resamples} seeded random sign patterns (seed {seed}) of {d.size} clusters"
    totals = signs @ d
    return float(np.mean(totals >= observed - 1e-9)), described


def cluster_bootstrap(rows: Sequence[ClusterRow], resamples: int = RESAMPLES, seed: int = SEED) -> tuple[float, float]:
    diff = np.array([r.wins - r.losses for r in rows], dtype=float)
    size = np.array([r.tasks for r in rows], dtype=float)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(rows), size=(resamples, len(rows)))
    estimates = diff[idx].sum(axis=1) / size[idx].sum(axis=1)
    lo, hi = np.percentile(estimates, [2.5, 97.5])
    return float(lo), float(hi)


def diagnose_clusters(outcomes: Sequence[PairedOutcome], katas: Mapping[str, str | None] | None = None,
                      earlier_gates: int | None = None) -> ClusterDiagnostics:
    """`katas`: task id -> the kata its metadata names (None or missing: found from the id)."""
    groups: dict[str, list[PairedOutcome]] = {}
    ways = set()
    for o in outcomes:
        cluster, way = cluster_of(o.task, (katas or {}).get(o.task))
        ways.add(way)
        groups.setdefault(cluster, []).append(o)
    rows = tuple(ClusterRow(name, len(g), sum(o.challenger > o.baseline for o in g),
                            sum(o.challenger < o.baseline for o in g)) for name, g in sorted(groups.items()))
    p, patterns = sign_flip_p([r.wins - r.losses for r in rows])
    return ClusterDiagnostics(grouping="; ".join(sorted(ways)), rows=rows, sign_flip_p=p, sign_flip_patterns=patterns,
                              ci95=cluster_bootstrap(rows), earlier_gates=earlier_gates)


def render_clusters(diag: ClusterDiagnostics) -> list[str]:
    """The diagnostics as lines for the terminal and gate_report.md (labelled: they decide nothing)."""
    name_width = max((len(r.cluster) for r in diag.rows), default=0)
    p = "n/a (no cluster differs)" if diag.sign_flip_p is None else f"{diag.sign_flip_p:.4f}"
    lines = [
        "diagnostics (do not decide; the decision above is the exact McNemar test):",
        f"  clusters: {len(diag.rows)}, grouped by {diag.grouping}",
        "  per cluster: challenger-only wins +, baseline-only wins -, of its tasks",
        *(f"    {r.cluster:<{name_width}}  +{r.wins} -{r.losses} of {r.tasks}" for r in diag.rows),
        f"  cluster sign-flip test, one-sided p = {p} ({diag.sign_flip_patterns})",
        f"  95% cluster bootstrap CI: [{100 * diag.ci95[0]:+.1f}, {100 * diag.ci95[1]:+.1f}] points "
        f"({RESAMPLES} resamples of clusters, seed {SEED})",
    ]
    if diag.earlier_gates is not None:
        lines.append(f"  earlier gates on tasks of this pack in the release ledger: {diag.earlier_gates}")
    return lines
