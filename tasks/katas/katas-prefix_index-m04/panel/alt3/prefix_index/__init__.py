"""Prefix index with an explicit stack for enumeration (no recursion) and counted lookups
everywhere (add/remove/in also count their visits; the spec leaves that open)."""

__all__ = ["PrefixIndex"]


class _Trie:
    __slots__ = ("next", "word", "n")

    def __init__(self):
        self.next = {}
        self.word = False
        self.n = 0


class PrefixIndex:
    def __init__(self):
        self.visits = 0
        self._top = _Trie()

    def __len__(self):
        return self._top.n

    def _go(self, s):
        self.visits += 1
        cur = self._top
        for ch in s:
            cur = cur.next.get(ch)
            if cur is None:
                return None
            self.visits += 1
        return cur

    def __contains__(self, word):
        if not isinstance(word, str):
            return False
        cur = self._go(word)
        return cur is not None and cur.word

    def add(self, word):
        if not isinstance(word, str):
            raise TypeError("add() needs a str")
        if not word:
            raise ValueError("add() needs a non-empty word")
        if word in self:
            return False
        cur = self._top
        cur.n += 1
        for ch in word:
            if ch not in cur.next:
                cur.next[ch] = _Trie()
            cur = cur.next[ch]
            cur.n += 1
        cur.word = True
        return True

    def remove(self, word):
        if not isinstance(word, str):
            raise TypeError("remove() needs a str")
        if not word:
            raise ValueError("remove() needs a non-empty word")
        if word not in self:
            return False
        chain = [self._top]
        for ch in word:
            chain.append(chain[-1].next[ch])
        chain[-1].word = False
        for cur in chain:
            cur.n -= 1
        # Walk back up from the leaf end and unlink every emptied node.
        for depth in range(len(word), 0, -1):
            if chain[depth].n == 0:
                del chain[depth - 1].next[word[depth - 1]]
        return True

    def count(self, prefix):
        if not isinstance(prefix, str):
            raise TypeError("count() needs a str prefix")
        cur = self._go(prefix)
        return cur.n if cur is not None else 0

    def search(self, prefix, limit=None):
        if not isinstance(prefix, str):
            raise TypeError("search() needs a str prefix")
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int):
                raise TypeError("limit has to be an int")
            if limit < 0:
                raise ValueError("limit has to be >= 0")
        start = self._go(prefix)
        out = []
        if start is None or limit == 0:
            return out
        # Stack of (node, text, entered_by_step); children pushed in reverse so the
        # smallest character is popped first.
        stack = [(start, prefix, False)]
        while stack:
            cur, text, stepped = stack.pop()
            if stepped:
                self.visits += 1
            if cur.word:
                out.append(text)
                if limit is not None and len(out) == limit:
                    break
            for ch in sorted(cur.next, reverse=True):
                stack.append((cur.next[ch], text + ch, True))
        return out
