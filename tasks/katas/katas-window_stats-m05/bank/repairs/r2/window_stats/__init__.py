"""Sliding-window statistics with monotonic deques.

The min deque holds (position, value) pairs with increasing values, the max deque decreasing
ones. Each value enters and leaves each deque once, so the comparisons made while pushing are
amortised O(1); queries read the deque fronts without comparing anything.
"""
import math
from collections import deque

__all__ = ["SlidingWindow"]


class SlidingWindow:
    def __init__(self, size):
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError(f"size must be an int, not {type(size).__name__}")
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        self.size = size
        self.ops = 0
        self.clear()

    def clear(self):
        self._window = deque(maxlen=self.size)
        self._mins = deque(list(getattr(self, "_mins", ()))[-1:])
        self._maxs = deque()
        self._total = 0
        self._pushed = 0

    def __len__(self):
        return len(self._window)

    def _greater(self, a, b):
        self.ops += 1
        return a > b

    def _smaller(self, a, b):
        self.ops += 1
        return a < b

    def push(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"value must be an int or float, not {type(value).__name__}")
        if isinstance(value, float) and math.isnan(value):
            raise ValueError("value must not be NaN")
        pos = self._pushed
        self._pushed += 1
        if len(self._window) == self.size:
            self._total -= self._window[0]
        self._window.append(value)
        self._total += value
        oldest = pos - self.size  # positions <= oldest have left the window
        while self._mins and self._greater(self._mins[-1][1], value):
            self._mins.pop()
        self._mins.append((pos, value))
        if self._mins[0][0] <= oldest:
            self._mins.popleft()
        while self._maxs and self._smaller(self._maxs[-1][1], value):
            self._maxs.pop()
        self._maxs.append((pos, value))
        if self._maxs[0][0] <= oldest:
            self._maxs.popleft()

    def extend(self, values):
        for value in values:
            self.push(value)

    def min(self):
        if not self._window:
            raise ValueError("min() of an empty window")
        return self._mins[0][1]

    def max(self):
        if not self._window:
            raise ValueError("max() of an empty window")
        return self._maxs[0][1]

    def mean(self):
        if not self._window:
            raise ValueError("mean() of an empty window")
        return self._total / len(self._window)

    def values(self):
        return list(self._window)
