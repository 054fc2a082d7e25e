"""LRU cache relying on plain dict insertion order: touching a key re-inserts it at the end."""

__all__ = ["LRUCache"]

_MISSING = object()


class LRUCache:
    def __init__(self, capacity, on_evict=None):
        self._cap = self._validate(capacity)
        self._d = {}
        self._listener = on_evict
        self.hits = self.misses = self.evictions = 0

    @staticmethod
    def _validate(capacity):
        if capacity >= 1:
            return capacity
        raise ValueError("LRUCache capacity must be positive")

    def _touch(self, key, value):
        self._d.pop(key, None)
        self._d[key] = value

    def _pop_oldest(self):
        oldest = next(iter(self._d))
        value = self._d.pop(oldest)
        self.evictions += 1
        if self._listener is not None:
            self._listener(oldest, value)

    def get(self, key, default=None):
        value = self._d.get(key, _MISSING)
        if value is _MISSING:
            self.misses += 1
            return default
        self.hits += 1
        self._touch(key, value)
        return value

    def peek(self, key, default=None):
        return self._d[key] if key in self._d else default

    def put(self, key, value):
        if key not in self._d and len(self._d) + 1 > self._cap:
            self._pop_oldest()
        self._touch(key, value)

    def delete(self, key):
        return self._d.pop(key, _MISSING) is not _MISSING

    def resize(self, capacity):
        self._cap = self._validate(capacity)
        while len(self._d) > self._cap:
            self._pop_oldest()

    def clear(self):
        self._d.clear()

    def keys(self):
        return [k for k in self._d]

    def stats(self):
        return {"size": len(self._d), "capacity": self._cap, "hits": self.hits,
                "misses": self.misses, "evictions": self.evictions}

    def __contains__(self, key):
        return key in self._d

    def __len__(self):
        return len(self._d)
