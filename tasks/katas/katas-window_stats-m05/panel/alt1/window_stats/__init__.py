"""Sliding window as a queue made of two stacks; every stack entry carries the min and max of
the entries below it, so each stack answers min/max of its contents from its top entry."""
import math

__all__ = ["SlidingWindow"]


class SlidingWindow:
    def __init__(self, size):
        if type(size) is bool or not isinstance(size, int):
            raise TypeError("size: expected int")
        if size <= 0:
            raise ValueError("size: expected a positive int")
        self.size = size
        self.ops = 0
        self._back = []   # newest values: (value, lo, hi)
        self._front = []  # oldest values on top: (value, lo, hi)
        self._sum = 0

    def _lo(self, a, b):
        self.ops += 1
        return b if b < a else a

    def _hi(self, a, b):
        self.ops += 1
        return b if b > a else a

    def _stack_push(self, stack, value):
        if stack:
            _, lo, hi = stack[-1]
            stack.append((value, self._lo(lo, value), self._hi(hi, value)))
        else:
            stack.append((value, value, value))

    def __len__(self):
        return len(self._back) + len(self._front)

    def _evict(self):
        if not self._front:
            while self._back:
                self._stack_push(self._front, self._back.pop()[0])
        self._sum -= self._front.pop()[0]

    def push(self, value):
        if type(value) is bool or not isinstance(value, (int, float)):
            raise TypeError("value: expected int or float")
        if value != value or (isinstance(value, float) and math.isnan(value)):
            raise ValueError("value: NaN")
        if len(self) == self.size:
            self._evict()
        self._stack_push(self._back, value)
        self._sum += value

    def extend(self, values):
        for v in values:
            self.push(v)

    def clear(self):
        self._back, self._front, self._sum = [], [], 0

    def _need(self, what):
        if not len(self):
            raise ValueError(f"{what}: window is empty")

    def min(self):
        self._need("min")
        if self._back and self._front:
            return self._lo(self._front[-1][1], self._back[-1][1])
        return (self._back or self._front)[-1][1]

    def max(self):
        self._need("max")
        if self._back and self._front:
            return self._hi(self._front[-1][2], self._back[-1][2])
        return (self._back or self._front)[-1][2]

    def mean(self):
        self._need("mean")
        return float(self._sum / len(self))

    def values(self):
        return [entry[0] for entry in reversed(self._front)] + [entry[0] for entry in self._back]
