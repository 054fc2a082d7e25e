"""Domain-independent isolation of candidate executions: one fresh sandboxed process per trace.

A domain whose candidates are module files with an entry class answering `execute(cmd, args)`
reuses this as it is (the key-value store does; see tests/plugins/sample_plugin/sample_plugin/counter.py for an
out-of-tree domain that does too). runner.py is the harness side, zygote.py runs in the sandbox.
"""

from gtdd.isolation.runner import EvaluatorError, IsolationLimits, execution_config, run_traces

__all__ = ["EvaluatorError", "IsolationLimits", "execution_config", "run_traces"]
