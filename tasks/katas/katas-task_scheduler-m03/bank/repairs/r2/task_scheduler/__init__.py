"""Priority scheduler on an array-backed binary min-heap.

Entries are (priority, sequence, name) tuples; the sequence number makes equal priorities FIFO.
Every ordering test between two entries goes through ``_before`` so that ``comparisons`` counts
exactly the comparisons the heap performs.
"""

__all__ = ["Scheduler"]


class Scheduler:
    def __init__(self):
        self._heap = []
        self._seq = 0
        self.comparisons = 0

    def __len__(self):
        return len(self._heap)

    def _before(self, a, b):
        """One counted comparison: True when entry ``a`` is served before entry ``b``."""
        self.comparisons += 1
        if a[0] != b[0]:
            return a[0] < b[0]
        return a[1] < b[1]

    def _sift_up(self, index):
        heap = self._heap
        while index > 0:
            parent = (index - 1) // 2
            if not self._before(heap[index], heap[parent]):
                break
            heap[index], heap[parent] = heap[parent], heap[index]
            index = parent

    def _sift_down(self, index):
        heap = self._heap
        size = len(heap)
        while True:
            left = 2 * index + 1
            if left >= size:
                return
            best = left
            right = left + 1
            if right < size and self._before(heap[right], heap[left]):
                best = right
            if not self._before(heap[best], heap[index]):
                return
            heap[index], heap[best] = heap[best], heap[index]
            index = best

    def push(self, name, priority):
        if not isinstance(name, str):
            raise TypeError(f"task name must be a str, got {type(name).__name__}")
        if isinstance(priority, bool) or not isinstance(priority, int):
            raise TypeError(f"priority must be an int, got {type(priority).__name__}")
        self._heap.append((priority, self._seq, name))
        self._seq += 1
        self._sift_up(len(self._heap) - 1)

    def peek(self):
        if not self._heap:
            raise IndexError("peek at an empty scheduler")
        return self._heap[0][2]

    def pop(self):
        if not self._heap:
            raise IndexError("pop from an empty scheduler")
        top = self._heap[0]
        self.comparisons = max(0, self.comparisons - 1)
        last = self._heap.pop()
        if self._heap:
            self._heap[0] = last
            self._sift_down(0)
        return top[2]

    def cancel(self, name):
        matches = [i for i, entry in enumerate(self._heap) if entry[2] == name]
        if not matches:
            return False
        index = min(matches, key=lambda i: self._heap[i][1])
        last = self._heap.pop()
        if index < len(self._heap):
            # The moved entry may belong above or below the hole, so try both directions.
            self._heap[index] = last
            self._sift_up(index)
            self._sift_down(index)
        return True

    def drain(self):
        names = []
        while self._heap:
            names.append(self.pop())
        return names
