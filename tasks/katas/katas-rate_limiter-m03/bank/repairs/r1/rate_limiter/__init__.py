"""Token bucket with whole-interval refills on a caller-supplied integer clock."""

__all__ = ["TokenBucket", "RateLimiter"]


def _int(name, value, minimum=None):
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return value


class TokenBucket:
    def __init__(self, capacity, rate, interval=1, now=0):
        self._capacity = _int("capacity", capacity, 1)
        self._rate = _int("rate", rate, 1)
        self._interval = _int("interval", interval, 1)
        self._anchor = self._last = _int("now", now)
        self._tokens = capacity
        self._allowed = 0
        self._denied = 0

    def _advance(self, now):
        _int("now", now)
        if now < self._last:
            raise ValueError(f"clock went backwards: {now} < {self._last}")
        self._last = now
        elapsed = (now - self._anchor) // self._interval
        if elapsed:
            self._tokens = min(self._tokens + elapsed * self._rate, self._capacity)
            self._anchor += elapsed * self._interval

    def _check_n(self, n):
        _int("n", n, 1)
        if n > self._capacity:
            raise ValueError(f"n={n} exceeds the capacity {self._capacity}")

    def try_acquire(self, now, n=1):
        self._check_n(n)
        self._advance(now)
        if self._tokens >= n:
            self._tokens -= n
            self._allowed += 1
            return True
        self._denied += 1
        return False

    def tokens(self, now):
        self._advance(now)
        return self._tokens

    def wait_time(self, now, n=1):
        self._check_n(n)
        self._advance(now)
        missing = n - self._tokens
        if missing <= 0:
            return 0
        refills = -(-missing // self._rate)   # ceiling division on ints
        return self._anchor + refills * self._interval - now

    def stats(self):
        return {"allowed": self._allowed, "denied": self._denied}


class RateLimiter:
    def __init__(self, capacity, rate, interval=1):
        TokenBucket(capacity, rate, interval)     # validates the parameters once, up front
        self._params = (capacity, rate, interval)
        self._buckets = {}

    def allow(self, key, now, n=1):
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = TokenBucket(*self._params, now=now)
            self._buckets[key] = bucket
        return bucket.try_acquire(now, n)

    def remaining(self, key, now):
        bucket = self._buckets.get(key)
        if bucket is None:
            return self._params[0]
        return bucket.tokens(now)

    def forget(self, key):
        return self._buckets.pop(key, None) is not None

    def keys(self):
        return list(self._buckets)
