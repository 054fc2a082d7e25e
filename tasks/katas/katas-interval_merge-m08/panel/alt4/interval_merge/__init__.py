"""Interval unions with a heap for merging and repeated splitting for subtraction."""
import heapq
from numbers import Real


def _valid(pair):
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise TypeError("interval must be a 2-element tuple or list")
    start, end = pair
    for v in (start, end):
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise TypeError("interval bounds must be int or float")
    if start > end:
        raise ValueError("interval start exceeds end")
    return start, end


def merge(intervals):
    heap = [_valid(p) for p in intervals]
    heapq.heapify(heap)
    merged = []
    while heap:
        start, end = heapq.heappop(heap)
        if start == end:
            continue
        if merged and merged[-1][1] >= start:
            prev_start, prev_end = merged.pop()
            merged.append((prev_start, end if end > prev_end else prev_end))
        else:
            merged.append((start, end))
    return merged


def insert(intervals, new):
    pairs = list(intervals)
    checked = _valid(new)
    return merge(pairs + [checked])


def _cut(pieces, hole):
    lo, hi = hole
    out = []
    for start, end in pieces:
        if hi <= start or lo >= end:
            out.append((start, end))
            continue
        if start < lo:
            out.append((start, lo))
        if hi < end:
            out.append((hi, end))
    return out


def subtract(intervals, removed):
    pieces = merge(intervals)
    holes = [_valid(h) for h in removed]
    for hole in holes:
        if hole[0] < hole[1]:
            pieces = _cut(pieces, hole)
    return merge(pieces)


def intersect(a, b):
    left, right = merge(a), merge(b)
    found = []
    for s1, e1 in left:
        for s2, e2 in right:
            if s2 < e1 and s1 < e2:
                found.append((max(s1, s2), min(e1, e2)))
    return merge(found)


def contains(intervals, point):
    if isinstance(point, bool) or not isinstance(point, Real) or not isinstance(point, (int, float)):
        raise TypeError("point must be int or float")
    return any(s <= point < e for s, e in merge(intervals))


def total_length(intervals):
    return sum([e - s for s, e in merge(intervals)])
