"""Bottom-up pairwise merging: merge neighbours round after round until one run is left."""
from collections import deque
from dataclasses import dataclass

__all__ = ["MergeResult", "merge"]


@dataclass(frozen=True)
class MergeResult:
    items: list
    comparisons: int


class _Merger:
    def __init__(self, key):
        self.key = key
        self.comparisons = 0

    def precedes(self, k1, k2):
        self.comparisons += 1
        return k1 < k2

    def prepare(self, position, seq):
        run = deque()
        for item in seq:
            k = item if self.key is None else self.key(item)
            if run and self.precedes(k, run[-1][0]):
                raise ValueError("unsorted input at index %d" % position)
            run.append((k, item))
        return run

    def pair(self, first, second):
        merged = deque()
        while first and second:
            if self.precedes(second[0][0], first[0][0]):
                merged.append(second.popleft())
            else:
                merged.append(first.popleft())
        merged.extend(first or second)
        return merged


def merge(lists, key=None):
    if key is not None and not callable(key):
        raise TypeError("key must be callable")
    m = _Merger(key)
    runs = [run for run in (m.prepare(i, seq) for i, seq in enumerate(lists)) if run]
    while len(runs) > 1:
        nxt = [m.pair(runs[i], runs[i + 1]) for i in range(0, len(runs) - 1, 2)]
        if len(runs) % 2:
            nxt.append(runs[-1])
        runs = nxt
    items = [item for _, item in runs[0]] if runs else []
    return MergeResult(items, m.comparisons)
