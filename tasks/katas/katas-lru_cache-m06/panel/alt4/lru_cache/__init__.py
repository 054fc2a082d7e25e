"""LRU cache that stamps each entry with a logical tick and evicts the smallest stamp."""
import itertools

__all__ = ["LRUCache"]


class LRUCache:
    def __init__(self, capacity, on_evict=None):
        self._set_capacity(capacity)
        self._store = {}   # key -> [tick, value]
        self._clock = itertools.count()
        self._on_evict = on_evict
        self._hits = self._misses = self._evicted = 0

    def _set_capacity(self, capacity):
        if int(capacity) != capacity or capacity < 1:
            raise ValueError("capacity %r is not a positive integer" % (capacity,))
        self._capacity = capacity

    def _oldest_key(self):
        return min(self._store, key=lambda k: self._store[k][0])

    def _evict_one(self):
        key = self._oldest_key()
        _, value = self._store.pop(key)
        self._evicted += 1
        if self._on_evict:
            self._on_evict(key, value)

    def get(self, key, default=None):
        entry = self._store.get(key)
        if entry is None:
            self._misses += 1
            return default
        self._hits += 1
        entry[0] = next(self._clock)
        return entry[1]

    def peek(self, key, default=None):
        entry = self._store.get(key)
        return default if entry is None else entry[1]

    def put(self, key, value):
        if key not in self._store and len(self._store) >= self._capacity:
            self._evict_one()
        self._store[key] = [next(self._clock), value]

    def delete(self, key):
        try:
            del self._store[key]
        except KeyError:
            return False
        return True

    def resize(self, capacity):
        self._set_capacity(capacity)
        while len(self._store) > self._capacity:
            self._evict_one()

    def clear(self):
        self._store = {}

    def keys(self):
        return sorted(self._store, key=lambda k: self._store[k][0])

    def stats(self):
        return {"hits": self._hits, "misses": self._misses, "evictions": self._evicted,
                "size": len(self._store), "capacity": self._capacity}

    def __contains__(self, key):
        return key in self._store

    def __len__(self):
        return len(self._store)
