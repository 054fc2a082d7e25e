"""The shared per-task inference budget, the model-call ledger, and the time caps.

One `Budget` per task is shared by every role (planning, generation, repair, review, feedback,
challenge), every pair and every retry; pairs may run in threads. `Budget.complete(model, request)`
is the one metered door to a model for every package: the pipeline's roles and agent sessions,
AutoSaddler's optimizer sessions (their own budget, below) and GTDD's coder and tester (a budget per
role and round, gtdd/agents.py). It:

1. reserve a conservative upper bound: `input_token_bound(request)` (the UTF-8 size of the request,
   see below) plus `max_output_tokens`. If the bound does not fit the remaining budget the output
   allowance is shrunk (down to `min_output_tokens`); if even that does not fit, no call is made
   and `BudgetExhausted` is raised -- the pipeline catches it and submits what it has;
2. call the model;
3. validate the answer at the boundary (`check_completion`): a reply longer than its max_tokens
   worth is cut (tool calls whose arguments were cut are dropped, never acted on) and usage above
   what the request allowed is clamped; both are recorded as anomalies;
4. charge the (clamped) provider-reported usage and release the rest of the reservation. A call
   whose answer fails to parse is still charged. A failed call is charged 0 when the provider
   refused it with an HTTP error (not billed) and the whole reservation when that is unknown
   (timeouts); a provider that reports no usage is charged the reservation;
5. write one ledger row (`LedgerSink.record_model_call`, a Protocol that RunStore satisfies) whose
   token columns are what was charged, so sums over the ledger equal the budget's `used`.

Time: a Budget given the task's `deadline` refuses to start a call after it (DeadlineExceeded) and
gives every call a client timeout of what is left (capped by `call_timeout_s`); a call the
deadline cuts short raises DeadlineExceeded too. Calls draw on the model's shared rate limiter.

Why the cap cannot be exceeded: reservations and charges happen under one lock, a call starts only
when `used + reserved + bound <= cap`, and the charge of a call is at most its reservation because
the input bound is a true upper bound (byte-level BPE tokenizers emit at most one token per byte,
plus a fixed per-message overhead). A provider that reports more is clamped to the reservation and
the anomaly recorded, so even a lying server cannot make the budget overspend.

Concurrent pairs (`Budget.shares(n)`): what is left is split into n equal sub-budgets, each
reserved from this one as a whole, so the n pairs together can never spend more than was left and
no pair can starve another. A share is fixed when it is handed out and what a pair leaves unused
returns only when all n are done: a pair's spending then depends on nothing but its own calls, so
results are the same in any completion order and for sequential and concurrent runs alike.

Optimizer calls (AutoSaddler) use their own `Budget(label="optimizer", ...)`: accounting is per
instance, so the generator's cap never pays for them. What a session used is read from the rows
its calls wrote (the ledger), never counted a second time.

Time: `working_cap_s(T)` = T - (min(120, T/4) + 20) (T=600 -> 460 s) and
`execution_time_limit_s(t)` = min(180, t). `Deadline` is the object the agent loop checks.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from testhelix.llm.base import (
    ChatModel,
    Completion,
    ModelError,
    ModelRequest,
    ModelUnavailable,
    RateLimited,
    ToolCall,
    Usage,
    is_test_double,
)

PER_MESSAGE_OVERHEAD = 16       # role markers and separators a chat template adds, generously
REQUEST_OVERHEAD = 64
# A reply longer than this many characters per allowed output token cannot be what the request
# allowed (real tokens average about 4 characters): it is cut and recorded as an anomaly.
MAX_CHARS_PER_OUTPUT_TOKEN = 8


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
    anomalies: int = 0
    simulated_calls: int = 0               # calls a simulated model answered (served ones too)
    deadline: Any = None                  # a Deadline: calls get a client timeout from what is left of it
    call_timeout_s: float | None = None   # an upper bound on any one call's timeout (the --call-timeout option)
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
    def shares(self, n: int) -> Iterator[list[Budget]]:
        """n equal sub-budgets of what is left (see the module docstring); on exit their spending is
        charged here and the unused rest of the shares is free again."""
        if n < 1:
            raise ValueError(f"shares needs n >= 1, got {n}")
        with self._lock:
            free = 0 if self.overruns else max(0, self.cap_tokens - self.used - self.reserved)
            each = free // n
            self.reserved += each * n
        parts = [Budget(each, label=self.label, run_label=self.run_label, task_id=self.task_id, sink=self.sink,
                        min_output_tokens=self.min_output_tokens, deadline=self.deadline,
                        call_timeout_s=self.call_timeout_s) for _ in range(n)]
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
                        self.anomalies += part.anomalies
                        self.simulated_calls += part.simulated_calls
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

    def _timeout(self) -> float | None:
        """This call's client timeout: what is left of the working time, capped by the option."""
        if self.deadline is not None:
            self.deadline.check()                   # raises DeadlineExceeded: no call after the deadline
            left = self.deadline.remaining()
            return min(left, self.call_timeout_s) if self.call_timeout_s else left
        return self.call_timeout_s

    def complete(self, model: ChatModel, request: ModelRequest) -> Completion:
        """Reserve, call, validate, charge, record. Raises BudgetExhausted or DeadlineExceeded (no call
        made, or the working deadline cut the call) or ModelError (the provider failed)."""
        timeout = self._timeout()
        request, reservation = self._reserve(request)
        bound_in = reservation - request.max_output_tokens
        request = replace(request, timeout_s=timeout)
        start = time.monotonic()
        try:
            _wait_for_rate_limit(model, reservation, timeout)
            answer = model.complete(request)
        except BaseException as err:
            billed = err.billed if isinstance(err, ModelError) else None
            charge = 0 if billed is False else reservation
            self._settle(reservation, charge)
            kept = "" if billed is False else f" (reservation of {reservation} tokens kept)"
            split = (bound_in, request.max_output_tokens) if charge else (0, 0)
            self._record(model, request, None, time.monotonic() - start, "error",
                         f"{type(err).__name__}: {err}"[:1000] + kept, charged=split,
                         retries=getattr(err, "retries", None) or {})
            if (isinstance(err, ModelUnavailable) and self.deadline is not None and self.deadline.expired()):
                raise DeadlineExceeded(self.deadline.label, self.deadline.seconds) from err
            raise
        answer, anomalies = check_completion(request, answer, bound_in)
        u = answer.usage
        charged = (u.input_tokens, u.output_tokens) if u.reported else (bound_in, request.max_output_tokens)
        self._settle(reservation, sum(charged))
        malformed = [c for c in answer.tool_calls if c.error]
        status = "malformed" if malformed else "ok"
        with self._lock:
            self.anomalies += len(anomalies)
        self._record(model, request, answer, time.monotonic() - start, status,
                     "; ".join(f"{c.name}: {c.error}" for c in malformed) or None, charged=charged,
                     retries=answer.metadata.get("retries") or {}, anomaly="; ".join(anomalies) or None)
        return answer

    def _record(self, model: ChatModel, request: ModelRequest, answer: Completion | None,
                latency: float, status: str, error: str | None, *, charged: tuple[int, int] = (0, 0),
                retries: dict | None = None, anomaly: str | None = None) -> None:
        """One ledger row. Token columns hold what was CHARGED: the provider's usage (clamped to what
        the request allowed) or, when the provider reported none, the kept reservation -- so sums
        over model_calls equal the budget's `used`; `usage_reported` tells them apart."""
        # a provider marks a reply that a served simulated model gave (sdk_model.served_metadata)
        simulated = is_test_double(model) or (answer is not None and answer.simulated)
        with self._lock:
            self.statuses[status] += 1
            self.simulated_calls += simulated
        if self.sink is None:
            return
        u = answer.usage if answer is not None and answer.usage.reported else None
        tags = request.tags
        retries = retries or {}
        self.sink.record_model_call({
            "run_label": self.run_label, "task_id": self.task_id, "role": tags.role, "pair": tags.pair,
            "round": tags.round, "model": model.name,
            "input_tokens": charged[0], "output_tokens": charged[1],
            "cache_read_tokens": u.cache_read_tokens if u else None,
            "cache_write_tokens": u.cache_write_tokens if u else None,
            # a simulated model served behind a provider's protocol costs nothing real: no price
            "cost_usd": u.cost_usd if u and not simulated else None, "latency_s": round(latency, 6),
            "cache_hit": bool(answer.cache_hit) if answer else False, "status": status, "error": error,
            "simulated": simulated,
            "retries": retries.get("retries", 0), "retry_causes": ",".join(retries.get("causes", ())) or None,
            "retry_wait_s": retries.get("wait_s", 0.0), "usage_reported": u is not None,
            "charged_tokens": sum(charged), "anomaly": anomaly,
        })


def _wait_for_rate_limit(model: ChatModel, tokens: int, timeout: float | None) -> None:
    """Draw on the model's process-wide limiter (providers have one; simulated models do not)."""
    limiter = model.rate_limiter if isinstance(model, RateLimited) else None
    if limiter is None:
        return
    from testhelix.llm.ratelimit import RateLimitWait
    try:
        limiter.acquire(tokens, timeout)
    except RateLimitWait as err:
        raise ModelUnavailable(f"{model.name}: {err}", billed=False, cause="rate_limited") from None


def check_completion(request: ModelRequest, answer: Completion, bound_in: int) -> tuple[Completion, list[str]]:
    """Validate a reply against what the request allowed: cut an oversized reply to its
    max_tokens worth, clamp usage above the request's bounds. Returns the reply and the anomalies."""
    anomalies: list[str] = []
    allowed = request.max_output_tokens * MAX_CHARS_PER_OUTPUT_TOKEN
    sizes = [len(c.raw_arguments or json.dumps(c.arguments or {})) for c in answer.tool_calls]
    total = len(answer.text) + sum(sizes)
    if total > allowed:
        text = answer.text[:allowed]
        room = allowed - len(text)
        calls = []
        for call, size in zip(answer.tool_calls, sizes):
            if size <= room:
                calls.append(call)
                room -= size
            else:   # the call's arguments were cut: never act on a partial file
                calls.append(ToolCall(call.id, call.name, None, raw_arguments="",
                                      error=f"arguments dropped: the reply exceeded its max_tokens allowance "
                                            f"({size} characters)"))
                room = 0
        anomalies.append(f"oversized reply: {total} characters for max_tokens {request.max_output_tokens}; "
                         f"cut to {allowed}")
        answer = replace(answer, text=text, tool_calls=tuple(calls), stop_reason="max_tokens")
    u = answer.usage
    if u.reported and (u.output_tokens > request.max_output_tokens or u.input_tokens > bound_in):
        inp, out = min(u.input_tokens, bound_in), min(u.output_tokens, request.max_output_tokens)
        anomalies.append(f"usage above what the request allowed: reported {u.input_tokens} in / {u.output_tokens} "
                         f"out, charged {inp} / {out}")
        answer = replace(answer, usage=Usage(inp, out, min(u.cache_read_tokens, inp), min(u.cache_write_tokens, inp),
                                             u.cost_usd, True))
    if anomalies:
        answer = replace(answer, metadata={**answer.metadata, "anomalies": anomalies})
    return answer, anomalies


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
    def for_agent_limit(cls, agent_limit_s: float = 600.0, clock: Callable[[], float] = time.monotonic) -> Deadline:
        return cls(working_cap_s(agent_limit_s), "working cap", clock)

    def remaining(self) -> float:
        return max(0.0, self._end - self._clock())

    def expired(self) -> bool:
        return self._clock() >= self._end

    def check(self) -> None:
        if self.expired():
            raise DeadlineExceeded(self.label, self.seconds)
