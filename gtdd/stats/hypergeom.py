"""Two evaluations of the hypergeometric probabilities behind every audit bound.

A size-n sample drawn without replacement from N cases, K of them failing, contains X failing cases
with X ~ Hyp(N, K, n). The audits need P(X = 0) = C(N-K, n) / C(N, n) and the lower tail
P(X <= c) (Propositions 4.1 and 4.2 of the GTDD paper).

* The exact method works on Python's big integers and returns unreduced (numerator, denominator)
  pairs, so a comparison with a rational error allocation is exact.
* The log-space method sums log1p terms of the product form. It is written by hand rather than
  calling scipy.stats.hypergeom because, measured against the exact method at N = 10,000,000,
  scipy's cdf/logcdf were off by 6e-10 to 1.3e-8 relative (gammaln differences of numbers near
  1.5e8 lose about eight digits), while the product form stays within a few ulps.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import logsumexp

Ratio = tuple[int, int]


# --- exact --------------------------------------------------------------------------------


def exact_zero_failure(population: int, failures: int, sample: int) -> Ratio:
    """P(X = 0) = C(N-K, n) / C(N, n) as an unreduced ratio of integers."""
    passing = population - failures
    if sample > passing:
        return (0, 1)
    # The same ratio equals C(N-n, K) / C(N, K); use whichever falling factorial is shorter.
    if sample <= failures:
        return (math.perm(passing, sample), math.perm(population, sample))
    return (math.perm(population - sample, failures), math.perm(population, failures))


def exact_lower_tail(population: int, failures: int, sample: int, allowed: int) -> Ratio:
    """P(X <= c) as an unreduced ratio of integers (equation 11)."""
    base = exact_zero_failure(population, failures, sample)
    if allowed == 0:
        return base
    passing = population - failures
    top_h = min(allowed, sample, failures)
    if sample <= passing:
        # P(X <= c) = P(X = 0) * sum_h prod_{j<h} (K-j)(n-j) / ((j+1)(N-K-n+j+1)). Over the common
        # denominator D = prod_{j<c'} (j+1)(N-K-n+j+1) every term is a product of small integers,
        # far cheaper than the binomials C(N, n) of the direct sum.
        ups = [(failures - j) * (sample - j) for j in range(top_h)]
        downs = [(j + 1) * (passing - sample + j + 1) for j in range(top_h)]
        suffix = [1] * (top_h + 1)  # suffix[h] = prod(downs[h:])
        for j in range(top_h - 1, -1, -1):
            suffix[j] = suffix[j + 1] * downs[j]
        total, prefix = 0, 1  # prefix = prod(ups[:h])
        for h in range(top_h + 1):
            total += prefix * suffix[h]
            if h < top_h:
                prefix *= ups[h]
        return (base[0] * total, base[1] * suffix[0])
    top = sum(
        math.comb(failures, h) * math.comb(passing, sample - h)
        for h in range(min(allowed, sample, failures) + 1)
    )
    return (top, math.comb(population, sample))


def ratio_le(ratio: Ratio, bound_num: int, bound_den: int) -> bool:
    """num/den <= bound_num/bound_den without building (and reducing) a Fraction."""
    num, den = ratio
    return num * bound_den <= bound_num * den


def ratio_float(ratio: Ratio) -> float:
    # int / int is correctly rounded in Python even when both have thousands of digits.
    return ratio[0] / ratio[1]


# --- log space ----------------------------------------------------------------------------


def log_zero_failure(population: int, failures: int, sample: int) -> float:
    """log P(X = 0), or -inf when the sample cannot avoid every failure."""
    passing = population - failures
    if sample > passing:
        return -math.inf
    if sample == 0 or failures == 0:
        return 0.0
    if sample <= failures:
        steps = np.arange(sample, dtype=np.float64)
        terms = np.log1p(-failures / (population - steps))
    else:
        steps = np.arange(failures, dtype=np.float64)
        terms = np.log1p(-sample / (population - steps))
    return float(np.sum(terms))


def log_pmf_table(population: int, failures: int, sample: int, upto: int) -> tuple[int, np.ndarray]:
    """(h_lo, log P(X = h) for h = h_lo .. min(upto, n, K)); h_lo is the least possible count."""
    passing = population - failures
    h_lo = max(0, sample - passing)
    h_hi = min(upto, sample, failures)
    if h_hi < h_lo:
        return h_lo, np.empty(0)
    if h_lo == 0:
        start = log_zero_failure(population, failures, sample)
    else:
        # Every passing case is sampled, i.e. the N-n cases left out are all failures.
        start = log_zero_failure(population, passing, population - sample)
    h = np.arange(h_lo, h_hi, dtype=np.float64)
    # P(X = h+1) / P(X = h) = (K-h)(n-h) / ((h+1)(N-K-n+h+1)), every factor positive here.
    steps = (
        np.log(failures - h) + np.log(sample - h) - np.log(h + 1) - np.log(passing - sample + h + 1)
    )
    logs = np.empty(h_hi - h_lo + 1)
    logs[0] = start
    np.cumsum(steps, out=logs[1:])
    logs[1:] += start
    return h_lo, logs


def log_lower_tail(population: int, failures: int, sample: int, allowed: int) -> float:
    """log P(X <= c), or -inf when more than c failures are certain."""
    if allowed == 0:
        return log_zero_failure(population, failures, sample)
    _, logs = log_pmf_table(population, failures, sample, allowed)
    if logs.size == 0:
        return -math.inf
    return float(min(0.0, logsumexp(logs)))
