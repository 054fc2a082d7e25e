"""Prefix index stored as flat arrays: node i has edges[i] (char -> node id), terminal[i] and
size[i]. Freed node ids are recycled through a free list."""

__all__ = ["PrefixIndex"]


class PrefixIndex:
    ROOT = 0

    def __init__(self):
        self.edges = [{}]
        self.terminal = [False]
        self.size = [0]
        self.free = []
        self.visits = 0

    def __len__(self):
        return self.size[self.ROOT]

    def _alloc(self):
        if self.free:
            i = self.free.pop()
            self.edges[i], self.terminal[i], self.size[i] = {}, False, 0
            return i
        self.edges.append({})
        self.terminal.append(False)
        self.size.append(0)
        return len(self.edges) - 1

    def _release(self, i):
        stack = [i]
        while stack:
            j = stack.pop()
            stack.extend(self.edges[j].values())
            self.edges[j] = {}
            self.free.append(j)

    def _node_of(self, s):
        i = self.ROOT
        for ch in s:
            i = self.edges[i].get(ch, -1)
            if i < 0:
                return -1
        return i

    def __contains__(self, word):
        if not isinstance(word, str):
            return False
        i = self._node_of(word)
        return i >= 0 and self.terminal[i]

    def _need_word(self, word):
        if not isinstance(word, str):
            raise TypeError("PrefixIndex stores str words only")
        if word == "":
            raise ValueError("PrefixIndex cannot store ''")

    def add(self, word):
        self._need_word(word)
        if word in self:
            return False
        i = self.ROOT
        self.size[i] += 1
        for ch in word:
            j = self.edges[i].get(ch)
            if j is None:
                j = self._alloc()
                self.edges[i][ch] = j
            i = j
            self.size[i] += 1
        self.terminal[i] = True
        return True

    def remove(self, word):
        self._need_word(word)
        if word not in self:
            return False
        i = self.ROOT
        self.size[i] -= 1
        for ch in word:
            j = self.edges[i][ch]
            self.size[j] -= 1
            if self.size[j] == 0:
                del self.edges[i][ch]
                self._release(j)
                return True
            i = j
        self.terminal[i] = False
        return True

    def _visit_prefix(self, prefix):
        if not isinstance(prefix, str):
            raise TypeError("prefix must be str")
        i = self.ROOT
        self.visits += 1
        for ch in prefix:
            i = self.edges[i].get(ch, -1)
            if i < 0:
                return -1
            self.visits += 1
        return i

    def count(self, prefix):
        i = self._visit_prefix(prefix)
        return self.size[i] if i >= 0 else 0

    def search(self, prefix, limit=None):
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int)):
            raise TypeError("limit must be int")
        if limit is not None and limit < 0:
            raise ValueError("limit must be >= 0")
        i = self._visit_prefix(prefix)
        if i < 0:
            return []
        cap = len(self) if limit is None else limit
        out = []
        self._emit(i, prefix, out, cap)
        return out

    def _emit(self, i, text, out, cap):
        if len(out) >= cap:
            return
        if self.terminal[i]:
            out.append(text)
        for ch in sorted(self.edges[i]):
            if len(out) >= cap:
                return
            self.visits += 1
            self._emit(self.edges[i][ch], text + ch, out, cap)
