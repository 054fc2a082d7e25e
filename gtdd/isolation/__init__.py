"""Domain-independent isolation of candidate executions: one fresh sandboxed process per trace.

The trace executor (gtdd/execution.py) runs every domain's candidates through `SandboxRunner`; a
domain only names its candidate's module file and entry class (an object whose instances answer
`execute(cmd, args)`), so no domain imports this package. runner.py is the harness side, zygote.py
runs in the sandbox.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from gtdd.domains.base import Trace, TraceResult
from gtdd.isolation.runner import EvaluatorError, IsolationLimits, execution_config, run_traces


@dataclass(frozen=True)
class SandboxRunner:
    """The executor's default candidate runner: the sandbox `sandbox` names (None: the machine's
    default; see testhelix/execution/seam.py) under `limits`."""

    limits: IsolationLimits
    sandbox: str | None = None

    @classmethod
    def for_timeout(cls, per_trace_timeout_s: float, sandbox: str | None = None) -> SandboxRunner:
        return cls(IsolationLimits.for_timeout(per_trace_timeout_s), sandbox)

    def run(self, module_source: str, traces: Sequence[Trace], module_file: str, entry: str) -> list[TraceResult]:
        return run_traces(module_source, traces, self.limits, module_file=module_file, entry=entry,
                          sandbox_kind=self.sandbox)

    def config(self) -> dict:
        """Sandbox, limits, interpreter and isolation code: part of every commitment."""
        return execution_config(self.limits, self.sandbox)


__all__ = ["EvaluatorError", "IsolationLimits", "SandboxRunner", "execution_config", "run_traces"]
