"""A fault-injecting ChatModel wrapper, for reliability tests of everything above the provider.

`FaultyModel(inner, rate=0.2, seed=7)` makes each call fail with probability `rate`, choosing one
of the fault kinds below (deterministic for the seed and the call order):

- "rate_limit": ModelUnavailable(status=429), as if the SDK had exhausted its retries; not billed.
- "server": ModelUnavailable(status=500); not billed.
- "timeout": ModelUnavailable(billed=None): the provider may have charged; the budget keeps the
  reservation.
- "malformed": the inner model IS called (and its usage charged), but every tool call in the
  answer has its arguments replaced by text that is not JSON, the way a real model sometimes
  answers.

`injected` counts the faults by kind, so a test can check that every one shows up in the ledger.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from dataclasses import replace

from testhelix.llm.base import ChatModel, Completion, ModelRequest, ModelUnavailable, ToolCall, is_test_double

FAULT_KINDS = ("rate_limit", "server", "timeout", "malformed")


class FaultyModel:
    def __init__(self, inner: ChatModel, rate: float, seed: int = 0, kinds: tuple[str, ...] = FAULT_KINDS):
        if not 0.0 <= rate <= 1.0:
            raise ValueError(f"fault rate must be in [0, 1], got {rate}")
        unknown = set(kinds) - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {FAULT_KINDS}")
        self.inner = inner
        self.name = inner.name
        self.context_window = inner.context_window
        self.simulated = is_test_double(inner)   # base.TestDouble: as the model it wraps
        self.rate = rate
        self.kinds = kinds
        self.injected: Counter[str] = Counter()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def _draw(self) -> str | None:
        with self._lock:
            if self._rng.random() >= self.rate:
                return None
            kind = self._rng.choice(self.kinds)
            self.injected[kind] += 1
            return kind

    def complete(self, request: ModelRequest) -> Completion:
        kind = self._draw()
        if kind == "rate_limit":
            raise ModelUnavailable("injected fault: HTTP 429 after retries", status=429, billed=False)
        if kind == "server":
            raise ModelUnavailable("injected fault: HTTP 500 after retries", status=500, billed=False)
        if kind == "timeout":
            raise ModelUnavailable("injected fault: request timed out after retries", billed=None)
        answer = self.inner.complete(request)
        if kind == "malformed" and not answer.tool_calls:
            with self._lock:                   # nothing to corrupt: this call is not a fault
                self.injected["malformed"] -= 1
        elif kind == "malformed":
            broken = tuple(ToolCall.from_json_text(c.id, c.name, '{"path": "unterminated')
                           for c in answer.tool_calls)
            answer = replace(answer, tool_calls=broken, metadata={**answer.metadata, "injected_fault": "malformed"})
        return answer
