"""Deadlines and retry records for SDK calls, through the HTTP client's event hooks.

The SDKs keep their own retries (408/409/429/5xx, timeouts; `max_retries`): nothing here retries.
The watch only bounds and records them, per call, on the calling thread:

- each attempt's timeout is cut to what is left of the call's time (`ModelRequest.timeout_s`, set
  by the Budget from the task's working deadline), so the deadline holds during a call;
- a `retry-after` is capped (`max_retry_wait_s`) and never allowed past the deadline: when the
  next attempt could not start in time the response is marked `x-should-retry: false`, and an
  attempt that would start after the deadline is aborted with the SDK's own timeout error;
- every attempt is counted: retries, their causes (HTTP status, or "timeout") and seconds waited;
- rate-limit headers feed the model's shared limiter.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from testhelix.llm.base import SIMULATED_HEADER

DEFAULT_MAX_RETRY_WAIT_S = 30.0
_BACKOFF_GUESS_S = 0.5          # the SDKs' first backoff when no retry-after is sent


def _retryable(status: int) -> bool:
    return status in (408, 409, 429) or status >= 500


@dataclass
class CallRecord:
    end: float | None
    attempts: int = 0
    causes: list[str] = field(default_factory=list)
    wait_s: float = 0.0
    last_end: float | None = None
    responded: bool = True
    stopped_by_deadline: bool = False
    served_simulated: bool = False    # a response carried base.SIMULATED_HEADER (`testhelix serve`)

    def summary(self) -> dict:
        return {"retries": max(0, self.attempts - 1), "causes": list(self.causes), "wait_s": round(self.wait_s, 3)}


class CallWatch:
    def __init__(self, abort: Callable[[Any], Exception], *, max_retry_wait_s: float = DEFAULT_MAX_RETRY_WAIT_S,
                 limiter: Any = None, clock: Callable[[], float] = time.monotonic):
        self._abort = abort            # builds the SDK's own timeout error (not retried by the SDK)
        self.max_retry_wait_s = max_retry_wait_s
        self.limiter = limiter
        self._clock = clock
        self._local = threading.local()

    def install(self, client: Any) -> Any:
        hooks = client.event_hooks
        client.event_hooks = {"request": [*hooks.get("request", []), self._on_request],
                              "response": [*hooks.get("response", []), self._on_response]}
        return client

    @contextmanager
    def call(self, timeout_s: float | None) -> Iterator[CallRecord]:
        rec = CallRecord(end=self._clock() + timeout_s if timeout_s else None)
        self._local.rec = rec
        try:
            yield rec
        finally:
            self._local.rec = None

    def _on_request(self, request: Any) -> None:
        rec: CallRecord | None = getattr(self._local, "rec", None)
        if rec is None:
            return
        now = self._clock()
        if rec.attempts:
            if not rec.responded:
                rec.causes.append("timeout")
            if rec.last_end is not None:
                rec.wait_s += now - rec.last_end
        rec.attempts += 1
        rec.responded = False
        rec.last_end = None
        if rec.end is None:
            return
        left = rec.end - now
        if left <= 0.05:
            rec.stopped_by_deadline = True
            raise self._abort(request)
        timeout = dict(request.extensions.get("timeout") or {})
        request.extensions["timeout"] = {k: min(v, left) if v is not None else left
                                         for k, v in (timeout or dict.fromkeys(("connect", "read", "write", "pool"))).items()}

    def _on_response(self, response: Any) -> None:
        if self.limiter is not None:
            self.limiter.observe(response.headers)
        rec: CallRecord | None = getattr(self._local, "rec", None)
        if rec is None:
            return
        now = self._clock()
        rec.responded, rec.last_end = True, now
        if response.headers.get(SIMULATED_HEADER) == "true":
            rec.served_simulated = True
        if not _retryable(response.status_code):
            return
        rec.causes.append(str(response.status_code))
        asked = _retry_after(response.headers)
        wait = min(asked if asked is not None else _BACKOFF_GUESS_S, self.max_retry_wait_s)
        if rec.end is not None and now + wait >= rec.end:
            response.headers["x-should-retry"] = "false"
            rec.stopped_by_deadline = True
            return
        if asked is not None and asked > wait:
            response.headers["retry-after"] = f"{wait:g}"
            response.headers.pop("retry-after-ms", None)


def _retry_after(headers: Any) -> float | None:
    try:
        if headers.get("retry-after-ms") is not None:
            return float(headers["retry-after-ms"]) / 1000
        if headers.get("retry-after") is not None:
            return float(headers["retry-after"])
    except ValueError:
        return None
    return None
