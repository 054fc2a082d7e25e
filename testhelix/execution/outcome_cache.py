"""Outcome caches keyed by (suite digest, program digest, runner version, limits).

The same suite on the same program under the same runner and limits is never run twice: every
executor the seam makes sits behind `cached_executor.CachedExecutor`, which consults an in-memory cache
first, then an optional persistent one (`StoreOutcomeCache` adapts the run store's `get_execution`
/ `put_execution` rows).
"""

from __future__ import annotations

import hashlib
import json
import threading
from dataclasses import replace
from typing import Any, Protocol, runtime_checkable

from testhelix.execution.outcome import Limits, Outcome


class OutcomeCache(Protocol):
    def get(self, key: str) -> Outcome | None: ...
    def put(self, key: str, outcome: Outcome) -> None: ...


@runtime_checkable
class DescribesKeys(Protocol):
    """An OutcomeCache that stores a key's parts beside the outcome (the run store's executions
    table): told them before `put`."""

    def describe(self, key: str, suite_digest: str, program_digest: str, runner_version: str,
                 limits: Limits) -> None: ...


def cache_key(suite_digest: str, program_digest: str, runner_version: str, limits: Limits) -> str:
    body = json.dumps([suite_digest, program_digest, runner_version, limits.as_dict()], sort_keys=True)
    return hashlib.sha256(body.encode()).hexdigest()


def cacheable(outcome: Outcome) -> bool:
    """Faults of the harness say nothing about the suite or the program: run again next time."""
    return not (outcome.reason or "").startswith("harness fault")


class MemoryOutcomeCache:
    def __init__(self) -> None:
        self._data: dict[str, Outcome] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> Outcome | None:
        with self._lock:
            return self._data.get(key)

    def put(self, key: str, outcome: Outcome) -> None:
        with self._lock:
            self._data[key] = replace(outcome, cached=False)

    def __len__(self) -> int:
        return len(self._data)


class StoreOutcomeCache:
    """OutcomeCache over a RunStore-like object (`get_execution(key)`, `put_execution(key, row)`).

    The row carries the key's parts too, so the store's executions table stays queryable.
    Call `describe(key, suite_digest, program_digest, runner_version, limits)` before `put` to fill
    them in (cached_executor.CachedExecutor does); otherwise they are stored empty.
    """

    def __init__(self, store: Any):
        self.store = store
        self._parts: dict[str, dict] = {}
        self._lock = threading.Lock()

    def describe(self, key: str, suite_digest: str, program_digest: str, runner_version: str,
                 limits: Limits) -> None:
        with self._lock:
            self._parts[key] = {"suite_digest": suite_digest, "program_digest": program_digest,
                                "runner_version": runner_version, "limits": json.dumps(limits.as_dict())}

    def get(self, key: str) -> Outcome | None:
        row = self.store.get_execution(key)
        if not row:
            return None
        return Outcome(status=row["status"], reason=row["reason"], tests_run=row["tests_run"],
                       duration_s=float(row["duration_s"] or 0.0), output=row["output"] or "")

    def put(self, key: str, outcome: Outcome) -> None:
        with self._lock:
            parts = self._parts.pop(key, {"suite_digest": None, "program_digest": None,
                                          "runner_version": None, "limits": None})
        self.store.put_execution(key, {**parts, "status": outcome.status, "reason": outcome.reason,
                                       "tests_run": outcome.tests_run, "duration_s": outcome.duration_s,
                                       "output": outcome.output})
