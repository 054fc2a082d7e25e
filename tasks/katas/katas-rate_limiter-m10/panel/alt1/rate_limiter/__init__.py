"""Token bucket that tracks the deficit (tokens missing from a full bucket) instead of tokens."""

__all__ = ["TokenBucket", "RateLimiter"]


def _need_int(value):
    if type(value) is not int:
        raise TypeError("integer required")
    return value


class TokenBucket:
    def __init__(self, capacity, rate, interval=1, now=0):
        for v in (capacity, rate, interval, now):
            _need_int(v)
        if min(capacity, rate, interval) < 1:
            raise ValueError("capacity, rate and interval must be positive")
        self.capacity, self.rate, self.interval = capacity, rate, interval
        self._deficit = 0
        self._anchor = now
        self._high_water = now
        self._counts = {"allowed": 0, "denied": 0}

    def _sync(self, now):
        _need_int(now)
        if now < self._high_water:
            raise ValueError("time must not go backwards")
        self._high_water = now
        steps, _ = divmod(now - self._anchor, self.interval)
        self._deficit = max(0, self._deficit - steps * self.rate)
        self._anchor += steps * self.interval

    def _valid_n(self, n):
        _need_int(n)
        if not 1 <= n <= self.capacity:
            raise ValueError("n out of range")

    def try_acquire(self, now, n=1):
        self._valid_n(n)
        self._sync(now)
        ok = self.capacity - self._deficit >= n
        if ok:
            self._deficit += n
        self._counts["allowed" if ok else "denied"] += 1
        return ok

    def tokens(self, now):
        self._sync(now)
        return self.capacity - self._deficit

    def wait_time(self, now, n=1):
        self._valid_n(n)
        self._sync(now)
        shortfall = n - (self.capacity - self._deficit)
        if shortfall <= 0:
            return 0
        refills, rest = divmod(shortfall, self.rate)
        if rest:
            refills += 1
        return self._anchor - now + refills * self.interval

    def stats(self):
        return dict(self._counts)


class RateLimiter:
    def __init__(self, capacity, rate, interval=1):
        self._template = TokenBucket(capacity, rate, interval)
        self._buckets = {}

    def _new(self, now):
        t = self._template
        return TokenBucket(t.capacity, t.rate, t.interval, now)

    def allow(self, key, now, n=1):
        if key not in self._buckets:
            self._buckets[key] = self._new(now)
        return self._buckets[key].try_acquire(now, n)

    def remaining(self, key, now):
        if key in self._buckets:
            return self._buckets[key].tokens(now)
        return self._template.capacity

    def forget(self, key):
        return self._buckets.pop(key, False) is not False

    def keys(self):
        return [k for k in self._buckets]
