"""Topological order on top of graphlib.TopologicalSorter, fed through a heap for determinism."""
import graphlib
import heapq


class CycleError(ValueError):
    def __init__(self, cycle, remaining):
        super().__init__(f"cycle {cycle}")
        self.cycle = cycle
        self.remaining = remaining


def _predecessors(nodes, edges):
    graph = {n: set() for n in nodes}
    for edge in edges:
        if not isinstance(edge, (list, tuple)) or len(edge) != 2:
            raise TypeError("edge must be a 2-item tuple or list")
        before, after = edge
        graph.setdefault(before, set())
        graph.setdefault(after, set()).add(before)
    return graph


def _unorderable(graph):
    """Peel off nodes whose predecessors are all peeled; what is left cannot be ordered."""
    left = set(graph)
    changed = True
    while changed:
        changed = False
        for n in sorted(left):
            if not (graph[n] & left):
                left.discard(n)
                changed = True
    return sorted(left)


def _sorter(graph):
    ts = graphlib.TopologicalSorter(graph)
    try:
        ts.prepare()
    except graphlib.CycleError as exc:
        raw = exc.args[1][:-1]   # graphlib closes the loop by repeating the first node
        k = raw.index(min(raw))
        loop = raw[k:] + raw[:k]
        raise CycleError(loop + [loop[0]], _unorderable(graph)) from None
    return ts


def topo_sort(nodes, edges):
    ts = _sorter(_predecessors(nodes, edges))
    heap = list(ts.get_ready())
    heapq.heapify(heap)
    order = []
    while heap:
        node = heapq.heappop(heap)
        order.append(node)
        ts.done(node)
        for fresh in ts.get_ready():
            heapq.heappush(heap, fresh)
    return order


def levels(nodes, edges):
    ts = _sorter(_predecessors(nodes, edges))
    result = []
    batch = ts.get_ready()
    while batch:
        result.append(sorted(batch))
        ts.done(*batch)
        batch = ts.get_ready()
    return result
