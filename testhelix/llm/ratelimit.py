"""One rate limiter per provider and model, shared by every task, pair and session in the process.

    limiter = limiter_for("anthropic:claude-opus-4-6", rpm, tpm)   # the same object for every caller
    limiter.acquire(tokens=12_000, deadline_s=remaining)     # blocks until the call may start

Two token buckets refill continuously: requests per minute and tokens per minute (a call takes its
conservative token reservation). Limits come with the model's `ModelInfo`: the run's `--rpm/--tpm`
(testhelix/run/setup.py `ModelSettings`), else models.toml (`requests_per_minute`,
`tokens_per_minute`), else nothing (no limit). When a provider sends rate-limit headers (OpenAI `x-ratelimit-*`, Anthropic
`anthropic-ratelimit-*`) and says nothing is left, the limiter holds every caller until the reset
the provider named. All methods are thread-safe.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

_DURATION = re.compile(r"(?:(\d+(?:\.\d+)?)h)?(?:(\d+(?:\.\d+)?)m(?!s))?(?:(\d+(?:\.\d+)?)s)?(?:(\d+)ms)?$")


class RateLimitWait(Exception):
    """Waiting for the limiter would pass the caller's deadline."""


class RateLimiter:
    def __init__(self, rpm: float | None = None, tpm: float | None = None,
                 clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep):
        self._clock, self._sleep = clock, sleep
        self._lock = threading.Lock()
        self.rpm, self.tpm = rpm, tpm
        now = clock()
        self._requests = float(rpm or 0)
        self._tokens = float(tpm or 0)
        self._at = now
        self._hold_until = 0.0
        self.waited_s = 0.0

    def configure(self, rpm: float | None, tpm: float | None) -> None:
        with self._lock:
            self.rpm, self.tpm = rpm, tpm
            self._requests, self._tokens = float(rpm or 0), float(tpm or 0)

    def _refill(self, now: float) -> None:
        elapsed = max(0.0, now - self._at)
        self._at = now
        if self.rpm:
            self._requests = min(float(self.rpm), self._requests + elapsed * self.rpm / 60)
        if self.tpm:
            self._tokens = min(float(self.tpm), self._tokens + elapsed * self.tpm / 60)

    def _wait_needed(self, tokens: int, now: float) -> float:
        wait = max(0.0, self._hold_until - now)
        if self.rpm and self._requests < 1:
            wait = max(wait, (1 - self._requests) * 60 / self.rpm)
        if self.tpm:
            want = min(float(tokens), float(self.tpm))     # a call larger than a minute's worth waits for a full bucket
            if self._tokens < want:
                wait = max(wait, (want - self._tokens) * 60 / self.tpm)
        return wait

    def acquire(self, tokens: int = 0, deadline_s: float | None = None) -> float:
        """Block until one request of `tokens` may start; returns the seconds waited."""
        start = self._clock()
        while True:
            with self._lock:
                now = self._clock()
                self._refill(now)
                wait = self._wait_needed(tokens, now)
                if wait <= 0:
                    if self.rpm:
                        self._requests -= 1
                    if self.tpm:
                        self._tokens -= tokens
                    waited = now - start
                    self.waited_s += waited
                    return waited
            if deadline_s is not None and (now - start) + wait > deadline_s:
                raise RateLimitWait(f"the rate limit needs a wait of {wait:.1f} s, past the call's deadline")
            self._sleep(min(wait, 1.0))

    def observe(self, headers: Mapping[str, str]) -> None:
        """Hold all callers until the reset the provider names when it says nothing is left."""
        for kind in ("requests", "tokens"):
            remaining = _first(headers, f"x-ratelimit-remaining-{kind}", f"anthropic-ratelimit-{kind}-remaining")
            if remaining is None or remaining.strip() not in ("0", "0.0"):
                continue
            reset = _reset_seconds(_first(headers, f"x-ratelimit-reset-{kind}", f"anthropic-ratelimit-{kind}-reset"))
            if reset:
                with self._lock:
                    self._hold_until = max(self._hold_until, self._clock() + min(reset, 120.0))


def _first(headers: Mapping[str, str], *names: str) -> str | None:
    return next((headers.get(n) for n in names if headers.get(n) is not None), None)


def _reset_seconds(value: str | None) -> float | None:
    """OpenAI sends durations ('1s', '6m0s', '250ms'), Anthropic RFC 3339 times."""
    if not value:
        return None
    m = _DURATION.match(value.strip())
    if m and any(m.groups()):
        h, mi, s, ms = (float(g) if g else 0.0 for g in m.groups())
        return h * 3600 + mi * 60 + s + ms / 1000
    try:
        return max(0.0, (datetime.fromisoformat(value.replace("Z", "+00:00")) - datetime.now(UTC)).total_seconds())
    except ValueError:
        return None


# The limiters themselves (state every caller in the process shares), never their settings: the
# limits come with each model's ModelInfo, i.e. models.toml or the run's --rpm/--tpm.
_LIMITERS: dict[str, RateLimiter] = {}
_REGISTRY_LOCK = threading.Lock()


def limiter_for(name: str, rpm: float | None = None, tpm: float | None = None) -> RateLimiter:
    """The process-wide limiter of a model with these limits. Every model of one run passes the
    same limits (its RunSetup); a run with other limits in the same process reconfigures it."""
    with _REGISTRY_LOCK:
        limiter = _LIMITERS.get(name)
        if limiter is None:
            limiter = _LIMITERS[name] = RateLimiter(rpm, tpm)
        elif (limiter.rpm, limiter.tpm) != (rpm, tpm):
            limiter.configure(rpm, tpm)
        return limiter
