"""`sim:NAME?latency=SECONDS`: a simulated model that answers after a delay, like a real one.

The simulated models answer instantly, which hides everything that waiting on a network costs; with
a latency the concurrency of a run can be measured offline. Each call sleeps `SECONDS` times a
jitter factor in [0.8, 1.2] derived from a digest of the request (so the same request always waits
the same time, and no shared random state exists between threads). The answer itself is the
wrapped model's, unchanged: results are identical with and without a latency.
"""

from __future__ import annotations

import hashlib
import json
import time

from testhelix.llm.base import ChatModel, Completion, ModelRequest

JITTER = 0.2


class LatencyModel:
    """Wraps a ChatModel: the same answers, each after a seeded, jittered delay."""

    simulated = True   # base.TestDouble: it wraps a simulated model

    def __init__(self, inner: ChatModel, latency_s: float) -> None:
        self.inner = inner
        self.latency_s = latency_s
        self.name = inner.name
        self.context_window = inner.context_window

    def delay_for(self, request: ModelRequest) -> float:
        text = json.dumps([[m.role, m.content] for m in request.messages] + [str(request.tags)], default=str)
        unit = int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
        return self.latency_s * (1 - JITTER + 2 * JITTER * unit)

    def complete(self, request: ModelRequest) -> Completion:
        time.sleep(self.delay_for(request))
        return self.inner.complete(request)
