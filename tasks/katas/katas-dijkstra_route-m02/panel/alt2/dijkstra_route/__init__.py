"""Shortest paths by Bellman-Ford relaxation rounds (correct for any non-negative weights)."""
from math import isfinite


class Graph:
    def __init__(self):
        self.edges = {}      # (u, v) -> weight
        self.vertices = set()

    def add_node(self, node):
        self.vertices.add(node)

    def has_node(self, node):
        return node in self.vertices

    def add_edge(self, u, v, weight):
        if not isinstance(weight, (int, float)) or isinstance(weight, bool):
            raise TypeError(f"bad weight type {type(weight).__name__}")
        if not isfinite(weight) or weight < 0:
            raise ValueError(f"bad weight {weight}")
        self.vertices.update((u, v))
        key = (u, v)
        self.edges[key] = weight if key not in self.edges else min(self.edges[key], weight)

    def weight(self, u, v):
        return self.edges[(u, v)]

    def _relax_all(self, source):
        if source not in self.vertices:
            raise KeyError(source)
        best = {source: 0}
        via = {}
        for _ in range(len(self.vertices)):
            changed = False
            for (u, v), w in self.edges.items():
                if u in best and v != source and (v not in best or best[u] + w < best[v]):
                    best[v] = best[u] + w
                    via[v] = u
                    changed = True
            if not changed:
                break
        return best, via

    def distances(self, source):
        return dict(self._relax_all(source)[0])

    def shortest_path(self, source, target):
        if target not in self.vertices:
            raise KeyError(target)
        best, via = self._relax_all(source)
        if target not in best:
            return None
        route = [target]
        while route[0] != source:
            route.insert(0, via[route[0]])
        return best[target], route

    def within(self, source, limit):
        found = set()
        for node, d in self._relax_all(source)[0].items():
            if not d > limit:
                found.add(node)
        return found
