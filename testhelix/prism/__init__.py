"""TestPrism: task + panel format, sandboxed execution of submitted suites, and the metrics.

Modules (import what you need; this package imports nothing heavy on its own):
task.py (Task, load_task, load_pack), importers.py (Harbor, SWE-bench), outcome.py (Limits,
Outcome, classification), sandbox.py (isolation), forkserver.py, workspace.py, cache.py,
executor.py (default_executor), metrics.py, astfeatures.py.
"""
