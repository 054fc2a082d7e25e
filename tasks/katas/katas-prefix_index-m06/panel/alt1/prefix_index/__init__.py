"""Prefix index on nested dicts; each node is a list [children, is_word, subtree_size]."""

__all__ = ["PrefixIndex"]

CHILDREN, IS_WORD, SIZE = 0, 1, 2


def _new():
    return [{}, False, 0]


class PrefixIndex:
    def __init__(self):
        self._root = _new()
        self.visits = 0

    def __len__(self):
        return self._root[SIZE]

    @staticmethod
    def _validate(word):
        if not isinstance(word, str):
            raise TypeError("words are strings")
        if word == "":
            raise ValueError("empty word")

    def _path(self, word):
        """List of nodes from the root along ``word`` (shorter if the path breaks)."""
        path = [self._root]
        for ch in word:
            nxt = path[-1][CHILDREN].get(ch)
            if nxt is None:
                break
            path.append(nxt)
        return path

    def __contains__(self, word):
        if not isinstance(word, str):
            return False
        path = self._path(word)
        return len(path) == len(word) + 1 and path[-1][IS_WORD]

    def add(self, word):
        self._validate(word)
        if word in self:
            return False
        node = self._root
        node[SIZE] += 1
        for ch in word:
            if ch not in node[CHILDREN]:
                node[CHILDREN][ch] = _new()
            node = node[CHILDREN][ch]
            node[SIZE] += 1
        node[IS_WORD] = True
        return True

    def remove(self, word):
        self._validate(word)
        if word not in self:
            return False
        path = self._path(word)
        path[-1][IS_WORD] = False
        for node in path:
            node[SIZE] -= 1
        # Drop the highest node that became empty; everything below it goes with it.
        for depth in range(1, len(path)):
            if path[depth][SIZE] == 0:
                del path[depth - 1][CHILDREN][word[depth - 1]]
                break
        return True

    def _descend(self, prefix):
        if not isinstance(prefix, str):
            raise TypeError("prefix: str expected")
        self.visits += 1
        node = self._root
        for ch in prefix:
            if ch not in node[CHILDREN]:
                return None
            node = node[CHILDREN][ch]
            self.visits += 1
        return node

    def count(self, prefix):
        node = self._descend(prefix)
        return node[SIZE] if node else 0

    def search(self, prefix, limit=None):
        if limit is not None and (type(limit) is bool or not isinstance(limit, int)):
            raise TypeError("limit: int expected")
        if limit is not None and limit < 0:
            raise ValueError("limit: must be >= 0")
        start = self._descend(prefix)
        if start is None:
            return []
        budget = float("inf") if limit is None else limit
        results = []

        def walk(node, text):
            if len(results) >= budget:
                return
            if node[IS_WORD]:
                results.append(text)
            for ch in sorted(node[CHILDREN]):
                if len(results) >= budget:
                    return
                self.visits += 1
                walk(node[CHILDREN][ch], text + ch)

        walk(start, prefix)
        return results
