"""Sandboxed execution of suites on programs.

The executor (`executor.py`) runs a suite on a program tree and returns an `Outcome`
(`outcome.py`); the fork-server pool (`forkserver.py`, `zygote.py`) is its implementation on
Linux namespaces (`sandbox.py`), per-job cgroups (`cgroup.py`), overlay or linked workspaces
(`overlay.py`, `workspace.py`) and an outcome cache (`outcome_cache.py`). Nothing here judges a suite;
judging and metrics live in `testhelix.prism`.
"""
