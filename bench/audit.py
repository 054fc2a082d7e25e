"""Exact big-integer audit arithmetic against log space, and the large-population speed goal.

For N from 500 to 50,000 it times both methods on three computations and prints their ratio
(exact / log), which is what EXACT_POPULATION_LIMIT in gtdd/stats/acceptance.py is chosen from:
  zero-failure  audit size at alpha/160, rho = 0.05 (Table 2's family row)
  c=4           audit size allowing 4 failures at alpha/32, rho = 0.01
  history       hidden-test history bound, T = 4, k = 6, rho = alpha = 0.05 (sizes near N - K_rho)
Both methods must return the same sizes; the script stops if they do not.
The last line, large_population_ms=X, times `gtdd audit-size` for N = 10,000,000 (rho = alpha =
0.05, 160 opportunities) in-process with the default method, best of several runs.

Run: /work/venv/bin/python bench/audit.py
"""

from __future__ import annotations

import time
from collections.abc import Callable
from fractions import Fraction

from gtdd.stats.acceptance import EXACT_POPULATION_LIMIT, resolve_method
from gtdd.stats.audit import audit_size
from gtdd.stats.history import history_bound
from gtdd.stats.params import Method

ALPHA = Fraction(1, 20)
POPULATIONS = [500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000]
LARGE = 10_000_000


def best_ms(run: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best * 1000


def workloads(population: int, method: Method) -> dict[str, Callable[[], int]]:
    return {
        "zero-failure": lambda: audit_size(population, "0.05", ALPHA / 160, 0, method).exact_n,
        "c=4": lambda: audit_size(population, "0.01", ALPHA / 32, 4, method).exact_n,
        "history": lambda: history_bound(population, "0.05", ALPHA, 4, 6, True, method).exact_n,
    }


def main() -> None:
    print(f"auto uses exact arithmetic for N <= {EXACT_POPULATION_LIMIT:,}, log space above")
    header = (
        f"{'N':>7}  {'workload':<12} {'n':>6}  {'exact ms':>9}  {'log ms':>8}  "
        f"{'exact/log':>9}  auto"
    )
    print(header)
    for population in POPULATIONS:
        exact_jobs, log_jobs = workloads(population, "exact"), workloads(population, "log")
        for name in exact_jobs:
            n_exact, n_log = exact_jobs[name](), log_jobs[name]()
            if n_exact != n_log:
                raise SystemExit(f"methods disagree at N={population} {name}: {n_exact} vs {n_log}")
            repeats = 3 if population >= 20_000 else 7
            t_exact = best_ms(exact_jobs[name], repeats)
            t_log = best_ms(log_jobs[name], repeats)
            print(
                f"{population:>7}  {name:<12} {n_exact:>6}  {t_exact:>9.3f}  {t_log:>8.3f}  "
                f"{t_exact / t_log:>9.2f}  {resolve_method('auto', population)}"
            )
    large = best_ms(lambda: audit_size(LARGE, "0.05", ALPHA / 160), 7)
    size = audit_size(LARGE, "0.05", ALPHA / 160)
    print(f"N={LARGE:,}: exact_n={size.exact_n} exponential_n={size.exponential_n} "
          f"q={size.q:.6g} method={size.method}")
    print(f"large_population_ms={large:.3f}")


if __name__ == "__main__":
    main()
