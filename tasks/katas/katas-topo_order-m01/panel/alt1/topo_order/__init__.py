"""Topological order by repeated scanning for the smallest ready node (quadratic, simple)."""
from functools import lru_cache


class CycleError(ValueError):
    def __init__(self, cycle, remaining):
        super().__init__("graph has a cycle")
        self.cycle = cycle
        self.remaining = remaining


def _graph(nodes, edges):
    preds = {}
    for n in nodes:
        preds.setdefault(n, set())
    for e in edges:
        if not isinstance(e, (tuple, list)) or len(e) != 2:
            raise TypeError("edges must be pairs")
        a, b = e
        preds.setdefault(a, set())
        preds.setdefault(b, set()).add(a)
    return preds


def _cycle_backwards(preds, stuck):
    # Every stuck node has a stuck predecessor, so walking backwards must revisit a node.
    seen = {}
    walk = []
    node = min(stuck)
    while node not in seen:
        seen[node] = len(walk)
        walk.append(node)
        node = min(p for p in preds[node] if p in stuck)
    loop = walk[seen[node]:]
    loop.reverse()  # walked against the edges
    k = loop.index(min(loop))
    loop = loop[k:] + loop[:k]
    return loop + [loop[0]]


def _order(preds):
    placed, order = set(), []
    while len(order) < len(preds):
        ready = [n for n in preds if n not in placed and preds[n] <= placed]
        if not ready:
            stuck = {n for n in preds if n not in placed}
            raise CycleError(_cycle_backwards(preds, stuck), sorted(stuck))
        pick = min(ready)
        placed.add(pick)
        order.append(pick)
    return order


def topo_sort(nodes, edges):
    return _order(_graph(nodes, edges))


def levels(nodes, edges):
    preds = _graph(nodes, edges)
    order = _order(preds)

    @lru_cache(maxsize=None)
    def depth(n):
        return max((depth(p) + 1 for p in preds[n]), default=0)

    out = []
    for n in order:
        d = depth(n)
        while len(out) <= d:
            out.append([])
        out[d].append(n)
    return [sorted(level) for level in out]
