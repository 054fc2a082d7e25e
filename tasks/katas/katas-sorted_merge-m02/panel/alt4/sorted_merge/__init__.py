"""k-way merge over a hand-written binary heap of cursors, replacing the top in place."""
from dataclasses import dataclass

__all__ = ["MergeResult", "merge"]


@dataclass(frozen=True)
class MergeResult:
    items: list
    comparisons: int


def merge(lists, key=None):
    if key is not None and not callable(key):
        raise TypeError(f"bad key {key!r}")
    ops = 0

    def before(x, y):
        # x, y are [key, source, pos]; the source index breaks ties for stability and is not a
        # key comparison on its own, so one call counts once.
        nonlocal ops
        ops += 1
        if x[0] < y[0]:
            return True
        if y[0] < x[0]:
            return False
        return x[1] < y[1]

    seqs = [list(s) for s in lists]
    keyed = [[(v if key is None else key(v)) for v in s] for s in seqs]
    for src, ks in enumerate(keyed):
        for pos in range(1, len(ks)):
            ops += 1
            if ks[pos] < ks[pos - 1]:
                raise ValueError(f"input {src}: element {pos} breaks the order")
    heap = [[ks[0], src, 0] for src, ks in enumerate(keyed) if ks]

    def sink(i):
        n = len(heap)
        while True:
            c = 2 * i + 1
            if c >= n:
                return
            if c + 1 < n and before(heap[c + 1], heap[c]):
                c += 1
            if not before(heap[c], heap[i]):
                return
            heap[c], heap[i] = heap[i], heap[c]
            i = c

    for i in range(len(heap) // 2 - 1, -1, -1):
        sink(i)
    out = []
    while heap:
        top = heap[0]
        src, pos = top[1], top[2]
        out.append(seqs[src][pos])
        if pos + 1 < len(keyed[src]):
            heap[0] = [keyed[src][pos + 1], src, pos + 1]
        else:
            last = heap.pop()
            if not heap:
                break
            heap[0] = last
        sink(0)
    return MergeResult(out, ops)
