"""Shortest paths with the classic O(V^2) Dijkstra: linear scan for the closest open node."""
import math


class Graph:
    def __init__(self):
        self._nodes = []          # insertion order, index = node id
        self._index = {}
        self._out = []            # list of {target_id: weight}

    def _id(self, node):
        if node not in self._index:
            self._index[node] = len(self._nodes)
            self._nodes.append(node)
            self._out.append({})
        return self._index[node]

    def add_node(self, node):
        self._id(node)

    def has_node(self, node):
        return node in self._index

    def add_edge(self, u, v, weight):
        if type(weight) is bool or not isinstance(weight, (int, float)):
            raise TypeError("weight has to be a number")
        if math.isnan(weight) or math.isinf(weight) or weight < 0:
            raise ValueError("weight has to be finite and non-negative")
        a, b = self._id(u), self._id(v)
        old = self._out[a].get(b)
        if old is None or weight < old:
            self._out[a][b] = weight

    def weight(self, u, v):
        if u not in self._index or v not in self._index:
            raise KeyError((u, v))
        return self._out[self._index[u]][self._index[v]]

    def _run(self, source):
        if source not in self._index:
            raise KeyError(source)
        n = len(self._nodes)
        dist = [None] * n
        prev = [None] * n
        closed = [False] * n
        s = self._index[source]
        dist[s] = 0
        while True:
            best = None
            for i in range(n):
                if not closed[i] and dist[i] is not None and (best is None or dist[i] < dist[best]):
                    best = i
            if best is None:
                break
            closed[best] = True
            for j, w in self._out[best].items():
                if not closed[j] and (dist[j] is None or dist[best] + w < dist[j]):
                    dist[j] = dist[best] + w
                    prev[j] = best
        return dist, prev, s

    def distances(self, source):
        dist, _, _ = self._run(source)
        return {self._nodes[i]: d for i, d in enumerate(dist) if d is not None}

    def shortest_path(self, source, target):
        if target not in self._index:
            raise KeyError(target)
        dist, prev, s = self._run(source)
        t = self._index[target]
        if dist[t] is None:
            return None
        ids = [t]
        while ids[-1] != s:
            ids.append(prev[ids[-1]])
        return dist[t], [self._nodes[i] for i in reversed(ids)]

    def within(self, source, limit):
        return {node for node, d in self.distances(source).items() if d <= limit}
