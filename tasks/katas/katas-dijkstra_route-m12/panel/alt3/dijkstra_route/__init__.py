"""Dijkstra with a heap supporting decrease-key by invalidating superseded entries."""
import heapq
import math
from itertools import count

_GONE = object()


class Graph:
    def __init__(self):
        self.adjacency = {}

    def add_node(self, node):
        if node not in self.adjacency:
            self.adjacency[node] = {}

    def has_node(self, node):
        return node in self.adjacency

    def add_edge(self, u, v, weight):
        if isinstance(weight, bool) or not isinstance(weight, (int, float)):
            raise TypeError("weight: int or float required")
        if not (0 <= weight < math.inf):
            raise ValueError("weight: must be finite and non-negative")
        self.add_node(u)
        self.add_node(v)
        current = self.adjacency[u].get(v, math.inf)
        if weight < current:
            self.adjacency[u][v] = weight

    def weight(self, u, v):
        return self.adjacency[u][v]

    def _dijkstra(self, source):
        if source not in self.adjacency:
            raise KeyError(source)
        order = count()
        entries = {}
        heap = []

        def push(node, priority):
            old = entries.pop(node, None)
            if old is not None:
                old[2] = _GONE
            entry = [priority, next(order), node]
            entries[node] = entry
            heapq.heappush(heap, entry)

        final, pred = {}, {}
        tentative = {source: 0}
        push(source, 0)
        while heap:
            priority, _, node = heapq.heappop(heap)
            if node is _GONE:
                continue
            del entries[node]
            final[node] = priority
            for nbr, w in self.adjacency[node].items():
                if nbr in final:
                    continue
                cand = priority + w
                if cand < tentative.get(nbr, math.inf):
                    tentative[nbr] = cand
                    pred[nbr] = node
                    push(nbr, cand)
        return final, pred

    def distances(self, source):
        return self._dijkstra(source)[0]

    def shortest_path(self, source, target):
        if target not in self.adjacency:
            raise KeyError(target)
        final, pred = self._dijkstra(source)
        if target not in final:
            return None
        path, node = [], target
        while True:
            path.append(node)
            if node == source:
                break
            node = pred[node]
        return final[target], path[::-1]

    def within(self, source, limit):
        return {n for n, d in self._dijkstra(source)[0].items() if d <= limit}
