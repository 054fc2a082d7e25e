"""Dijkstra shortest paths on a directed graph with non-negative weights."""
from __future__ import annotations

import heapq
import itertools
import math
from typing import Hashable

__all__ = ["Graph"]


class Graph:
    def __init__(self) -> None:
        self._adj: dict[Hashable, dict[Hashable, float]] = {}

    def add_node(self, node: Hashable) -> None:
        self._adj.setdefault(node, {})

    def has_node(self, node: Hashable) -> bool:
        return node in self._adj

    def add_edge(self, u: Hashable, v: Hashable, weight: float) -> None:
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise TypeError(f"weight must be an int or float, got {weight!r}")
        if weight < 0 or not math.isfinite(weight):
            raise ValueError(f"weight must be finite and >= 0, got {weight!r}")
        edges = self._adj.setdefault(u, {})
        self._adj.setdefault(v, {})
        # Parallel edges collapse to the lighter one: only it can lie on a shortest path.
        edges[v] = min(edges.get(v, 0), weight)

    def weight(self, u: Hashable, v: Hashable) -> float:
        return self._adj[u][v]

    def _require(self, *nodes: Hashable) -> None:
        for node in nodes:
            if node not in self._adj:
                raise KeyError(node)

    def _search(self, source: Hashable) -> tuple[dict, dict]:
        """Distances and predecessor links of every node reachable from source."""
        self._require(source)
        dist = {source: 0}
        parent: dict = {}
        done: set = set()
        tie = itertools.count()  # nodes need not be comparable, so never compare them
        heap = [(0, next(tie), source)]
        while heap:
            d, _, node = heapq.heappop(heap)
            if node in done:
                continue
            done.add(node)
            for nxt, w in self._adj[node].items():
                if nxt in done:
                    continue
                candidate = d + w
                if nxt not in dist or candidate < dist[nxt]:
                    dist[nxt] = candidate
                    parent[nxt] = node
                    heapq.heappush(heap, (candidate, next(tie), nxt))
        return dist, parent

    def distances(self, source: Hashable) -> dict:
        return self._search(source)[0]

    def shortest_path(self, source: Hashable, target: Hashable):
        self._require(source, target)
        dist, parent = self._search(source)
        if target not in dist:
            return None
        path = [target]
        while path[-1] != source:
            path.append(parent[path[-1]])
        path.reverse()
        return dist[target], path

    def within(self, source: Hashable, limit: float) -> set:
        return {node for node, d in self._search(source)[0].items() if d <= limit}
