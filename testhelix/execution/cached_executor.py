"""The outcome cache as a wrapper every executor gets from the seam (seam.create_executor).

The same suite on the same program under the same runner and limits is never run twice, whatever
backend runs it: `CachedExecutor` keys each job by (suite digest, program digest, the backend's
`runner_version`, limits), answers from memory, then from the persistent `OutcomeCache` the command
gave (the run store), and hands only the misses to the backend, each distinct job once. Before any
file of a suite is read (to hash it), its shape is checked on the host (shape.py); a refused suite
never reaches the backend.

A backend that names trees by the same digests may take them ready-made (`RunsDigested`, the
fork-server pool), so a tree is hashed once per call. The optional abilities of the wrapped backend
(a trusted pool, per-environment pools: seam.py) are offered by the wrapper exactly when the
backend has them, each sibling pool behind its own memory cache and the same persistent one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, Protocol, runtime_checkable

from testhelix.core.digest import tree_sha256
from testhelix.execution.environments import RunsEnvironments
from testhelix.execution.outcome import Limits, Outcome, RawRun, outcome_of
from testhelix.execution.outcome_cache import DescribesKeys, MemoryOutcomeCache, OutcomeCache, cache_key, cacheable
from testhelix.execution.protocols import Executor, RunsTrusted
from testhelix.execution.shape import suite_problem

if TYPE_CHECKING:
    from testhelix.execution.environments import PythonEnv


class DigestedJob(NamedTuple):
    """One (suite, program) execution with both trees' digests (`tree_digest`)."""

    suite: Path
    program: Path
    suite_digest: str
    program_digest: str


@runtime_checkable
class RunsDigested(Protocol):
    """An optional ability of an Executor: run jobs whose trees are already hashed (with
    `tree_digest`), each as given (no caching: the wrapper did that)."""

    def run_digested(self, jobs: Sequence[DigestedJob], limits: Limits, coverage: bool) -> list[Outcome]: ...


def tree_digest(path: Path) -> str:
    # A missing folder still needs a key; its outcome ("missing suite") is the backend's to decide.
    return tree_sha256(path) if Path(path).is_dir() else "missing:" + str(path)


def digest_jobs(jobs: Sequence[tuple[Path, Path]], limits: Limits) -> list[DigestedJob | Outcome]:
    """Each job hashed, or the refusal of its suite when the suite's shape is refused (checked before
    anything reads a file of it). Within one call a folder is read once (a panel shares its suite)."""
    digests: dict[Path, str] = {}
    problems: dict[Path, str | None] = {}
    out: list[DigestedJob | Outcome] = []
    for suite, program in jobs:
        suite, program = Path(suite), Path(program)
        if suite not in problems:
            problems[suite] = suite_problem(suite) if suite.is_dir() else None
        problem = problems[suite]
        if problem is not None:
            out.append(outcome_of(RawRun(entry="pytest", wall_s=limits.wall_s,
                                         pre_error=f"suite refused: {problem}")))
            continue
        sd, pd = (digests.get(p) or digests.setdefault(p, tree_digest(p)) for p in (suite, program))
        out.append(DigestedJob(suite, program, sd, pd))
    return out


class CachedExecutor:
    """An Executor behind the outcome cache (see the module docstring); `inner` is the backend."""

    def __init__(self, inner: Executor, persistent: OutcomeCache | None = None) -> None:
        self.inner = inner
        self.runner_version = inner.runner_version  # fixed when a backend is made: part of every key
        self.workers = inner.workers
        self.memory = MemoryOutcomeCache()
        self.persistent = persistent
        self.executions = 0  # jobs handed to the backend (cache misses)
        self._siblings: dict[str, CachedExecutor] = {}
        self._siblings_lock = threading.Lock()

    def prepare(self, folders: Sequence[Path]) -> None:
        self.inner.prepare(folders)

    def run(self, suite_dir: Path, program_dir: Path, limits: Limits = Limits(), coverage: bool = False) -> Outcome:
        return self.run_many([(suite_dir, program_dir)], limits, coverage=coverage)[0]

    def run_many(self, jobs: Sequence[tuple[Path, Path]], limits: Limits = Limits(),
                 coverage: bool = False) -> list[Outcome]:
        return self._run(jobs, limits, coverage=coverage, repetition=0)

    def run_repeat(self, suite_dir: Path, program_dir: Path, limits: Limits, repetition: int) -> Outcome:
        """The `repetition`-th independent execution of the same pair (0 is the ordinary run).
        Reproducibility checks need the behaviour observed again, not read back from the cache, so
        each repetition has a cache entry of its own (a resumed run still never repeats one)."""
        return self._run([(suite_dir, program_dir)], limits, coverage=False, repetition=repetition)[0]

    def close(self) -> None:
        self.inner.close()

    def __enter__(self) -> CachedExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------------------
    def _run(self, jobs: Sequence[tuple[Path, Path]], limits: Limits, *, coverage: bool,
             repetition: int) -> list[Outcome]:
        salt = (f"#rep{repetition}" if repetition else "") + ("#coverage" if coverage else "")
        prepared = digest_jobs(jobs, limits)
        keys = ["" if isinstance(job, Outcome) else  # "": refused, answered without the cache
                cache_key(job.suite_digest, job.program_digest, self.runner_version, limits) + salt
                for job in prepared]
        results: dict[str, Outcome] = {}
        todo: dict[str, DigestedJob] = {}
        for key, job in zip(keys, prepared):
            if isinstance(job, Outcome) or key in results or key in todo:
                continue
            hit = self._lookup(key)
            if hit is not None:
                results[key] = replace(hit, cached=True)
            else:
                todo[key] = job
        if todo:
            fresh = self._execute(list(todo.values()), limits, coverage, repetition)
            self.executions += len(todo)
            for (key, job), outcome in zip(todo.items(), fresh):
                results[key] = outcome
                self._store(key, outcome, job, limits)
        return [job if isinstance(job, Outcome) else results[key] for key, job in zip(keys, prepared)]

    def _execute(self, jobs: list[DigestedJob], limits: Limits, coverage: bool, repetition: int) -> list[Outcome]:
        if isinstance(self.inner, RunsDigested):  # to the fork-server pool a repetition is another run
            return self.inner.run_digested(jobs, limits, coverage)
        if repetition:
            return [self.inner.run_repeat(job.suite, job.program, limits, repetition) for job in jobs]
        return self.inner.run_many([(job.suite, job.program) for job in jobs], limits, coverage=coverage)

    def _lookup(self, key: str) -> Outcome | None:
        hit = self.memory.get(key)
        if hit is None and self.persistent is not None:
            hit = self.persistent.get(key)
            if hit is not None:
                self.memory.put(key, hit)
        return hit

    def _store(self, key: str, outcome: Outcome, job: DigestedJob, limits: Limits) -> None:
        if not cacheable(outcome):
            return
        self.memory.put(key, outcome)
        if self.persistent is not None:
            if isinstance(self.persistent, DescribesKeys):
                self.persistent.describe(key, job.suite_digest, job.program_digest, self.runner_version, limits)
            self.persistent.put(key, outcome)

    def _sibling(self, name: str, make: Callable[[], Executor]) -> CachedExecutor:
        """The cached wrapper of one of the backend's sibling pools, made once (the backend closes
        its siblings with itself)."""
        with self._siblings_lock:
            if name not in self._siblings:
                self._siblings[name] = with_cache(make(), self.persistent)
            return self._siblings[name]


class _CachedTrusted(CachedExecutor):
    def trusted(self) -> CachedExecutor:
        """The backend's trusted pool (a task's hidden tests), behind its own memory cache."""
        inner = self.inner
        assert isinstance(inner, RunsTrusted)  # with_cache chose this class for that reason
        return self._sibling("trusted", inner.trusted)


class _CachedEnvironments(CachedExecutor):
    def for_environment(self, environment: PythonEnv) -> CachedExecutor:
        """The backend's pool for a task environment, behind its own memory cache."""
        inner = self.inner
        assert isinstance(inner, RunsEnvironments)  # with_cache chose this class for that reason
        return self._sibling(f"env:{environment.digest}", lambda: inner.for_environment(environment))


class _CachedBoth(_CachedTrusted, _CachedEnvironments):
    pass


def with_cache(inner: Executor, persistent: OutcomeCache | None = None) -> CachedExecutor:
    """`inner` behind the outcome cache, offering exactly the optional abilities `inner` has."""
    trusted, environments = isinstance(inner, RunsTrusted), isinstance(inner, RunsEnvironments)
    cls = (_CachedBoth if trusted and environments else _CachedTrusted if trusted
           else _CachedEnvironments if environments else CachedExecutor)
    return cls(inner, persistent)
