"""Sizes for a hidden test set that gives repeated feedback, and for uniform generation.

Theorem 4.5: with at most L_s possible feedback messages in round s, the chance that some round
accepts a candidate above tolerance is at most q_{N,rho}(n) * H_T, H_T = sum_{t=1}^T prod_{s<t} L_s.
Reporting raw subsets of at most k cases plus an acceptance bit gives L = 2 sum_{i<=k} C(N, i)
(drop the 2 when the bit is unobserved). The exponential condition (14) bounds L by 2 (N+1)^k and
q by (1 - rho)^n.

Proposition 4.8: a fresh uniform batch of m cases in each round bounds each round's false
acceptance by q_{N,rho}(m), and T rounds by T q_{N,rho}(m).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from gtdd.stats import params
from gtdd.stats.acceptance import failure_threshold, false_acceptance_bound, resolve_method
from gtdd.stats.audit import smallest_exact_size, smallest_power
from gtdd.stats.params import Method, Number


@dataclass(frozen=True)
class HistoryBound:
    exact_n: int  # least n with q(n) * H_T <= alpha (equation 13)
    exponential_n: int  # least n meeting equation (14); may exceed the population
    messages_per_round: int  # L
    histories: int  # H_T


def messages_per_round(population: int, report_limit: int, accept_bit: bool = True) -> int:
    """L = (2 if the acceptance bit is observed else 1) * sum_{i=0}^{min(k, N)} C(N, i)."""
    subsets = sum(math.comb(population, i) for i in range(min(report_limit, population) + 1))
    return 2 * subsets if accept_bit else subsets


def history_count(messages: int, rounds: int) -> int:
    """H_T = sum_{t=1}^{T} L^{t-1}: feedback histories that can precede some round."""
    return sum(messages**t for t in range(rounds))


def history_bound(
    population: int,
    tolerance: Number,
    alpha: Number,
    rounds: int,
    report_limit: int,
    accept_bit: bool = True,
    method: Method = "auto",
) -> HistoryBound:
    """Hidden-test-set sizes that keep false acceptance over T rounds of feedback below alpha."""
    k_rho = failure_threshold(population, tolerance)
    rho = params.open_unit(tolerance, "tolerance")
    a = params.open_unit(alpha, "alpha")
    params.count(rounds, "rounds", 1)
    params.count(report_limit, "report_limit")
    messages = messages_per_round(population, report_limit, accept_bit)
    histories = history_count(messages, rounds)
    exact_n, _ = smallest_exact_size(
        population, k_rho, 0, a / histories, resolve_method(method, population)
    )
    per_round_bound = (2 if accept_bit else 1) * (population + 1) ** report_limit
    expo_eps = a / (rounds * Fraction(per_round_bound) ** (rounds - 1))
    return HistoryBound(exact_n, smallest_power(1 - rho, expo_eps), messages, histories)


@dataclass(frozen=True)
class UniformGenerationBound:
    per_round: float  # q_{N,rho}(m)
    over_rounds: float  # min(1, T q_{N,rho}(m))


def uniform_generation_bound(
    population: int, tolerance: Number, batch: int, rounds: int, method: Method = "auto"
) -> UniformGenerationBound:
    """False-acceptance bounds for fresh uniform batches of m cases per round (Proposition 4.8)."""
    params.count(rounds, "rounds", 1)
    per_round = false_acceptance_bound(population, tolerance, batch, 0, method)
    return UniformGenerationBound(per_round, min(1.0, rounds * per_round))
