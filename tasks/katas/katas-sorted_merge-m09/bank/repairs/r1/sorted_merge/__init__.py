"""k-way merge of sorted lists by balanced divide and conquer.

Merging halves recursively gives ceil(log2 k) levels, and every level costs at most N key
comparisons, which keeps the total within the documented bound.
"""
from dataclasses import dataclass

__all__ = ["MergeResult", "merge"]


@dataclass(frozen=True)
class MergeResult:
    items: list
    comparisons: int


class _Counter:
    """Counts key comparisons; every ordering test in this module goes through ``less``."""

    def __init__(self):
        self.count = 0

    def less(self, a, b):
        self.count += 1
        return a < b


def _identity(value):
    return value


def _keyed(index, values, key, counter):
    pairs = [(key(value), value) for value in values]
    for pos in range(1, len(pairs)):
        if counter.less(pairs[pos][0], pairs[pos - 1][0]):
            raise ValueError(f"input {index} is not sorted at position {pos}")
    return pairs


def _merge_two(a, b, counter):
    out = []
    i = j = 0
    while i < len(a) and j < len(b):
        # Take from b only when strictly smaller: ties go to a, the earlier input (stability).
        if counter.less(b[j][0], a[i][0]):
            out.append(b[j])
            j += 1
        else:
            out.append(a[i])
            i += 1
    out.extend(a[i:])
    out.extend(b[j:])
    return out


def _merge_range(runs, lo, hi, counter):
    if hi - lo == 1:
        return runs[lo]
    mid = (lo + hi) // 2
    left = _merge_range(runs, lo, mid, counter)
    right = _merge_range(runs, mid, hi, counter)
    return _merge_two(left, right, counter)


def merge(lists, key=None):
    if not (key is None or callable(key)):
        raise TypeError(f"key must be a callable or None, not {type(key).__name__}")
    keyfunc = _identity if key is None else key
    counter = _Counter()
    runs = []
    for index, values in enumerate(lists):
        pairs = _keyed(index, list(values), keyfunc, counter)
        if pairs:
            runs.append(pairs)
    if not runs:
        return MergeResult([], counter.count)
    merged = _merge_range(runs, 0, len(runs), counter)
    return MergeResult([value for _, value in merged], counter.count)
