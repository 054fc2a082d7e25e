"""Least-recently-used cache built on an OrderedDict (front = least recently used)."""
from collections import OrderedDict

__all__ = ["LRUCache"]


def _checked_capacity(capacity):
    if capacity < 1:
        raise ValueError(f"capacity must be at least 1, got {capacity!r}")
    return capacity


class LRUCache:
    def __init__(self, capacity, on_evict=None):
        self._capacity = _checked_capacity(capacity)
        self._entries = OrderedDict()
        self._on_evict = on_evict
        self._hits = 0
        self._misses = 0
        self._evictions = 0

    def _evict_oldest(self):
        key, value = self._entries.popitem(last=False)
        self._evictions += 1
        if self._on_evict is not None:
            self._on_evict(key, value)

    def get(self, key, default=None):
        if key in self._entries:
            self._hits += 1
            self._entries.move_to_end(key)
            return self._entries[key]
        self._misses += 1
        return None

    def peek(self, key, default=None):
        return self._entries.get(key, default)

    def put(self, key, value):
        if key in self._entries:
            self._entries[key] = value
            self._entries.move_to_end(key)
            return
        if len(self._entries) >= self._capacity:
            self._evict_oldest()
        self._entries[key] = value

    def delete(self, key):
        if key not in self._entries:
            return False
        del self._entries[key]
        return True

    def resize(self, capacity):
        self._capacity = _checked_capacity(capacity)
        while len(self._entries) > self._capacity:
            self._evict_oldest()

    def clear(self):
        # Statistics describe the cache's whole life, so they survive a clear.
        self._entries.clear()

    def keys(self):
        return list(self._entries)

    def stats(self):
        return {
            "hits": self._hits,
            "misses": self._misses,
            "evictions": self._evictions,
            "size": len(self._entries),
            "capacity": self._capacity,
        }

    def __contains__(self, key):
        return key in self._entries

    def __len__(self):
        return len(self._entries)

    def __repr__(self):
        return f"LRUCache(capacity={self._capacity}, size={len(self._entries)})"
