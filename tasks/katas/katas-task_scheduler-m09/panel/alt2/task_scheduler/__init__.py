"""Scheduler on a leftist heap (a persistent-style tree of nodes merged along right spines)."""

__all__ = ["Scheduler"]


class _Node:
    __slots__ = ("priority", "order", "name", "left", "right", "rank")

    def __init__(self, priority, order, name):
        self.priority = priority
        self.order = order
        self.name = name
        self.left = None
        self.right = None
        self.rank = 1


def _rank(node):
    return node.rank if node is not None else 0


class Scheduler:
    def __init__(self):
        self._root = None
        self._size = 0
        self._next_order = 0
        self.comparisons = 0

    def __len__(self):
        return self._size

    def _earlier(self, a, b):
        self.comparisons += 1
        return (a.priority, a.order) < (b.priority, b.order)

    def _merge(self, a, b):
        # Walk down both right spines; spines of a leftist heap have O(log n) nodes.
        if a is None:
            return b
        if b is None:
            return a
        if self._earlier(b, a):
            a, b = b, a
        a.right = self._merge(a.right, b)
        if _rank(a.left) < _rank(a.right):
            a.left, a.right = a.right, a.left
        a.rank = _rank(a.right) + 1
        return a

    def push(self, name, priority):
        if not isinstance(name, str):
            raise TypeError("the task name has to be text")
        if not isinstance(priority, int) or isinstance(priority, bool):
            raise TypeError("the priority has to be an integer")
        node = _Node(priority, self._next_order, name)
        self._next_order += 1
        self._root = self._merge(node, self._root)
        self._size += 1

    def peek(self):
        if self._root is None:
            raise IndexError("nothing scheduled")
        return self._root.name

    def pop(self):
        root = self._root
        if root is None:
            raise IndexError("nothing scheduled")
        self._root = self._merge(root.left, root.right)
        self._size -= 1
        return root.name

    def _nodes(self):
        stack = [self._root] if self._root else []
        while stack:
            node = stack.pop()
            yield node
            stack.extend(child for child in (node.left, node.right) if child)

    def cancel(self, name):
        nodes = list(self._nodes())
        hits = [n for n in nodes if n.name == name]
        if not hits:
            return False
        victim = min(hits, key=lambda n: n.order)
        # Rebuild from the survivors; their order numbers keep FIFO ties intact.
        self._root = None
        for node in sorted((n for n in nodes if n is not victim), key=lambda n: n.order):
            node.left = node.right = None
            node.rank = 1
            self._root = self._merge(node, self._root)
        self._size -= 1
        return True

    def drain(self):
        result = []
        while self._root is not None:
            result.append(self.pop())
        return result
