"""Scheduler on a binary heap kept as parallel lists, moving a hole instead of swapping.

``_keys`` holds (priority, arrival) pairs and ``_names`` the matching task names.
"""

__all__ = ["Scheduler"]


class Scheduler:
    def __init__(self):
        self._keys = []
        self._names = []
        self._arrivals = 0
        self.comparisons = 0

    def __len__(self):
        return len(self._keys)

    def _lt(self, ka, kb):
        self.comparisons += 1
        return ka < kb

    def _place_up(self, hole, key, name):
        keys, names = self._keys, self._names
        while hole:
            parent = (hole - 1) >> 1
            if not self._lt(key, keys[parent]):
                break
            keys[hole], names[hole] = keys[parent], names[parent]
            hole = parent
        keys[hole], names[hole] = key, name
        return hole

    def _place_down(self, hole, key, name):
        keys, names = self._keys, self._names
        count = len(keys)
        child = 2 * hole + 1
        while child < count:
            if child + 1 < count and self._lt(keys[child + 1], keys[child]):
                child += 1
            if not self._lt(keys[child], key):
                break
            keys[hole], names[hole] = keys[child], names[child]
            hole = child
            child = 2 * hole + 1
        keys[hole], names[hole] = key, name

    def push(self, name, priority):
        if not isinstance(name, str):
            raise TypeError(f"bad task name {name!r}")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError(f"bad priority {priority!r}")
        key = (priority, self._arrivals)
        self._arrivals += 1
        self._keys.append(key)
        self._names.append(name)
        self._place_up(len(self._keys) - 1, key, name)

    def peek(self):
        if not self._keys:
            raise IndexError("no pending tasks")
        return self._names[0]

    def _take(self, hole):
        """Remove the entry at ``hole`` and return its name."""
        name = self._names[hole]
        key, moved = self._keys.pop(), self._names.pop()
        if hole < len(self._keys):
            if self._place_up(hole, key, moved) == hole:
                self._place_down(hole, key, moved)
        return name

    def pop(self):
        if not self._keys:
            raise IndexError("no pending tasks")
        return self._take(0)

    def cancel(self, name):
        positions = [i for i, n in enumerate(self._names) if n == name]
        if not positions:
            return False
        self._take(min(positions, key=lambda i: self._keys[i][1]))
        return True

    def drain(self):
        order = []
        while self._keys:
            order.append(self._take(0))
        return order
