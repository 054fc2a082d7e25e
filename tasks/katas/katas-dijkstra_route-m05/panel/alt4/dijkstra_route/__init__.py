"""Shortest paths by label correcting with a FIFO work queue (SPFA)."""
import math
from collections import defaultdict, deque

_START = object()  # predecessor of the source; None could be a real node


class Graph:
    def __init__(self):
        self._succ = defaultdict(dict)
        self._known = set()

    def add_node(self, node):
        self._known.add(node)

    def has_node(self, node):
        return node in self._known

    def add_edge(self, u, v, weight):
        if isinstance(weight, bool):
            raise TypeError("bool is not a weight")
        if not isinstance(weight, (int, float)):
            raise TypeError("weight must be numeric")
        if weight != weight or weight in (math.inf, -math.inf) or weight < 0:
            raise ValueError("invalid weight")
        self._known.add(u)
        self._known.add(v)
        if v in self._succ[u]:
            weight = min(weight, self._succ[u][v])
        self._succ[u][v] = weight

    def weight(self, u, v):
        if u not in self._succ or v not in self._succ[u]:
            raise KeyError((u, v))
        return self._succ[u][v]

    def _labels(self, source):
        if source not in self._known:
            raise KeyError(source)
        label, back = {source: 0}, {source: _START}
        queue, queued = deque([source]), {source}
        while queue:
            u = queue.popleft()
            queued.discard(u)
            for v, w in self._succ.get(u, {}).items():
                if v not in label or label[u] + w < label[v]:
                    label[v] = label[u] + w
                    back[v] = u
                    if v not in queued:
                        queued.add(v)
                        queue.append(v)
        return label, back

    def distances(self, source):
        return self._labels(source)[0]

    def shortest_path(self, source, target):
        if not self.has_node(target):
            raise KeyError(target)
        label, back = self._labels(source)
        if target not in label:
            return None
        path = deque()
        node = target
        while node is not _START:
            path.appendleft(node)
            node = back[node]
        return label[target], list(path)

    def within(self, source, limit):
        return set(n for n, d in self._labels(source)[0].items() if d <= limit)
