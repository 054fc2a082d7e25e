"""Sequential audits that take one observation at a time and say when they cross a Ville threshold.

`CandidateSupermartingale` inspects the audit of ONE committed candidate case by case:
W_r = I_r / q_{N,rho}(r), where I_r says the first r draws (uniform, without replacement) all
passed.
Under the null K >= K_rho it is a nonnegative supermartingale from 1, so by Ville's inequality the
chance that it ever reaches 1/epsilon is at most epsilon. N - K_rho + 1 passing draws settle the
question outright (q = 0). A new candidate must start a new process with its own allocation.

`CandidateSequenceEProcess` multiplies audit factors eta_t = A_t / q_t over DIFFERENT candidates:
Z_t = prod eta_s, with Pr(ever Z_t >= 1/alpha) <= alpha under H0 "every selected candidate is above
tolerance". Caveat: crossing refutes only that joint hypothesis. The evidence may come from earlier
good candidates, so it does NOT certify the current candidate. With the conservative factors
(1 - rho)^{-n} and threshold 800, 130 passing draws from earlier correct candidates give
0.95^{-130} ~ 786.92; one more passing draw from a candidate that fails 26 of 500 cases (it passes
with probability 0.948) lifts Z to ~ 828.34 and crosses while the current candidate is bad.
Use the per-candidate audit or supermartingale to accept a candidate.
"""

from __future__ import annotations

import math
import sys
from fractions import Fraction

from gtdd.stats import params
from gtdd.stats.acceptance import failure_threshold, resolve_method
from gtdd.stats.params import Method, Number
from testhelix.core.errors import UserError


class CandidateSupermartingale:
    """W_r for one candidate's case-by-case audit; `observe(failed)` after each draw."""

    def __init__(
        self, population: int, tolerance: Number, epsilon: Number, method: Method = "auto"
    ) -> None:
        self.population = params.count(population, "population", 1)
        self.failure_threshold = failure_threshold(population, tolerance)
        self.epsilon = params.open_unit(epsilon, "epsilon")
        self.exact = resolve_method(method, population) == "exact"
        self.draws = 0
        self.failed = False
        self.crossed_at: int | None = None
        self._proven = False  # N - K_rho + 1 passing draws seen before any failure
        self._log_q = 0.0  # log q_{N,rho}(draws)
        self._q = Fraction(1)  # exact q_{N,rho}(draws), kept only in exact mode

    @property
    def endpoint(self) -> int:
        """Passing draws that prove the candidate within tolerance: N - K_rho + 1."""
        return self.population - self.failure_threshold + 1

    @property
    def value(self) -> float:
        """W_r (inf once the endpoint is reached without a failure)."""
        if self._proven:
            return math.inf
        if self.failed:
            return 0.0
        return _exp(-self._log_q)

    @property
    def crossed(self) -> bool:
        return self.crossed_at is not None

    @property
    def within_tolerance_proven(self) -> bool:
        return self._proven

    def observe(self, failed: bool) -> bool:
        """Record the next draw; returns whether W has reached 1/epsilon (now or earlier)."""
        if self.draws >= self.population:
            raise UserError(f"all {self.population} cases have already been drawn")
        r = self.draws
        self.draws += 1
        if failed:
            self.failed = True
        elif not self.failed and r < self.endpoint:
            passing = self.population - self.failure_threshold - r
            factor_num, factor_den = passing, self.population - r  # q(r+1) / q(r)
            if passing == 0:
                self._log_q = -math.inf
                self._proven = True
            else:
                self._log_q += math.log1p(-self.failure_threshold / factor_den)
            if self.exact:
                self._q *= Fraction(factor_num, factor_den)
        if self.crossed_at is None and not self.failed and self._reached():
            self.crossed_at = self.draws
        return self.crossed

    def _reached(self) -> bool:
        # W_r >= 1/epsilon  <=>  q(r) <= epsilon (W_r = 1 / q(r) while no failure is seen)
        if self.exact:
            return self._q <= self.epsilon
        return self._log_q <= params.log_of(self.epsilon)


class CandidateSequenceEProcess:
    """Z_t over successive candidates' audits; see the module docstring for what crossing means."""

    def __init__(self, alpha: Number) -> None:
        self.alpha = params.open_unit(alpha, "alpha")
        self.audits = 0
        self.log_value = 0.0
        self._exact: Fraction | None = Fraction(1)  # dropped once a float bound is supplied
        self.crossed_at: int | None = None

    @property
    def value(self) -> float:
        return _exp(self.log_value)

    @property
    def crossed(self) -> bool:
        return self.crossed_at is not None

    def observe(self, passed: bool, null_pass_bound: Number) -> bool:
        """Record audit t: `passed` is A_t and `null_pass_bound` bounds its pass chance under H0.

        Use q_{N,rho}(n_t) (exact) or the conservative (1 - rho)^{n_t}."""
        bound = params.positive_probability(null_pass_bound, "null_pass_bound")
        self.audits += 1
        if not passed:
            self.log_value = -math.inf
            self._exact = Fraction(0)
        elif self.log_value > -math.inf:
            self.log_value -= params.log_of(bound)
            if self._exact is not None:
                exact_input = isinstance(null_pass_bound, (Fraction, int))
                self._exact = self._exact / bound if exact_input else None
        if self.crossed_at is None and self._reached():
            self.crossed_at = self.audits
        return self.crossed

    def _reached(self) -> bool:
        if self._exact is not None:
            return self._exact * self.alpha >= 1
        return self.log_value >= -params.log_of(self.alpha)


def _exp(log_value: float) -> float:
    """e ** log_value, inf where it exceeds the largest float (a value that large has long crossed
    any threshold a user can give; its log is exact)."""
    return math.inf if log_value > _LOG_FLOAT_MAX else math.exp(log_value)


_LOG_FLOAT_MAX = math.log(sys.float_info.max)
