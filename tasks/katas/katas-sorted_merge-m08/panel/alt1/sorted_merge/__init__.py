"""k-way merge with heapq over per-input cursors; each heap entry counts its own comparisons."""
import heapq
from dataclasses import dataclass

__all__ = ["MergeResult", "merge"]


@dataclass(frozen=True)
class MergeResult:
    items: list
    comparisons: int


class _Tally:
    def __init__(self):
        self.n = 0


class _Head:
    """Current element of one input; ordered by (key, input index) so ties favour earlier inputs."""

    __slots__ = ("key", "source", "value", "tally")

    def __init__(self, key, source, value, tally):
        self.key, self.source, self.value, self.tally = key, source, value, tally

    def __lt__(self, other):
        self.tally.n += 1
        if self.key < other.key:
            return True
        if other.key < self.key:
            # Still one logical comparison of two keys from the caller's point of view.
            return False
        return self.source < other.source


def merge(lists, key=None):
    if not (key is None or callable(key)):
        raise TypeError("key has to be callable")
    tally = _Tally()
    iters = [iter(list(seq)) for seq in lists]
    heap = []
    for source, it in enumerate(iters):
        for value in it:
            heap.append(_Head(value if key is None else key(value), source, value, tally))
            break
    heapq.heapify(heap)
    out = []
    while heap:
        head = heap[0]
        out.append(head.value)
        nxt = next(iters[head.source], _Head)
        if nxt is _Head:
            heapq.heappop(heap)
            continue
        nkey = nxt if key is None else key(nxt)
        tally.n += 1
        if nkey < head.key:
            raise ValueError(f"list #{head.source} is out of order")
        heapq.heapreplace(heap, _Head(nkey, head.source, nxt, tally))
    return MergeResult(out, tally.n)
