"""k-way merge with a winner tournament tree over the inputs.

Leaves are the inputs (padded to a power of two); each internal node stores which input currently
wins its subtree. After taking the overall winner only the path from its leaf to the root is
replayed: ceil(log2 k) comparisons per element.
"""
from dataclasses import dataclass

__all__ = ["MergeResult", "merge"]


@dataclass(frozen=True)
class MergeResult:
    items: list
    comparisons: int


def merge(lists, key=None):
    if key is not None and not callable(key):
        raise TypeError("merge(): key is not callable")
    keyof = key if key is not None else (lambda v: v)
    inputs = [list(seq) for seq in lists]
    count = 0
    keys = []
    for idx, seq in enumerate(inputs):
        ks = [keyof(v) for v in seq]
        for p in range(1, len(ks)):
            count += 1
            if ks[p] < ks[p - 1]:
                raise ValueError(f"sequence {idx} not sorted")
        keys.append(ks)
    live = [i for i, seq in enumerate(inputs) if seq]
    if not live:
        return MergeResult([], count)
    size = 1
    while size < len(live):
        size *= 2
    cursor = [0] * len(live)
    tree = [None] * (2 * size)  # tree[size + j] = j for live input j, None for exhausted/padding

    def winner(a, b):
        nonlocal count
        if a is None:
            return b
        if b is None:
            return a
        count += 1
        ka = keys[live[a]][cursor[a]]
        kb = keys[live[b]][cursor[b]]
        return b if kb < ka else a  # ties: a is the earlier input

    for j in range(len(live)):
        tree[size + j] = j
    for node in range(size - 1, 0, -1):
        tree[node] = winner(tree[2 * node], tree[2 * node + 1])
    out = []
    while tree[1] is not None:
        j = tree[1]
        out.append(inputs[live[j]][cursor[j]])
        cursor[j] += 1
        node = size + j
        tree[node] = j if cursor[j] < len(inputs[live[j]]) else None
        node //= 2
        while node:
            tree[node] = winner(tree[2 * node], tree[2 * node + 1])
            node //= 2
    return MergeResult(out, count)
