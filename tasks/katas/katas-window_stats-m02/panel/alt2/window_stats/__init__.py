"""Monotonic queues kept in plain lists with a head offset (compacted now and then) instead of
deques; the window itself is a ring buffer."""
import math

__all__ = ["SlidingWindow"]


class _MonoQueue:
    """Positions/values whose values are monotone; ``worse(a, b)`` says a can never win over b."""

    def __init__(self, worse):
        self.worse = worse
        self.items = []
        self.head = 0

    def add(self, pos, value):
        items = self.items
        while len(items) > self.head and self.worse(items[-1][1], value):
            items.pop()
        items.append((pos, value))

    def expire(self, first_live):
        if self.items[self.head][0] < first_live:
            self.head += 1
            if self.head > 64 and self.head * 2 > len(self.items):
                del self.items[: self.head]
                self.head = 0

    def best(self):
        return self.items[self.head][1]


class SlidingWindow:
    def __init__(self, size):
        if not isinstance(size, int) or isinstance(size, bool):
            raise TypeError("window size must be an integer")
        if size < 1:
            raise ValueError("window size must be positive")
        self.size = size
        self.ops = 0
        self.clear()

    def _count(self):
        self.ops += 1

    def clear(self):
        self._ring = [None] * self.size
        self._n = 0          # values pushed since the last clear
        self._acc = 0
        self._low = _MonoQueue(lambda a, b: self._count() or a > b)
        self._high = _MonoQueue(lambda a, b: self._count() or a < b)

    def __len__(self):
        return min(self._n, self.size)

    def push(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"cannot push {value!r}")
        if isinstance(value, float) and math.isnan(value):
            raise ValueError("cannot push NaN")
        slot = self._n % self.size
        if self._n >= self.size:
            self._acc -= self._ring[slot]
        self._ring[slot] = value
        self._acc += value
        pos = self._n
        self._n += 1
        first_live = self._n - self.size
        for queue in (self._low, self._high):
            queue.add(pos, value)
            queue.expire(first_live)

    def extend(self, values):
        for value in values:
            self.push(value)

    def _check(self):
        if self._n == 0:
            raise ValueError("the window is empty")

    def min(self):
        self._check()
        return self._low.best()

    def max(self):
        self._check()
        return self._high.best()

    def mean(self):
        self._check()
        return self._acc / len(self)

    def values(self):
        count = len(self)
        start = self._n - count
        return [self._ring[(start + i) % self.size] for i in range(count)]
