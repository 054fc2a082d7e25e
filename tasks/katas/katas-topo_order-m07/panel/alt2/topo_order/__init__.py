"""Kahn's algorithm with a bisect-sorted ready list; cycles found through strongly connected parts."""
import bisect
from collections import deque


class CycleError(ValueError):
    """The graph is not acyclic."""

    def __init__(self, cycle, remaining):
        self.cycle = cycle
        self.remaining = remaining
        super().__init__(cycle)


class _Graph:
    def __init__(self, nodes, edges):
        self.out = {}
        for n in nodes:
            self.out.setdefault(n, [])
        pairs = set()
        for e in edges:
            if not isinstance(e, (tuple, list)) or len(e) != 2:
                raise TypeError(f"bad edge {e!r}")
            self.out.setdefault(e[0], [])
            self.out.setdefault(e[1], [])
            if (e[0], e[1]) not in pairs:
                pairs.add((e[0], e[1]))
                self.out[e[0]].append(e[1])

    def indegrees(self):
        deg = dict.fromkeys(self.out, 0)
        for targets in self.out.values():
            for t in targets:
                deg[t] += 1
        return deg


def _sccs(out, subset):
    """Tarjan's algorithm (iterative) over the nodes in `subset`."""
    index, low, on_stack, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in sorted(subset):
        if root in index:
            continue
        work = [(root, iter([t for t in out[root] if t in subset]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter([t for t in out[w] if t in subset])))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    x = stack.pop()
                    on_stack.discard(x)
                    comp.add(x)
                    if x == v:
                        break
                comps.append(comp)
    return comps


def _shortest_cycle_through(out, start, comp):
    parent = {start: None}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(t for t in out[v] if t in comp):
            if w == start:
                path = [v]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                path.reverse()
                return path + [start]
            if w not in parent:
                parent[w] = v
                queue.append(w)
    raise AssertionError("no cycle in strongly connected part")


def _cycle(g, stuck):
    cyclic = [c for c in _sccs(g.out, stuck) if len(c) > 1 or any(n in g.out[n] for n in c)]
    best = min(cyclic, key=min)
    return _shortest_cycle_through(g.out, min(best), best)


def _run(g):
    deg = g.indegrees()
    ready = sorted((n for n, d in deg.items() if d == 0), reverse=True)
    order, depth = [], {n: 0 for n in ready}
    while ready:
        n = ready.pop()
        order.append(n)
        for t in g.out[n]:
            depth[t] = max(depth.get(t, 0), depth[n] + 1)
            deg[t] -= 1
            if deg[t] == 0:
                # keep `ready` sorted descending so pop() yields the smallest
                pos = bisect.bisect_left([_Rev(x) for x in ready], _Rev(t))
                ready.insert(pos, t)
    if len(order) != len(g.out):
        stuck = set(g.out) - set(order)
        raise CycleError(_cycle(g, stuck), sorted(stuck))
    return order, depth


class _Rev:
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return other.v < self.v


def topo_sort(nodes, edges):
    return _run(_Graph(nodes, edges))[0]


def levels(nodes, edges):
    order, depth = _run(_Graph(nodes, edges))
    buckets = {}
    for n in order:
        buckets.setdefault(depth[n], []).append(n)
    return [sorted(buckets[d]) for d in sorted(buckets)]
