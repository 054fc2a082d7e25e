"""LRU cache as a hash map into a circular doubly linked list with one sentinel node."""

__all__ = ["LRUCache"]


class _Node:
    __slots__ = ("key", "value", "prev", "next")

    def __init__(self, key=None, value=None):
        self.key = key
        self.value = value
        self.prev = self
        self.next = self


class LRUCache:
    def __init__(self, capacity, on_evict=None):
        if not isinstance(capacity, int) or capacity <= 0:
            raise ValueError("invalid capacity")
        self.capacity = capacity
        self._map = {}
        self._head = _Node()  # head.next is the least recent, head.prev the most recent
        self._callback = on_evict
        self._counters = {"hits": 0, "misses": 0, "evictions": 0}

    def _unlink(self, node):
        node.prev.next = node.next
        node.next.prev = node.prev

    def _append(self, node):
        last = self._head.prev
        node.prev, node.next = last, self._head
        last.next = node
        self._head.prev = node

    def _drop_lru(self):
        node = self._head.next
        self._unlink(node)
        del self._map[node.key]
        self._counters["evictions"] += 1
        if self._callback:
            self._callback(node.key, node.value)

    def get(self, key, default=None):
        node = self._map.get(key)
        if node is None:
            self._counters["misses"] += 1
            return default
        self._counters["hits"] += 1
        self._unlink(node)
        self._append(node)
        return node.value

    def peek(self, key, default=None):
        node = self._map.get(key)
        return default if node is None else node.value

    def put(self, key, value):
        node = self._map.get(key)
        if node is not None:
            node.value = value
            self._unlink(node)
            self._append(node)
            return None
        if len(self._map) == self.capacity:
            self._drop_lru()
        node = _Node(key, value)
        self._map[key] = node
        self._append(node)
        return None

    def delete(self, key):
        node = self._map.pop(key, None)
        if node is None:
            return False
        self._unlink(node)
        return True

    def resize(self, capacity):
        if not isinstance(capacity, int) or capacity <= 0:
            raise ValueError("invalid capacity")
        self.capacity = capacity
        for _ in range(len(self._map) - capacity):
            self._drop_lru()

    def clear(self):
        self._map = {}
        self._head.prev = self._head.next = self._head

    def keys(self):
        out = []
        node = self._head.next
        while node is not self._head:
            out.append(node.key)
            node = node.next
        return out

    def stats(self):
        return dict(self._counters, size=len(self._map), capacity=self.capacity)

    def __contains__(self, key):
        return key in self._map

    def __len__(self):
        return len(self._map)
