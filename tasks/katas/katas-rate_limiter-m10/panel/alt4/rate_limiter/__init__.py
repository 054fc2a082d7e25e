"""Token bucket whose state is an immutable record advanced by a pure function."""
from typing import NamedTuple

__all__ = ["TokenBucket", "RateLimiter"]


class _State(NamedTuple):
    tokens: int
    anchor: int
    last: int


class _Config(NamedTuple):
    capacity: int
    rate: int
    interval: int


def _refilled(cfg, state, now):
    if now < state.last:
        raise ValueError(f"now={now} is before {state.last}")
    k = (now - state.anchor) // cfg.interval
    return _State(min(cfg.capacity, state.tokens + k * cfg.rate), state.anchor + k * cfg.interval, now)


def _validate_int(x):
    if type(x) is not int:
        raise TypeError(type(x).__name__)


def _config(capacity, rate, interval):
    for x in (capacity, rate, interval):
        _validate_int(x)
        if x < 1:
            raise ValueError("must be >= 1")
    return _Config(capacity, rate, interval)


class TokenBucket:
    def __init__(self, capacity, rate, interval=1, now=0):
        self._cfg = _config(capacity, rate, interval)
        _validate_int(now)
        self._state = _State(capacity, now, now)
        self._allowed = self._denied = 0

    def _n(self, n):
        _validate_int(n)
        if not 0 < n <= self._cfg.capacity:
            raise ValueError("n outside 1..capacity")

    def _step(self, now):
        _validate_int(now)
        self._state = _refilled(self._cfg, self._state, now)
        return self._state

    def try_acquire(self, now, n=1):
        self._n(n)
        state = self._step(now)
        if state.tokens < n:
            self._denied += 1
            return False
        self._state = state._replace(tokens=state.tokens - n)
        self._allowed += 1
        return True

    def tokens(self, now):
        return self._step(now).tokens

    def wait_time(self, now, n=1):
        self._n(n)
        state = self._step(now)
        if state.tokens >= n:
            return 0
        k = 1
        while state.tokens + k * self._cfg.rate < n:
            k += 1
        return state.anchor + k * self._cfg.interval - now

    def stats(self):
        return {"allowed": self._allowed, "denied": self._denied}


class RateLimiter:
    def __init__(self, capacity, rate, interval=1):
        self._cfg = _config(capacity, rate, interval)
        self._table = {}

    def allow(self, key, now, n=1):
        bucket = self._table.setdefault(key, None) or TokenBucket(*self._cfg, now=now)
        self._table[key] = bucket
        return bucket.try_acquire(now, n)

    def remaining(self, key, now):
        if self._table.get(key) is None:
            return self._cfg.capacity
        return self._table[key].tokens(now)

    def forget(self, key):
        return self._table.pop(key, None) is not None

    def keys(self):
        return [k for k, b in self._table.items() if b is not None]
