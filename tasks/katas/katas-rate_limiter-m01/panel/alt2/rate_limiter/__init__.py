"""Token bucket that numbers refill slots from a fixed origin: slot(t) = (t - origin) // interval.

Refilling is then "add rate tokens per slot passed since the last slot we accounted for".
"""

__all__ = ["TokenBucket", "RateLimiter"]


class TokenBucket:
    def __init__(self, capacity, rate, interval=1, now=0):
        self._cap = self._pos("capacity", capacity)
        self._rate = self._pos("rate", rate)
        self._interval = self._pos("interval", interval)
        self._origin = self._as_int(now)
        self._slot = 0
        self._seen = now
        self._have = capacity
        self._ok = 0
        self._no = 0

    @staticmethod
    def _as_int(v):
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError(f"{v!r} is not an int")
        return v

    @classmethod
    def _pos(cls, name, v):
        if cls._as_int(v) <= 0:
            raise ValueError(f"{name} must be positive")
        return v

    def _catch_up(self, now):
        self._as_int(now)
        if now < self._seen:
            raise ValueError("non-monotonic clock")
        self._seen = now
        slot = (now - self._origin) // self._interval
        passed = slot - self._slot
        self._slot = slot
        self._have = min(self._cap, self._have + passed * self._rate)

    def _bounds(self, n):
        self._as_int(n)
        if n < 1 or n > self._cap:
            raise ValueError("n must be between 1 and capacity")

    def try_acquire(self, now, n=1):
        self._bounds(n)
        self._catch_up(now)
        if n <= self._have:
            self._have -= n
            self._ok += 1
            return True
        self._no += 1
        return False

    def tokens(self, now):
        self._catch_up(now)
        return self._have

    def wait_time(self, now, n=1):
        self._bounds(n)
        self._catch_up(now)
        if self._have >= n:
            return 0
        slots = (n - self._have + self._rate - 1) // self._rate
        target_slot = self._slot + slots
        return self._origin + target_slot * self._interval - now

    def stats(self):
        return {"denied": self._no, "allowed": self._ok}


class RateLimiter:
    def __init__(self, capacity, rate, interval=1):
        TokenBucket(capacity, rate, interval)
        self._args = {"capacity": capacity, "rate": rate, "interval": interval}
        self._buckets = {}
        self._order = []

    def allow(self, key, now, n=1):
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = self._buckets[key] = TokenBucket(now=now, **self._args)
            self._order.append(key)
        return bucket.try_acquire(now, n)

    def remaining(self, key, now):
        return self._buckets[key].tokens(now) if key in self._buckets else self._args["capacity"]

    def forget(self, key):
        if key in self._buckets:
            del self._buckets[key]
            self._order.remove(key)
            return True
        return False

    def keys(self):
        return list(self._order)
