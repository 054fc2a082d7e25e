"""Interval unions, functional style: reduce for merging, complement for subtraction."""
from functools import reduce
import math


def _is_number(x):
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _checked(intervals):
    checked = []
    for iv in intervals:
        if not (isinstance(iv, (list, tuple)) and len(iv) == 2 and all(map(_is_number, iv))):
            raise TypeError(f"invalid interval {iv!r}")
        if iv[0] > iv[1]:
            raise ValueError(f"reversed interval {iv!r}")
        checked.append(tuple(iv))
    return checked


def _absorb(acc, iv):
    if acc and iv[0] <= acc[-1][1]:
        if iv[1] > acc[-1][1]:
            return acc[:-1] + [(acc[-1][0], iv[1])]
        return acc
    return acc + [iv]


def _union(pairs):
    nonempty = sorted((iv for iv in pairs if iv[1] > iv[0]), key=lambda iv: iv[0])
    return reduce(_absorb, nonempty, [])


def merge(intervals):
    return _union(_checked(intervals))


def insert(intervals, new):
    return _union(_checked(intervals) + _checked([new]))


def _pairwise_overlap(xs, ys):
    out = []
    for a0, a1 in xs:
        for b0, b1 in ys:
            lo, hi = max(a0, b0), min(a1, b1)
            if lo < hi:
                out.append((lo, hi))
    return _union(out)


def _complement(union):
    edges = [-math.inf] + [x for iv in union for x in iv] + [math.inf]
    return [(edges[k], edges[k + 1]) for k in range(0, len(edges), 2) if edges[k] < edges[k + 1]]


def intersect(a, b):
    return _pairwise_overlap(_union(_checked(a)), _union(_checked(b)))


def subtract(intervals, removed):
    base = _union(_checked(intervals))
    holes = _union(_checked(removed))
    return _pairwise_overlap(base, _complement(holes))


def contains(intervals, point):
    if not _is_number(point):
        raise TypeError("point must be a number")
    return any(lo <= point < hi for lo, hi in _union(_checked(intervals)))


def total_length(intervals):
    return sum(hi - lo for lo, hi in merge(intervals))
