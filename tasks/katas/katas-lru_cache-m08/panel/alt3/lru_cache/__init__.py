"""LRU cache keeping values in a dict and recency in a Python list (oldest first).

Linear-time recency updates are fine here: the kata favours clarity over speed.
"""

__all__ = ["LRUCache"]


class CapacityError(ValueError):
    pass


class LRUCache:
    def __init__(self, capacity, on_evict=None):
        if isinstance(capacity, bool) or not isinstance(capacity, int):
            raise TypeError("capacity must be an int")
        if capacity < 1:
            raise CapacityError(capacity)
        self._capacity = capacity
        self._values = {}
        self._order = []
        self._on_evict = on_evict
        self._stats = [0, 0, 0]  # hits, misses, evictions

    def _promote(self, key):
        self._order.remove(key)
        self._order.append(key)

    def get(self, key, default=None):
        if key not in self._values:
            self._stats[1] += 1
            return default
        self._stats[0] += 1
        self._promote(key)
        return self._values[key]

    def peek(self, key, default=None):
        if key in self._values:
            return self._values[key]
        return default

    def put(self, key, value):
        if key in self._values:
            self._promote(key)
        else:
            self._shrink_to(self._capacity - 1)
            self._order.append(key)
        self._values[key] = value

    def _shrink_to(self, limit):
        evicted = self._order[: max(0, len(self._order) - limit)]
        del self._order[: len(evicted)]
        for key in evicted:
            value = self._values.pop(key)
            self._stats[2] += 1
            if self._on_evict is not None:
                self._on_evict(key, value)

    def delete(self, key):
        if key in self._values:
            del self._values[key]
            self._order.remove(key)
            return True
        return False

    def resize(self, capacity):
        if capacity < 1:
            raise CapacityError(capacity)
        self._capacity = capacity
        self._shrink_to(capacity)

    def clear(self):
        self._values.clear()
        self._order.clear()

    def keys(self):
        return list(self._order)

    def stats(self):
        hits, misses, evictions = self._stats
        return {"hits": hits, "misses": misses, "evictions": evictions,
                "size": len(self._order), "capacity": self._capacity}

    def __contains__(self, key):
        return key in self._values

    def __len__(self):
        return len(self._values)
