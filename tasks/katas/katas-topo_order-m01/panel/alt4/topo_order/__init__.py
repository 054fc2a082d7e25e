"""Topological order with a heap over counted predecessors; cycles found in the pruned core."""
from collections import Counter, defaultdict
from heapq import heappop, heappush


class CycleError(ValueError):
    def __init__(self, cycle, remaining):
        ValueError.__init__(self, "cycle detected", cycle)
        self.cycle = cycle
        self.remaining = remaining


def _load(nodes, edges):
    vertex_set = set(nodes)
    unique = set()
    for edge in edges:
        if type(edge) not in (tuple, list) and not isinstance(edge, (tuple, list)):
            raise TypeError("edge is not a tuple or list")
        if len(edge) != 2:
            raise TypeError("edge must have two ends")
        unique.add((edge[0], edge[1]))
        vertex_set.update((edge[0], edge[1]))
    succ = defaultdict(list)
    for u, v in unique:
        succ[u].append(v)
    return vertex_set, succ


def _core_cycle(succ, stuck):
    core = set(stuck)
    # drop nodes that have no successor inside the core until none can be dropped
    while True:
        sinks = {n for n in core if not any(s in core for s in succ[n])}
        if not sinks:
            break
        core -= sinks
    node, seen, walk = min(core), {}, []
    while node not in seen:
        seen[node] = len(walk)
        walk.append(node)
        node = min(s for s in succ[node] if s in core)
    loop = walk[seen[node]:]
    first = loop.index(min(loop))
    loop = loop[first:] + loop[:first]
    return loop + loop[:1]


def _sorted_with_depth(nodes, edges):
    vertices, succ = _load(nodes, edges)
    pending = Counter()
    for u in list(succ):
        for v in succ[u]:
            pending[v] += 1
    heap = []
    for v in vertices:
        if pending[v] == 0:
            heappush(heap, v)
    depth = dict.fromkeys(vertices, 0)
    order = []
    while heap:
        v = heappop(heap)
        order.append(v)
        for w in succ[v]:
            if depth[v] + 1 > depth[w]:
                depth[w] = depth[v] + 1
            pending[w] -= 1
            if pending[w] == 0:
                heappush(heap, w)
    if len(order) < len(vertices):
        stuck = vertices.difference(order)
        raise CycleError(_core_cycle(succ, stuck), sorted(stuck))
    return order, depth


def topo_sort(nodes, edges):
    return _sorted_with_depth(nodes, edges)[0]


def levels(nodes, edges):
    order, depth = _sorted_with_depth(nodes, edges)
    if not order:
        return []
    table = [[] for _ in range(max(depth.values()) + 1)]
    for v in order:
        table[depth[v]].append(v)
    return [sorted(row) for row in table]
