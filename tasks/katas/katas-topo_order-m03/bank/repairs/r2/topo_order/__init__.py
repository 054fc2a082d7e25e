"""Topological order (smallest-first Kahn), longest-path levels, and cycle reporting."""
from __future__ import annotations

import heapq
from typing import Hashable, Iterable

__all__ = ["CycleError", "levels", "topo_sort"]


class CycleError(ValueError):
    def __init__(self, cycle: list, remaining: list) -> None:
        super().__init__(f"dependency cycle: {' -> '.join(map(str, cycle))}")
        self.cycle = cycle
        self.remaining = remaining


def _build(nodes: Iterable[Hashable], edges: Iterable) -> tuple[dict, dict]:
    """Successor sets and in-degrees, with repeated edges counted once."""
    successors: dict = {}
    for node in nodes:
        successors.setdefault(node, set())
    for edge in edges:
        if not isinstance(edge, (tuple, list)) or len(edge) != 2:
            raise TypeError(f"an edge must be a (u, v) pair, got {edge!r}")
        u, v = edge
        successors.setdefault(u, set()).add(v)
        successors.setdefault(v, set())
    indegree = {node: 0 for node in successors}
    for targets in successors.values():
        for v in targets:
            indegree[v] += len(targets)
    return successors, indegree


def _find_cycle(successors: dict, remaining: list) -> list:
    """Depth-first search restricted to the stuck nodes; returns [n0, ..., n0] with n0 smallest."""
    stuck = set(remaining)
    state: dict = {}  # node -> 1 while on the DFS path, 2 when finished
    for root in remaining:
        if root in state:
            continue
        path = [root]
        state[root] = 1
        iterators = [iter(sorted(successors[root] & stuck))]
        while iterators:
            nxt = next(iterators[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                iterators.pop()
                continue
            if state.get(nxt) == 1:
                loop = path[path.index(nxt):]
                start = loop.index(min(loop))
                loop = loop[start:] + loop[:start]
                return loop + [loop[0]]
            if nxt not in state:
                state[nxt] = 1
                path.append(nxt)
                iterators.append(iter(sorted(successors[nxt] & stuck)))
    raise AssertionError("stuck nodes always contain a cycle")


def _kahn(nodes: Iterable[Hashable], edges: Iterable) -> tuple[list, dict]:
    successors, indegree = _build(nodes, edges)
    ready = [node for node, degree in indegree.items() if degree == 0]
    heapq.heapify(ready)
    order: list = []
    depth = {node: 0 for node in ready}
    while ready:
        node = heapq.heappop(ready)
        order.append(node)
        for nxt in successors[node]:
            depth[nxt] = max(depth.get(nxt, 0), depth[node] + 1)
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                heapq.heappush(ready, nxt)
    if len(order) < len(successors):
        placed = set(order)
        remaining = sorted(node for node in successors if node not in placed)
        raise CycleError(_find_cycle(successors, remaining), remaining)
    return order, depth


def topo_sort(nodes: Iterable[Hashable], edges: Iterable) -> list:
    order, _ = _kahn(nodes, edges)
    return order


def levels(nodes: Iterable[Hashable], edges: Iterable) -> list[list]:
    order, depth = _kahn(nodes, edges)
    grouped: dict[int, list] = {}
    for node in order:
        grouped.setdefault(depth[node], []).append(node)
    return [sorted(grouped[k]) for k in range(len(grouped))]
