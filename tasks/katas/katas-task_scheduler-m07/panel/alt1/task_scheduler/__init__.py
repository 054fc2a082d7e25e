"""Scheduler built on the standard heapq module.

heapq only needs ``<`` on its items, so each item is a small wrapper whose ``__lt__`` bumps the
owning scheduler's counter; that way the counter sees every comparison heapq makes.
"""
import heapq
import itertools

__all__ = ["Scheduler"]


class _Item:
    __slots__ = ("key", "name", "owner")

    def __init__(self, key, name, owner):
        self.key = key
        self.name = name
        self.owner = owner

    def __lt__(self, other):
        self.owner.comparisons += 1
        return self.key < other.key


class Scheduler:
    def __init__(self):
        self.comparisons = 0
        self._items = []
        self._counter = itertools.count()

    def __len__(self):
        return len(self._items)

    def push(self, name, priority):
        if type(name) is not str and not isinstance(name, str):
            raise TypeError("name: expected str")
        if type(priority) is bool or not isinstance(priority, int):
            raise TypeError("priority: expected int")
        heapq.heappush(self._items, _Item((priority, next(self._counter)), name, self))

    def peek(self):
        if len(self._items) == 0:
            raise IndexError("scheduler is empty")
        return self._items[0].name

    def pop(self):
        if len(self._items) == 0:
            raise IndexError("scheduler is empty")
        return heapq.heappop(self._items).name

    def cancel(self, name):
        victim = None
        for item in self._items:
            if item.name == name and (victim is None or item.key[1] < victim.key[1]):
                victim = item
        if victim is None:
            return False
        self._items.remove(victim)
        # Rebuilding is O(n) comparisons; the spec leaves cancel's cost open.
        heapq.heapify(self._items)
        return True

    def drain(self):
        out = []
        while self._items:
            out.append(heapq.heappop(self._items).name)
        return out
