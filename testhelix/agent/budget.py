"""The shared per-task inference budget, the model-call ledger, and the time caps.

One `Budget` per task is shared by every role (planning, generation, repair, review, feedback,
challenge), every pair and every retry; pairs may run in threads. `Budget.complete(model, request)`
is the only way the pipeline calls a model:

1. reserve a conservative upper bound: `input_token_bound(request)` (the UTF-8 size of the request,
   see below) plus `max_output_tokens`. If the bound does not fit the remaining budget the output
   allowance is shrunk (down to `min_output_tokens`); if even that does not fit, no call is made
   and `BudgetExhausted` is raised -- the pipeline catches it and submits what it has;
2. call the model;
3. charge the provider-reported usage and release the rest of the reservation. A call whose
   answer fails to parse is still charged. A failed call is charged 0 when the provider refused it
   with an HTTP error (not billed) and the whole reservation when that is unknown (timeouts);
4. write one ledger row (`LedgerSink.record_model_call`, a Protocol that RunStore satisfies).

Why the cap cannot be exceeded: reservations and charges happen under one lock, a call starts only
when `used + reserved + bound <= cap`, and the charge of a call is at most its reservation because
the input bound is a true upper bound (byte-level BPE tokenizers emit at most one token per byte,
plus a fixed per-message overhead). A provider that still reports more is charged what it reports
and counted in `overruns`; the budget is then treated as exhausted.

Concurrent pairs (`Budget.shares(n)`): what is left is split into n equal sub-budgets, each
reserved from this one as a whole, so the n pairs together can never spend more than was left and
no pair can starve another. A share is fixed when it is handed out and what a pair leaves unused
returns only when all n are done: a pair's spending then depends on nothing but its own calls, so
results are the same in any completion order and for sequential and concurrent runs alike.

Optimizer calls (AutoSaddler) use their own `Budget(label="optimizer", ...)`: accounting is per
instance, so the generator's cap never pays for them.

Time (DESIGN §4): `working_cap_s(T)` = T - (min(120, T/4) + 20) (T=600 -> 460 s) and
`execution_time_limit_s(t)` = min(180, t). `Deadline` is the object the agent loop checks.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Callable, Protocol

from testhelix.llm.base import ChatModel, Completion, ModelError, ModelRequest

PER_MESSAGE_OVERHEAD = 16       # role markers and separators a chat template adds, generously
REQUEST_OVERHEAD = 64


class BudgetExhausted(Exception):
    """No call was made: its conservative bound does not fit what is left of the budget."""

    def __init__(self, label: str, needed: int, available: int):
        super().__init__(f"inference budget {label!r} exhausted: a call needs up to {needed} tokens, "
                         f"{available} left")
        self.label, self.needed, self.available = label, needed, available


class DeadlineExceeded(Exception):
    def __init__(self, label: str, seconds: float):
        super().__init__(f"time limit {label!r} of {seconds:.0f} s reached")


class LedgerSink(Protocol):
    def record_model_call(self, row: dict) -> None: ...


class MemoryLedger:
    """A LedgerSink that keeps rows in a list (tests, dry runs)."""

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self._lock = threading.Lock()

    def record_model_call(self, row: dict) -> None:
        with self._lock:
            self.rows.append(dict(row))


def input_token_bound(request: ModelRequest) -> int:
    """An upper bound on the input tokens of `request` (UTF-8 bytes + fixed overheads)."""
    size = sum(len(json.dumps(m.to_dict(), ensure_ascii=False).encode()) for m in request.messages)
    size += sum(len(json.dumps(t.to_dict(), ensure_ascii=False).encode()) for t in request.tools)
    return size + PER_MESSAGE_OVERHEAD * (len(request.messages) + len(request.tools)) + REQUEST_OVERHEAD


@dataclass
class Budget:
    """A token cap with thread-safe reservations; see the module docstring."""

    cap_tokens: int
    label: str = "generator"
    run_label: str = ""
    task_id: str = ""
    sink: LedgerSink | None = None
    min_output_tokens: int = 256
    used: int = 0
    reserved: int = 0
    calls: int = 0
    refused: int = 0
    overruns: int = 0
    statuses: Counter = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.cap_tokens < 0:
            raise ValueError(f"cap_tokens must be >= 0, got {self.cap_tokens}")

    @property
    def remaining(self) -> int:
        with self._lock:
            return max(0, self.cap_tokens - self.used - self.reserved)

    @contextmanager
    def shares(self, n: int) -> Iterator[list["Budget"]]:
        """n equal sub-budgets of what is left (see the module docstring); on exit their spending is
        charged here and the unused rest of the shares is free again."""
        if n < 1:
            raise ValueError(f"shares needs n >= 1, got {n}")
        with self._lock:
            free = 0 if self.overruns else max(0, self.cap_tokens - self.used - self.reserved)
            each = free // n
            self.reserved += each * n
        parts = [Budget(each, label=self.label, run_label=self.run_label, task_id=self.task_id, sink=self.sink,
                        min_output_tokens=self.min_output_tokens) for _ in range(n)]
        try:
            yield parts
        finally:
            with self._lock:
                self.reserved -= each * n
                for part in parts:
                    with part._lock:
                        self.used += part.used + part.reserved   # a share still reserving is kept (never happens on exit)
                        self.calls += part.calls
                        self.refused += part.refused
                        self.overruns += part.overruns
                        self.statuses.update(part.statuses)

    def _reserve(self, request: ModelRequest) -> tuple[ModelRequest, int]:
        bound_in = input_token_bound(request)
        with self._lock:
            free = self.cap_tokens - self.used - self.reserved
            if self.overruns or bound_in + self.min_output_tokens > free:
                self.refused += 1
                raise BudgetExhausted(self.label, bound_in + request.max_output_tokens, max(0, free))
            out = min(request.max_output_tokens, free - bound_in)
            self.reserved += bound_in + out
        if out != request.max_output_tokens:
            request = replace(request, max_output_tokens=out)
        return request, bound_in + out

    def _settle(self, reservation: int, charge: int) -> None:
        with self._lock:
            self.reserved -= reservation
            self.used += charge
            self.calls += 1
            if charge > reservation:
                self.overruns += 1

    def complete(self, model: ChatModel, request: ModelRequest) -> Completion:
        """Reserve, call, charge, record. Raises BudgetExhausted (no call made) or ModelError."""
        request, reservation = self._reserve(request)
        start = time.monotonic()
        try:
            answer = model.complete(request)
        except BaseException as err:
            billed = err.billed if isinstance(err, ModelError) else None
            self._settle(reservation, 0 if billed is False else reservation)
            kept = "" if billed is False else f" (reservation of {reservation} tokens kept)"
            self._record(model, request, None, time.monotonic() - start, "error",
                         f"{type(err).__name__}: {err}"[:1000] + kept)
            raise
        charge = answer.usage.total_tokens if answer.usage.reported else reservation
        self._settle(reservation, charge)
        malformed = [c for c in answer.tool_calls if c.error]
        status = "malformed" if malformed else "ok"
        self._record(model, request, answer, time.monotonic() - start, status,
                     "; ".join(f"{c.name}: {c.error}" for c in malformed) or None)
        return answer

    def _record(self, model: ChatModel, request: ModelRequest, answer: Completion | None,
                latency: float, status: str, error: str | None) -> None:
        with self._lock:
            self.statuses[status] += 1
        if self.sink is None:
            return
        u = answer.usage if answer is not None and answer.usage.reported else None
        tags = request.tags
        self.sink.record_model_call({
            "run_label": self.run_label, "task_id": self.task_id, "role": tags.role, "pair": tags.pair,
            "round": tags.round, "model": model.name,
            "input_tokens": u.input_tokens if u else None, "output_tokens": u.output_tokens if u else None,
            "cache_read_tokens": u.cache_read_tokens if u else None,
            "cache_write_tokens": u.cache_write_tokens if u else None,
            "cost_usd": u.cost_usd if u else None, "latency_s": round(latency, 6),
            "cache_hit": bool(answer.cache_hit) if answer else False, "status": status, "error": error,
            "simulated": model.name.startswith("sim:"),
        })


# --- time -------------------------------------------------------------------------------------

def working_cap_s(agent_limit_s: float = 600.0) -> float:
    """The working time for an agent limit T: T - (min(120, T/4) + 20) seconds (never negative)."""
    return max(0.0, agent_limit_s - (min(120.0, agent_limit_s / 4) + 20.0))


def execution_time_limit_s(task_test_timeout_s: float) -> float:
    """Wall-clock limit for one test execution: min(180 s, the task's test timeout)."""
    return min(180.0, float(task_test_timeout_s))


class Deadline:
    """A point in time the agent loop checks before each step and each tool execution."""

    def __init__(self, seconds: float, label: str = "working cap", clock: Callable[[], float] = time.monotonic):
        self.seconds, self.label, self._clock = float(seconds), label, clock
        self._end = clock() + self.seconds

    @classmethod
    def for_agent_limit(cls, agent_limit_s: float = 600.0, clock: Callable[[], float] = time.monotonic) -> "Deadline":
        return cls(working_cap_s(agent_limit_s), "working cap", clock)

    def remaining(self) -> float:
        return max(0.0, self._end - self._clock())

    def expired(self) -> bool:
        return self._clock() >= self._end

    def check(self) -> None:
        if self.expired():
            raise DeadlineExceeded(self.label, self.seconds)
