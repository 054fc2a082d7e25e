"""Unions of half-open intervals [start, end): merge, insert, subtract, intersect, contains."""
from __future__ import annotations

import bisect
from typing import Iterable, Sequence

__all__ = ["contains", "insert", "intersect", "merge", "subtract", "total_length"]

Number = int | float
Interval = tuple[Number, Number]


def _check_number(value: object) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected an int or float, got {value!r}")


def _validate(pair: Sequence[Number]) -> Interval:
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise TypeError(f"an interval must be a (start, end) pair, got {pair!r}")
    start, end = pair
    _check_number(start)
    _check_number(end)
    if start > end:
        raise ValueError(f"interval start {start!r} is after its end {end!r}")
    return (start, end)


def _validated(intervals: Iterable[Sequence[Number]]) -> list[Interval]:
    return [_validate(pair) for pair in intervals]


def _normalise(pairs: list[Interval]) -> list[Interval]:
    """Sort, drop empty intervals and combine overlapping or touching ones."""
    result: list[Interval] = []
    for start, end in sorted(p for p in pairs if p[0] < p[1]):
        if result and start <= result[-1][1]:
            last_start, last_end = result[-1]
            result[-1] = (last_start, max(last_end, end))
        else:
            result.append((start, end))
    return result


def merge(intervals: Iterable[Sequence[Number]]) -> list[Interval]:
    return _normalise(_validated(intervals))


def insert(intervals: Iterable[Sequence[Number]], new: Sequence[Number]) -> list[Interval]:
    pairs = _validated(intervals)
    pairs.append(_validate(new))
    return _normalise(pairs)


def subtract(intervals: Iterable[Sequence[Number]], removed: Iterable[Sequence[Number]]) -> list[Interval]:
    keep = _normalise(_validated(intervals))
    cut = _normalise(_validated(removed))
    result: list[Interval] = []
    j = 0
    for start, end in keep:
        current = start
        # Skip cuts that end before this interval begins; they cannot matter for later ones.
        while j < len(cut) and cut[j][1] <= current:
            j += 1
        k = j
        while k < len(cut) and cut[k][0] < end:
            cut_start, cut_end = cut[k]
            if cut_start > current:
                result.append((current, cut_start))
            current = max(current, cut_end)
            k += 1
        if current < end:
            result.append((current, end))
    return result


def intersect(a: Iterable[Sequence[Number]], b: Iterable[Sequence[Number]]) -> list[Interval]:
    left = _normalise(_validated(a))
    right = _normalise(_validated(b))
    result: list[Interval] = []
    i = j = 0
    while i < len(left) and j < len(right):
        start = max(left[i][0], right[j][0])
        end = min(left[i][1], right[j][1])
        if start < end:
            result.append((start, end))
        if left[i][1] < right[j][1]:
            i += 1
        else:
            j += 1
    return result


def contains(intervals: Iterable[Sequence[Number]], point: Number) -> bool:
    _check_number(point)
    merged = _normalise(_validated(intervals))
    starts = [start for start, _ in merged]
    index = bisect.bisect_right(starts, point) - 1
    return index >= 0 and point < merged[index][1] and point != merged[index][0]


def total_length(intervals: Iterable[Sequence[Number]]) -> Number:
    return sum(end - start for start, end in _normalise(_validated(intervals)))
