"""Scheduler on a 1-based binary heap of task records, with recursive sifting."""

__all__ = ["Scheduler"]


class _Task:
    __slots__ = ("priority", "serial", "name")

    def __init__(self, priority, serial, name):
        self.priority = priority
        self.serial = serial
        self.name = name


class Scheduler:
    def __init__(self):
        self._slots = [None]  # slot 0 unused so children of k are 2k and 2k+1
        self._serial = 0
        self.comparisons = 0

    def __len__(self):
        return len(self._slots) - 1

    def _less(self, i, j):
        self.comparisons += 1
        a, b = self._slots[i], self._slots[j]
        if a.priority == b.priority:
            return a.serial < b.serial
        return a.priority < b.priority

    def _swap(self, i, j):
        self._slots[i], self._slots[j] = self._slots[j], self._slots[i]

    def _up(self, k):
        if k > 1 and self._less(k, k // 2):
            self._swap(k, k // 2)
            self._up(k // 2)

    def _down(self, k):
        last = len(self._slots) - 1
        child = 2 * k
        if child > last:
            return
        if child + 1 <= last and self._less(child + 1, child):
            child += 1
        if self._less(child, k):
            self._swap(child, k)
            self._down(child)

    def push(self, name, priority):
        if not isinstance(name, str):
            raise TypeError("push() name must be str")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError("push() priority must be int")
        self._serial += 1
        self._slots.append(_Task(priority, self._serial, name))
        self._up(len(self._slots) - 1)

    def peek(self):
        if len(self._slots) == 1:
            raise IndexError("empty")
        return self._slots[1].name

    def _remove_at(self, k):
        last = len(self._slots) - 1
        removed = self._slots[k]
        self._swap(k, last)
        self._slots.pop()
        if k < last:
            if k > 1 and self._less(k, k // 2):
                self._up(k)
            else:
                self._down(k)
        return removed

    def pop(self):
        if len(self._slots) == 1:
            raise IndexError("empty")
        return self._remove_at(1).name

    def cancel(self, name):
        best = 0
        for k in range(1, len(self._slots)):
            task = self._slots[k]
            if task.name == name and (best == 0 or task.serial < self._slots[best].serial):
                best = k
        if best == 0:
            return False
        self._remove_at(best)
        return True

    def drain(self):
        return [self.pop() for _ in range(len(self))]
