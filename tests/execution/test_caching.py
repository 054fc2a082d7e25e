"""The outcome cache is a wrapper every executor gets from the seam (testhelix/execution/cached_executor.py):
a backend that caches nothing is still never asked the same job twice, repetitions and coverage runs
are keyed apart, a refused suite never reaches the backend, and the wrapper offers exactly the
optional abilities of the backend it wraps."""

from __future__ import annotations

import sys
import types
from collections.abc import Sequence
from pathlib import Path

import pytest

from testhelix.execution.cached_executor import CachedExecutor, with_cache
from testhelix.execution.environments import RunsEnvironments
from testhelix.execution.outcome import Limits, Outcome
from testhelix.execution.outcome_cache import StoreOutcomeCache
from testhelix.execution.protocols import RunsTrusted
from testhelix.execution.seam import create_executor
from testhelix.execution.shape import DEFAULT_SHAPE


class Counting:
    """A backend that runs nothing: it answers from the suite's first file name and counts calls."""

    runner_version = "counting-1"

    def __init__(self, workers: int | None = None, cache: object = None, sandbox: str | None = None) -> None:
        self.workers = 1
        self.calls: list[tuple[str, str, bool]] = []
        self.closed = False

    def prepare(self, folders: Sequence[Path]) -> None:
        pass

    def run(self, suite_dir: Path, program_dir: Path, limits: Limits = Limits(), coverage: bool = False) -> Outcome:
        self.calls.append((Path(suite_dir).name, Path(program_dir).name, coverage))
        status = "pass" if (Path(suite_dir) / "passes").exists() else "fail"
        return Outcome(status, None, 1, 0.0, "")  # type: ignore[arg-type]

    def run_many(self, jobs: Sequence[tuple[Path, Path]], limits: Limits = Limits(),
                 coverage: bool = False) -> list[Outcome]:
        return [self.run(s, p, limits, coverage) for s, p in jobs]

    def run_repeat(self, suite_dir: Path, program_dir: Path, limits: Limits, repetition: int) -> Outcome:
        return self.run(suite_dir, program_dir, limits)

    def close(self) -> None:
        self.closed = True

    def __enter__(self) -> Counting:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class WithPools(Counting):
    def trusted(self) -> Counting:
        return Counting()

    def for_environment(self, environment: object) -> Counting:
        return Counting()


class FakeStore:
    def __init__(self) -> None:
        self.rows: dict[str, dict] = {}

    def get_execution(self, key: str) -> dict | None:
        return self.rows.get(key)

    def put_execution(self, key: str, row: dict) -> None:
        self.rows[key] = dict(row)


def folder(root: Path, name: str, *files: str) -> Path:
    (root / name).mkdir()
    for f in files:
        (root / name / f).write_text(f)
    return root / name


def test_a_backend_that_caches_nothing_is_never_asked_twice(tmp_path: Path) -> None:
    suite, program = folder(tmp_path, "suite", "passes"), folder(tmp_path, "program", "mod.py")
    ex = with_cache(Counting())
    first = ex.run(suite, program)
    again = ex.run_many([(suite, program)] * 3)
    assert first.status == "pass" and not first.cached and all(o.cached and o.status == "pass" for o in again)
    assert len(ex.inner.calls) == 1 and ex.executions == 1  # type: ignore[attr-defined]
    assert ex.run(suite, program, coverage=True).cached is False  # a coverage run is its own job
    assert ex.run_repeat(suite, program, Limits(), 1).cached is False  # so is each repetition ...
    assert ex.run_repeat(suite, program, Limits(), 1).cached is True   # ... once
    assert [c[2] for c in ex.inner.calls] == [False, True, False]  # type: ignore[attr-defined]


def test_identical_trees_in_other_folders_share_an_outcome_and_a_store_keeps_it(tmp_path: Path) -> None:
    store = FakeStore()
    a, b = folder(tmp_path, "a", "passes"), folder(tmp_path, "b", "passes")
    program = folder(tmp_path, "program", "mod.py")
    ex = with_cache(Counting(), StoreOutcomeCache(store))
    assert [o.cached for o in ex.run_many([(a, program), (b, program)])] == [False, False]
    assert len(ex.inner.calls) == 1  # type: ignore[attr-defined]
    (row,) = store.rows.values()
    assert row["runner_version"] == "counting-1" and row["suite_digest"] and row["status"] == "pass"
    fresh = with_cache(Counting(), StoreOutcomeCache(store))  # a new process reads the store
    assert fresh.run(a, program).cached and fresh.inner.calls == []  # type: ignore[attr-defined]


def test_a_refused_suite_never_reaches_the_backend(tmp_path: Path) -> None:
    deep = tmp_path / "deep"
    nested = deep
    for i in range(DEFAULT_SHAPE.max_depth + 2):
        nested = nested / f"d{i}"
    nested.mkdir(parents=True)
    ex = with_cache(Counting())
    out = ex.run(deep, folder(tmp_path, "program", "mod.py"))
    assert out.status == "error" and (out.reason or "").startswith("suite refused:") and ex.inner.calls == []  # type: ignore[attr-defined]


def test_the_wrapper_offers_exactly_the_backends_optional_abilities() -> None:
    plain = with_cache(Counting())
    assert not isinstance(plain, RunsTrusted) and not isinstance(plain, RunsEnvironments)
    pools = with_cache(WithPools())
    assert isinstance(pools, RunsTrusted) and isinstance(pools, RunsEnvironments)
    trusted = pools.trusted()
    assert isinstance(trusted, CachedExecutor) and pools.trusted() is trusted and trusted is not pools
    with pools:
        pass
    assert pools.inner.closed  # type: ignore[attr-defined]


def test_every_executor_the_seam_makes_is_cached(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    module = types.ModuleType("counting_backend")
    module.Counting = Counting  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "counting_backend", module)
    with create_executor("counting_backend:Counting", workers=1) as ex:
        suite, program = folder(tmp_path, "suite", "x"), folder(tmp_path, "program", "mod.py")
        assert isinstance(ex.inner, Counting) and ex.runner_version == "counting-1"
        assert [o.cached for o in (ex.run(suite, program), ex.run(suite, program))] == [False, True]
