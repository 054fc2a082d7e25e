"""Sliding window with one generic monotone-deque class used twice (min with ``<`` and max with
``>``); the window values live in a bounded deque and the mean is recomputed from the sum of the
stored values only when the window changes."""
import math
import operator
from collections import deque

__all__ = ["SlidingWindow"]


class _Extremum:
    def __init__(self, owner, keeps):
        self.owner = owner
        self.keeps = keeps  # keeps(new, old): True if the newer value makes the older useless
        self.dq = deque()

    def offer(self, pos, value):
        while self.dq:
            self.owner.ops += 1
            if not self.keeps(value, self.dq[-1][1]):
                break
            self.dq.pop()
        self.dq.append((pos, value))

    def retire(self, pos):
        if self.dq and self.dq[0][0] == pos:
            self.dq.popleft()

    def value(self):
        return self.dq[0][1]


class SlidingWindow:
    def __init__(self, size):
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError("SlidingWindow(size): size is not an int")
        if size < 1:
            raise ValueError("SlidingWindow(size): size < 1")
        self.size = size
        self.ops = 0
        self.clear()

    def clear(self):
        self._vals = deque()
        self._first = 0  # position of the oldest value in the window
        self._lowest = _Extremum(self, operator.lt)
        self._highest = _Extremum(self, operator.gt)
        self._mean_cache = None

    def __len__(self):
        return len(self._vals)

    def push(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"SlidingWindow.push: {type(value).__name__} is not a number")
        if isinstance(value, float) and math.isnan(value):
            raise ValueError("SlidingWindow.push: NaN")
        pos = self._first + len(self._vals)
        self._lowest.offer(pos, value)
        self._highest.offer(pos, value)
        self._vals.append(value)
        if len(self._vals) > self.size:
            self._vals.popleft()
            self._lowest.retire(self._first)
            self._highest.retire(self._first)
            self._first += 1
        self._mean_cache = None

    def extend(self, values):
        for value in values:
            self.push(value)

    def _nonempty(self, name):
        if not self._vals:
            raise ValueError(f"SlidingWindow.{name}: empty window")

    def min(self):
        self._nonempty("min")
        return self._lowest.value()

    def max(self):
        self._nonempty("max")
        return self._highest.value()

    def mean(self):
        self._nonempty("mean")
        if self._mean_cache is None:
            # fsum is exact for the window's floats; recomputed lazily, no value comparisons.
            self._mean_cache = math.fsum(self._vals) / len(self._vals)
        return float(self._mean_cache)

    def values(self):
        return list(self._vals)
