"""Sliding window where the min and max queues store ring-buffer slot numbers; a slot number is
stale once the absolute position written to it has left the window."""
import math
from collections import deque

__all__ = ["SlidingWindow"]


class SlidingWindow:
    def __init__(self, size):
        if isinstance(size, bool) or not isinstance(size, int):
            raise TypeError("size should be int")
        if size < 1:
            raise ValueError("size should be >= 1")
        self.size = size
        self.ops = 0
        self._reset()

    def _reset(self):
        self._buf = [0] * self.size
        self._stamp = [-1] * self.size  # absolute position last written to each slot
        self._written = 0
        self._sum = 0
        self._min_slots = deque()
        self._max_slots = deque()

    clear = _reset

    def __len__(self):
        return min(self.size, self._written)

    def push(self, value):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"unsupported value type {type(value).__name__}")
        if isinstance(value, float) and math.isnan(value):
            raise ValueError("NaN is not allowed")
        pos = self._written
        slot = pos % self.size
        if pos >= self.size:
            self._sum -= self._buf[slot]
        self._buf[slot] = value
        self._stamp[slot] = pos
        self._sum += value
        self._written += 1
        lo_edge = self._written - self.size
        for dq, drop in ((self._min_slots, lambda old: old > value), (self._max_slots, lambda old: old < value)):
            while dq:
                self.ops += 1
                if not drop(self._buf[dq[-1][0]]):
                    break
                dq.pop()
            dq.append((slot, pos))
            while dq[0][1] < lo_edge:
                dq.popleft()

    def extend(self, values):
        for v in values:
            self.push(v)

    def _require(self):
        if self._written == 0:
            raise ValueError("empty window")

    def min(self):
        self._require()
        return self._buf[self._min_slots[0][0]]

    def max(self):
        self._require()
        return self._buf[self._max_slots[0][0]]

    def mean(self):
        self._require()
        return self._sum / len(self)

    def values(self):
        n = len(self)
        return [self._buf[p % self.size] for p in range(self._written - n, self._written)]
