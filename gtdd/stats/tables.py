"""The GTDD paper's Tables 1-4, recomputed from the formulas in this package.

Only the setup is fixed here (N = 500, rho = alpha = 0.05, M = 8 trajectories of T = 4 rounds,
J = 5 families, k = 6 reported cases, probe regions of m = 15, and the rows the paper chose to
show);
every number printed is computed. Table 3's hidden-set sizes are derived where the paper derives
them: the Table 2 sizes, floor(n*), the largest n that meets the risk condition after rounding, and
the paper's extra row n = 200.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction

from gtdd.stats import allocation
from gtdd.stats.acceptance import (
    exact_acceptance_probability,
    failure_threshold,
    known_test_requirement,
)
from gtdd.stats.audit import AuditSize, audit_size_for
from gtdd.stats.history import history_bound
from gtdd.stats.probing import probe_rounding_limit, probe_size_limit, probe_success


@dataclass(frozen=True)
class SeedSetup:
    population: int = 500
    tolerance: Fraction = Fraction(1, 20)
    alpha: Fraction = Fraction(1, 20)
    trajectories: int = 8
    rounds: int = 4
    families: int = 5
    report_limit: int = 6
    region: int = 15
    extra_probe_sizes: tuple[int, ...] = (200,)
    failure_counts: tuple[int, ...] = (0, 1, 5, 10)  # the paper adds K_rho - 1 and K_rho


@dataclass(frozen=True)
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"title": self.title, "columns": self.columns, "rows": self.rows}


def _table2_sizes(s: SeedSetup) -> list[tuple[str, AuditSize]]:
    plans = [
        ("One candidate", allocation.one_candidate(s.alpha)),
        (
            f"Repository over {s.trajectories * s.rounds} rounds",
            allocation.repository(s.alpha, s.trajectories, s.rounds),
        ),
        (
            f"{s.trajectories * s.rounds * s.families} family conclusions",
            allocation.family_wise(s.alpha, s.trajectories, s.rounds, s.families),
        ),
    ]
    return [(label, audit_size_for(plan, s.population, s.tolerance)) for label, plan in plans]


def table1(s: SeedSetup) -> Table:
    n_cases, rho = s.population, s.tolerance
    fresh = audit_size_for(allocation.repository(s.alpha, 1, s.rounds), n_cases, rho).exact_n
    hidden = history_bound(n_cases, rho, s.alpha, s.rounds, s.report_limit).exact_n
    hidden_no_bit = history_bound(n_cases, rho, s.alpha, s.rounds, s.report_limit, False).exact_n
    where = f"n at N={n_cases}, rho=alpha={float(rho):g}, T={s.rounds}, k={s.report_limit}"
    return Table(
        "Table 1: Sufficient acceptance conditions over a common horizon (one family)",
        ["Test selection", "Sufficient size condition", "New cases per round", where],
        [
            ["Known fixed tests", "n >= N - floor(rho N)", "0 after setup",
             str(known_test_requirement(n_cases, rho))],
            ["Hidden fixed tests", "H_T Q(n) <= alpha", "0 after setup",
             f"{hidden} ({hidden_no_bit} without the acceptance bit)"],
            ["Uniform generation", "T Q(m) <= alpha", "m", str(fresh)],
            ["Fresh audit", "T Q(n) <= alpha", "n", str(fresh)],
        ],
    )


def table2(s: SeedSetup) -> Table:
    n_cases, rho = s.population, s.tolerance
    rows = [[label, str(a.exact_n), str(a.exponential_n), f"{a.q:.6g}"]
            for label, a in _table2_sizes(s)]
    return Table(
        "Table 2: Smallest exact audit sizes and exponential sufficient sizes",
        ["Guarantee target", "Exact n", "Exponential n", f"q_{n_cases},{float(rho):g}(n)"],
        rows,
    )


def table3_sizes(s: SeedSetup) -> list[int]:
    sizes = {a.exact_n for _, a in _table2_sizes(s)}
    sizes.add(_table2_sizes(s)[-1][1].exponential_n or 0)
    n_star = probe_size_limit(s.population, s.report_limit, s.rounds, s.tolerance)
    sizes.add(math.floor(n_star))
    sizes.add(probe_rounding_limit(s.population, s.report_limit, s.rounds, s.tolerance))
    sizes.update(s.extra_probe_sizes)
    return sorted(n for n in sizes if n > 0)


def table3(s: SeedSetup) -> Table:
    rows = []
    for n in table3_sizes(s):
        r = probe_success(s.population, n, s.region, s.report_limit, s.rounds, s.tolerance)
        rows.append([str(n), f"{r.union_lower_bound:.4f}", f"{r.exact_success:.4f}"])
    return Table(
        f"Table 3: Success of the {s.rounds - 1}-region probe construction "
        f"(N={s.population}, m={s.region}, k={s.report_limit})",
        ["Hidden test-set size n", "Union lower bound", "Exact success"],
        rows,
    )


def table4(s: SeedSetup) -> Table:
    k_rho = failure_threshold(s.population, s.tolerance)
    sizes = [a.exact_n for _, a in _table2_sizes(s)]
    counts = sorted(set(s.failure_counts) | {k_rho - 1, k_rho})
    rows = []
    for k in counts:
        passes = [exact_acceptance_probability(s.population, k, n) for n in sizes]
        rows.append([str(k), f"{k / s.population:.3f}"] + [f"{float(p):.6f}" for p in passes])
    return Table(
        "Table 4: Exact probabilities that one family's zero-failure audit passes",
        ["Failures", "Risk"] + [f"Pass at n={n}" for n in sizes],
        rows,
    )


def seed_tables(setup: SeedSetup | None = None) -> list[Table]:
    s = setup or SeedSetup()
    return [table1(s), table2(s), table3(s), table4(s)]


def render(tables: list[Table]) -> str:
    """Plain aligned text, one blank line between tables."""
    blocks = []
    for t in tables:
        widths = [max(len(row[i]) for row in [t.columns] + t.rows) for i in range(len(t.columns))]
        lines = [t.title]
        for row in [t.columns] + t.rows:
            lines.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
            if row is t.columns:
                lines.append("  ".join("-" * w for w in widths))
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)
