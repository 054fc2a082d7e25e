"""Token bucket that replays refills one interval at a time.

The loop stops as soon as the bucket is full and then jumps the anchor over the remaining whole
intervals, so its cost is bounded by capacity / rate steps per call, not by elapsed time.
"""

__all__ = ["TokenBucket", "RateLimiter"]


def _check_int(*values):
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int):
            raise TypeError("all parameters are ints")


class TokenBucket:
    def __init__(self, capacity, rate, interval=1, now=0):
        _check_int(capacity, rate, interval, now)
        if capacity < 1 or rate < 1 or interval < 1:
            raise ValueError("parameters must be at least 1")
        self._capacity = capacity
        self._rate = rate
        self._interval = interval
        self._tokens = capacity
        self._next_refill = now + interval
        self._clock = now
        self._stats = [0, 0]

    def _tick(self, now):
        _check_int(now)
        if now < self._clock:
            raise ValueError("clock moved backwards")
        self._clock = now
        while self._next_refill <= now and self._tokens < self._capacity:
            self._tokens = min(self._capacity, self._tokens + self._rate)
            self._next_refill += self._interval
        if self._next_refill <= now:
            skipped = (now - self._next_refill) // self._interval + 1
            self._next_refill += skipped * self._interval

    def _check_n(self, n):
        _check_int(n)
        if n < 1 or n > self._capacity:
            raise ValueError("bad n")

    def try_acquire(self, now, n=1):
        self._check_n(n)
        self._tick(now)
        if self._tokens < n:
            self._stats[1] += 1
            return False
        self._tokens -= n
        self._stats[0] += 1
        return True

    def tokens(self, now):
        self._tick(now)
        return self._tokens

    def wait_time(self, now, n=1):
        self._check_n(n)
        self._tick(now)
        have, when = self._tokens, self._next_refill
        if have >= n:
            return 0
        while True:
            have += self._rate
            if have >= n:
                return when - now
            when += self._interval

    def stats(self):
        return {"allowed": self._stats[0], "denied": self._stats[1]}


class RateLimiter:
    def __init__(self, capacity, rate, interval=1):
        _check_int(capacity, rate, interval)
        if capacity < 1 or rate < 1 or interval < 1:
            raise ValueError("parameters must be at least 1")
        self.capacity, self.rate, self.interval = capacity, rate, interval
        self.buckets = {}

    def allow(self, key, now, n=1):
        if key not in self.buckets:
            self.buckets[key] = TokenBucket(self.capacity, self.rate, self.interval, now)
        return self.buckets[key].try_acquire(now, n)

    def remaining(self, key, now):
        bucket = self.buckets.get(key)
        return self.capacity if bucket is None else bucket.tokens(now)

    def forget(self, key):
        try:
            del self.buckets[key]
            return True
        except KeyError:
            return False

    def keys(self):
        return list(self.buckets.keys())
