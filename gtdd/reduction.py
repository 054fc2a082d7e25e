"""Counterexample reduction (docs/design.md §8).

A failing trace is shortened in two stages: the shortest failing prefix, then passes of
single-operation deletion. Every shorter trace is validated by the schema before it is run and
replaces the current one only after execution shows the *designated* failure again:

* a mismatch keeps the identity of the divergent operation -- the same operation of the original
  trace must be where the shorter trace first diverges, even though its position moves;
* an execution failure keeps its error class (exception type name, "timeout", ...).

Budget: the prefix stage runs at most L prefixes, each deletion pass at most L variants and a
successful pass removes one operation, so at most L passes: at most L + L^2 executions per original
(L = the schema's trace-length limit). The budget is also enforced as a hard cap.

Batching. Every candidate execution costs a sandboxed subprocess, so a deletion pass runs all its
single-operation variants in one batch and keeps the lowest-index deletion that verifies. The other
deletions that verified in that pass are then tried as a chain -- the trace without the first two
of them, without the first three, ... -- each link one operation shorter than the previous one and
accepted only when it verifies and every earlier link did; one batch again. Each chain link is a
single-operation deletion pass of one variant, so the accounting above still holds. The reductions
of all pool traces advance in lockstep and share one subprocess per step.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from gtdd.domains.base import Trace
from gtdd.execution import MISMATCH, Failure, TraceExecutor

Validate = Callable[[Sequence[dict]], list]


@dataclass(frozen=True)
class Reduction:
    original: Trace
    original_failure: Failure
    reduced: Trace  # labelled with the family of the original failure
    failure: Failure  # the designated failure as the reduced trace shows it
    kept: tuple[int, ...]  # indices into the original trace of the operations kept
    executions: int


class _Reducer:
    """Reduction of one trace as a little state machine: `proposals()` then `feed(failures)`."""

    def __init__(self, trace: Trace, failure: Failure, validate: Validate, max_ops: int):
        self.original, self.original_failure = trace, failure
        self.validate, self.max_ops = validate, max_ops
        self.kept = tuple(range(len(trace.ops)))
        self.failure = failure
        self.executions = 0
        self.stage = "prefix-first"
        self._pending: list[tuple[int, ...]] = []
        self._chain: list[tuple[int, ...]] = []

    @property
    def done(self) -> bool:
        return self.stage == "done"

    def _keeps_designated(self, kept: tuple[int, ...], failure: Failure | None) -> bool:
        if failure is None or failure.kind != self.original_failure.kind:  # None: the trace passed
            return False
        if failure.kind == MISMATCH:
            return kept[failure.op_index] == self.original_failure.op_index
        return failure.error == self.original_failure.error

    def _valid(self, kept: tuple[int, ...]) -> bool:
        return bool(kept) and not self.validate([self.original.ops[i] for i in kept])

    def proposals(self) -> list[Trace]:
        n = len(self.kept)
        if self.stage == "prefix-first":
            # Executions are deterministic, so the prefix ending at the divergent operation is the
            # natural first guess; it is still verified like every other shorter trace.
            cut = min(self.original_failure.op_index + 1, n - 1)
            options = [self.kept[:cut]] if cut >= 1 else []
        elif self.stage == "prefix-rest":
            first = self.original_failure.op_index + 2
            options = [self.kept[:m] for m in range(max(first, 1), n)]
        elif self.stage == "chain":
            options = []
            for link in self._chain:
                if not self._valid(link):
                    break  # a link must verify after all earlier ones; an invalid one ends the chain
                options.append(link)
        else:  # a deletion pass
            options = [self.kept[:i] + self.kept[i + 1:] for i in range(n)] if n > 1 else []
            options = [k for k in options if self._valid(k)]
        self._pending = options[:max(0, budget(max(self.max_ops, len(self.original.ops))) - self.executions)]
        if not self._pending:
            self._advance(found=False)
            return self.proposals() if not self.done else []
        self.executions += len(self._pending)
        return [self._trace(k) for k in self._pending]

    def feed(self, failures: Sequence[Failure | None]) -> None:
        verified = [(kept, f) for kept, f in zip(self._pending, failures)
                    if f is not None and self._keeps_designated(kept, f)]
        if self.stage == "chain":
            for kept, failure in zip(self._pending, failures):
                if failure is None or not self._keeps_designated(kept, failure):
                    break
                self.kept, self.failure = kept, failure
            self.stage = "delete"
            return
        if not verified:
            self._advance(found=False)
            return
        before = self.kept
        self.kept, self.failure = verified[0]
        if self.stage == "delete":
            # Chain the other verified deletions of this pass (see the module docstring).
            dropped = [next(i for i in before if i not in kept) for kept, _ in verified]
            self._chain = [tuple(i for i in before if i not in dropped[:j]) for j in range(2, len(dropped) + 1)]
            if self._chain:
                self.stage = "chain"
                return
        self._advance(found=True)

    def _advance(self, found: bool) -> None:
        if self.stage == "prefix-first":
            self.stage = "delete" if found else "prefix-rest"
        elif self.stage in ("prefix-rest", "chain"):
            self.stage = "delete"
        elif not found or len(self.kept) <= 1:
            self.stage = "done"

    def _trace(self, kept: tuple[int, ...]) -> Trace:
        return Trace.of([self.original.ops[i] for i in kept], self.original_failure.family)

    def result(self) -> Reduction:
        return Reduction(self.original, self.original_failure, self._trace(self.kept), self.failure,
                         self.kept, self.executions)


def budget(max_ops: int) -> int:
    """The most executions reduction may spend on one original trace: L + L^2."""
    return max_ops + max_ops * max_ops


def reduce_failures(executor: TraceExecutor, source: str, pool: Sequence[tuple[Trace, Failure]],
                    validate: Validate, max_ops: int) -> list[Reduction]:
    """Reduce every (trace, failure) of the pool against the candidate `source`, in lockstep."""
    reducers = [_Reducer(trace, failure, validate, max_ops) for trace, failure in pool]
    while True:
        batch: list[tuple[_Reducer, list[Trace]]] = []
        for r in reducers:
            if not r.done:
                traces = r.proposals()
                if traces:
                    batch.append((r, traces))
        if not batch:
            break
        flat = [t for _, traces in batch for t in traces]
        results = executor.failures(source, flat)
        at = 0
        for r, traces in batch:
            r.feed(results[at:at + len(traces)])
            at += len(traces)
    out = [r.result() for r in reducers]
    for reduction in out:
        # The budget argument in the module docstring, checked rather than trusted.
        assert reduction.executions <= budget(max(max_ops, len(reduction.original.ops))), reduction.executions
    return out
