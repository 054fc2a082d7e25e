"""Running traces for the loop: the trusted reference in-process, committed candidates isolated.

The executor owns isolation for every domain: a domain describes behaviour (its reference, its
loss, its candidate's module file and entry class) and `TraceExecutor` runs candidates through a
`CandidateRunner`, the sandbox of gtdd/isolation/ unless a test injects an in-process double. It
also states the execution configuration every commitment records.

Both sides are deterministic functions of (source, trace) -- every trace runs in a fresh process
under CPU-time limits (gtdd/isolation/) -- so results are cached: the reference by trace id, a
candidate by (sha256 of its source, trace id). A harness error (the wall-clock backstop fired: no
verdict) is never cached; the use that met it counts the trace as failed, conservatively, and
`harness_errors` counts such executions. The executor is shared by concurrently running blocks
(`gtdd experiment --jobs`), hence the lock. The cache is what makes the paired experiment
affordable -- every block's first module is shared by all policies, and the simulated coder often
returns to a module it wrote before.

A `Failure` is the evaluator's reading of one failing execution: where the candidate first departs
from the reference, whether that is a wrong reply (mismatch) or a failed execution (an exception
class, "timeout", "import", a wrong number of replies), and the family of the divergent command.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from gtdd.domains.base import HARNESS_ERRORS, Domain, Trace, TraceResult
from gtdd.isolation import SandboxRunner

MISMATCH, EXECUTION = "mismatch", "execution"
WRONG_REPLY_COUNT = "reply-count"  # no exception, but more or fewer replies than operations


class EvaluatorError(RuntimeError):
    """The trusted side failed (the reference raised on a trace): the execution is invalid."""


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()


@dataclass(frozen=True)
class Failure:
    kind: str  # MISMATCH or EXECUTION
    op_index: int  # index of the first operation whose outcome differs
    error: str | None  # the error class of an execution failure
    family: str  # family of the divergent command (the trace's own label past its end)
    command: str | None
    expected: TraceResult
    observed: TraceResult

    @property
    def mechanism(self) -> str:
        """What went wrong, coarsely: the standard feedback rule spreads its picks over these."""
        if self.kind == EXECUTION:
            return f"execution:{self.error}"
        want = self.expected.replies[self.op_index]
        got = self.observed.replies[self.op_index]
        return f"mismatch:{self.command}:{_json_kind(want)}->{_json_kind(got)}"


def _json_kind(value: Any) -> str:
    if isinstance(value, dict) and set(value) == {"error"}:
        return "error-reply"
    if isinstance(value, bool):
        return "bool"
    if value is None:
        return "null"
    return {int: "number", float: "number", str: "string", list: "array", tuple: "array",
            dict: "object"}.get(type(value), type(value).__name__)


def failure_of(domain: Domain, trace: Trace, expected: TraceResult, observed: TraceResult) -> Failure | None:
    """None when the candidate agrees with the reference on every operation."""
    at = domain.first_divergence(expected, observed)
    if at is None:
        return None
    command = trace.ops[at]["cmd"] if at < len(trace.ops) else None
    family = domain.family_of_op(trace.ops[at]) if at < len(trace.ops) else trace.family
    if at < len(observed.replies) and at < len(expected.replies):
        return Failure(MISMATCH, at, None, family, command, expected, observed)
    error = observed.error or WRONG_REPLY_COUNT
    return Failure(EXECUTION, at, error, family, command, expected, observed)


class CandidateRunner(Protocol):
    """Runs an untrusted candidate module on traces: one TraceResult per trace, in order."""

    def run(self, module_source: str, traces: Sequence[Trace], module_file: str, entry: str) -> list[TraceResult]: ...
    def config(self) -> dict: ...  # what decides its verdicts (sandbox, limits, versions): committed


class TraceExecutor:
    """Cached execution of traces on the reference and on candidate sources."""

    def __init__(self, domain: Domain, per_trace_timeout_s: float = 1.0, sandbox: str | None = None,
                 runner: CandidateRunner | None = None):
        """`sandbox`: the command's --sandbox (None: the default), passed explicitly to the sandbox
        runner; `runner` replaces the sandbox (tests run a fake domain's candidates in-process)."""
        self.domain = domain
        self.runner = runner or SandboxRunner.for_timeout(per_trace_timeout_s, sandbox)
        self._reference: dict[str, TraceResult] = {}
        self._candidate: dict[tuple[str, str], TraceResult] = {}
        self._lock = threading.Lock()
        self.candidate_executions = 0  # traces actually run on candidates (cache misses)
        self.harness_errors = 0  # executions that ended without a verdict (not cached)

    def execution_config(self) -> dict:
        """Everything besides the candidate's files that decides a verdict: the domain, its candidate's
        module and entry class, its loss, and the runner's sandbox, limits and versions."""
        d = self.domain
        return {"domain": d.name, "module": d.module_name, "entry": d.entry_class, **self.runner.config(),
                "loss": d.loss}

    def run(self, source: str, traces: Sequence[Trace]) -> list[TraceResult]:
        """The candidate `source` run on `traces` by the runner, uncached and uncounted (a coder
        double checking variants of its own code uses it; `candidate` is the loop's cached use)."""
        return self.runner.run(source, traces, self.domain.module_name, self.domain.entry_class)

    def reference(self, traces: Sequence[Trace]) -> list[TraceResult]:
        with self._lock:
            missing = list({t.id: t for t in traces if t.id not in self._reference}.values())
        if missing:
            results = self.domain.reference_results(missing)
            for trace, result in zip(missing, results):
                if result.error is not None:
                    raise EvaluatorError(f"the reference failed on trace {trace.id}: {result.error}")
            with self._lock:
                self._reference.update((t.id, r) for t, r in zip(missing, results))
        with self._lock:
            return [self._reference[t.id] for t in traces]

    def candidate(self, source: str, traces: Sequence[Trace]) -> list[TraceResult]:
        key = source_hash(source)
        with self._lock:
            known = {t.id: self._candidate[(key, t.id)] for t in traces if (key, t.id) in self._candidate}
        missing = list({t.id: t for t in traces if t.id not in known}.values())
        if missing:
            results = self.run(source, missing)
            with self._lock:
                self.candidate_executions += len(missing)
                for trace, result in zip(missing, results):
                    known[trace.id] = result
                    if result.error in HARNESS_ERRORS:
                        self.harness_errors += 1
                    else:
                        self._candidate[(key, trace.id)] = result
        return [known[t.id] for t in traces]

    def failures(self, source: str, traces: Sequence[Trace]) -> list[Failure | None]:
        """One entry per trace: its Failure, or None when it passes."""
        expected = self.reference(traces)
        observed = self.candidate(source, traces)
        return [failure_of(self.domain, t, e, o) for t, e, o in zip(traces, expected, observed)]

