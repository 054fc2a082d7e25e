"""What an execution backend is (`Executor`) and the optional abilities it may declare.

The seam (seam.py) chooses and builds backends, cached_executor.py wraps every one of them in the outcome
cache, and environments.py gives a backend a sibling pool per task environment (its optional
ability `RunsEnvironments` lives there, next to `PythonEnv`); all three need these Protocols, so
they live below all three (no import circle between them). An optional ability is a
small runtime-checkable Protocol tested with `isinstance`, never a `getattr` probe.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

from testhelix.execution.outcome import Limits, Outcome


class Executor(Protocol):
    runner_version: str  # names the runner and its isolation: part of every outcome-cache key
    workers: int  # executions it runs at once

    def prepare(self, folders: Sequence[Path]) -> None: ...  # cache these trees before they are run
    # coverage=True: pytest runs under coverage.py and the output ends with its line report
    # (coverage_run.py); such runs are cached apart from plain ones.
    def run(self, suite_dir: Path, program_dir: Path, limits: Limits = Limits(), coverage: bool = False) -> Outcome: ...
    def run_many(self, jobs: Sequence[tuple[Path, Path]], limits: Limits = Limits(),
                 coverage: bool = False) -> list[Outcome]: ...
    def run_repeat(self, suite_dir: Path, program_dir: Path, limits: Limits, repetition: int) -> Outcome: ...
    def close(self) -> None: ...
    def __enter__(self) -> Executor: ...  # `with create_executor(...) as executor:` closes it
    def __exit__(self, *exc: object) -> None: ...


@runtime_checkable
class RunsTrusted(Protocol):
    """An optional ability of an Executor: a separate pool (own servers, own staging) for a task's
    hidden tests, so trusted and untrusted suites never share a process or a tree cache. Without it,
    coverage targets are measured on the executor itself."""

    def trusted(self) -> Executor: ...
