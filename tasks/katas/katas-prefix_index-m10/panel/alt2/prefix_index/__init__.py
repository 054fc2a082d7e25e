"""Prefix index whose nodes keep their children in sorted parallel lists (bisect), so the
enumeration order comes for free."""
from bisect import bisect_left

__all__ = ["PrefixIndex"]


class _Node:
    __slots__ = ("keys", "kids", "terminal", "below")

    def __init__(self):
        self.keys = []
        self.kids = []
        self.terminal = False
        self.below = 0

    def child(self, ch):
        i = bisect_left(self.keys, ch)
        if i < len(self.keys) and self.keys[i] == ch:
            return self.kids[i]
        return None

    def child_or_new(self, ch):
        i = bisect_left(self.keys, ch)
        if i < len(self.keys) and self.keys[i] == ch:
            return self.kids[i]
        node = _Node()
        self.keys.insert(i, ch)
        self.kids.insert(i, node)
        return node

    def drop(self, ch):
        i = bisect_left(self.keys, ch)
        del self.keys[i]
        del self.kids[i]


class PrefixIndex:
    def __init__(self):
        self._root = _Node()
        self.visits = 0

    def __len__(self):
        return self._root.below

    def _locate(self, s, counted):
        node = self._root
        if counted:
            self.visits += 1
        for ch in s:
            node = node.child(ch)
            if node is None:
                return None
            if counted:
                self.visits += 1
        return node

    def __contains__(self, word):
        if type(word) is not str and not isinstance(word, str):
            return False
        node = self._locate(word, counted=False)
        return bool(node and node.terminal)

    def _check(self, word):
        if not isinstance(word, str):
            raise TypeError(f"{word!r} is not a string")
        if len(word) == 0:
            raise ValueError("cannot store the empty word")

    def add(self, word):
        self._check(word)
        if word in self:
            return False
        node = self._root
        node.below += 1
        for ch in word:
            node = node.child_or_new(ch)
            node.below += 1
        node.terminal = True
        return True

    def remove(self, word):
        self._check(word)
        if word not in self:
            return False
        node = self._root
        node.below -= 1
        cut = None
        for ch in word:
            nxt = node.child(ch)
            nxt.below -= 1
            if nxt.below == 0 and cut is None:
                cut = (node, ch)
            node = nxt
        node.terminal = False
        if cut is not None:
            cut[0].drop(cut[1])
        return True

    def count(self, prefix):
        if not isinstance(prefix, str):
            raise TypeError(f"{prefix!r} is not a string")
        node = self._locate(prefix, counted=True)
        return 0 if node is None else node.below

    def search(self, prefix, limit=None):
        if not isinstance(prefix, str):
            raise TypeError(f"{prefix!r} is not a string")
        if limit is not None:
            if not isinstance(limit, int) or isinstance(limit, bool):
                raise TypeError(f"bad limit {limit!r}")
            if limit < 0:
                raise ValueError(f"bad limit {limit!r}")
        node = self._locate(prefix, counted=True)
        out = []
        if node is not None:
            self._gather(node, prefix, out, limit)
        return out

    def _gather(self, node, text, out, limit):
        if limit is not None and len(out) == limit:
            return
        if node.terminal:
            out.append(text)
        for ch, kid in zip(node.keys, node.kids):
            if limit is not None and len(out) == limit:
                return
            self.visits += 1
            self._gather(kid, text + ch, out, limit)
