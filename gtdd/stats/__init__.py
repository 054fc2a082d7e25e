"""Exact finite-population statistics for GTDD acceptance decisions.

Modules:
  acceptance  - acceptance probability of a fixed candidate, K_rho, q_{N,rho}(n), known-test size
  allocation  - splitting alpha: one candidate, alpha/(MT), alpha/(MTJ), alpha/(M t(t+1))
  audit       - smallest exact audit size and exponential sufficient size for an allocation
  history     - hidden-test history bound (eqs. 13-14) and uniform generation (Prop. 4.8)
  probing     - the probing lower bound, exact success (eq. 23) and n* (eq. 15)
  sequential  - within-candidate supermartingale W_r and across-candidate e-process Z_t
  recorded    - audit outcomes for recorded trajectories under stopping at first acceptance
  tables      - the paper's Tables 1-4, recomputed
  hypergeom   - the exact (big-integer) and log-space evaluations everything above uses

Probabilities are taken as exact fractions (a float 0.05 is read as 1/20). Populations up to
`EXACT_POPULATION_LIMIT` use exact integer arithmetic by default, larger ones log space; pass
method="exact" or method="log" to choose.
"""

from gtdd.stats.acceptance import (
    EXACT_POPULATION_LIMIT,
    acceptance_probability,
    exact_acceptance_probability,
    exact_false_acceptance_bound,
    failure_threshold,
    false_acceptance_bound,
    known_test_requirement,
    log_acceptance_probability,
)
from gtdd.stats.allocation import ErrorAllocation, family_wise, one_candidate, repository, unbounded
from gtdd.stats.audit import (
    AuditSize,
    audit_size,
    audit_size_for,
    exact_audit_size,
    exponential_audit_size,
)
from gtdd.stats.history import HistoryBound, history_bound, uniform_generation_bound
from gtdd.stats.probing import ProbeResult, probe_size_limit, probe_success
from gtdd.stats.recorded import RecordedAudit, recorded_audit
from gtdd.stats.sequential import CandidateSequenceEProcess, CandidateSupermartingale

__all__ = [
    "EXACT_POPULATION_LIMIT",
    "AuditSize",
    "CandidateSequenceEProcess",
    "CandidateSupermartingale",
    "ErrorAllocation",
    "HistoryBound",
    "ProbeResult",
    "RecordedAudit",
    "acceptance_probability",
    "audit_size",
    "audit_size_for",
    "exact_acceptance_probability",
    "exact_audit_size",
    "exact_false_acceptance_bound",
    "exponential_audit_size",
    "failure_threshold",
    "false_acceptance_bound",
    "family_wise",
    "history_bound",
    "known_test_requirement",
    "log_acceptance_probability",
    "one_candidate",
    "probe_size_limit",
    "probe_success",
    "recorded_audit",
    "repository",
    "unbounded",
    "uniform_generation_bound",
]
