"""Prefix index on a character trie whose nodes know how many words lie below them.

Subtree sizes make ``count`` cost only the prefix walk, and pruning empty nodes on removal keeps
every node on the path to some stored word, which is what bounds the visits of ``search``.
"""

__all__ = ["PrefixIndex"]


class _Node:
    __slots__ = ("children", "end", "size")

    def __init__(self):
        self.children = {}
        self.end = False
        self.size = 0  # stored words in this subtree


def _check_word(word):
    if not isinstance(word, str):
        raise TypeError(f"word must be a str, not {type(word).__name__}")
    if not word:
        raise ValueError("word must not be empty")


class PrefixIndex:
    def __init__(self):
        self._root = _Node()
        self.visits = 0

    def __len__(self):
        return self._root.size

    def _find(self, text):
        """Node for ``text`` or None; uncounted (used by add/remove/in)."""
        node = self._root
        for ch in text:
            node = node.children.get(ch)
            if node is None:
                return None
        return node

    def __contains__(self, word):
        if not isinstance(word, str):
            return False
        node = self._find(word)
        return node is not None and node.end

    def add(self, word):
        _check_word(word)
        found = self._find(word)
        if found is not None and found.end:
            return False
        node = self._root
        node.size += 1
        for ch in word:
            node = node.children.setdefault(ch, _Node())
            node.size += 1
        node.end = True
        return True

    def remove(self, word):
        _check_word(word)
        node = self._find(word)
        if node is None or not node.end:
            return False
        node.end = False
        parent = self._root
        parent.size -= 1
        for ch in word:
            child = parent.children[ch]
            child.size -= 1
            if child.size == 0:
                # Nothing below needs this branch any more: cut it off here.
                del parent.children[ch]
                break
            parent = child
        return True

    def _walk(self, prefix):
        if not isinstance(prefix, str):
            raise TypeError(f"prefix must be a str, not {type(prefix).__name__}")
        node = self._root
        self.visits += 1
        for ch in prefix:
            node = node.children.get(ch)
            if node is None:
                return None
            self.visits += 1
        return node

    def count(self, prefix):
        node = self._walk(prefix)
        return 0 if node is None else node.size

    def search(self, prefix, limit=None):
        if limit is not None:
            if isinstance(limit, bool) or not isinstance(limit, int):
                raise TypeError("limit must be an int or None")
            if limit < 0:
                raise ValueError("limit must not be negative")
        node = self._walk(prefix)
        found = []
        if node is None or limit == 0:
            return found
        self._collect(node, prefix, found, limit)
        return found

    def _collect(self, node, text, found, limit):
        """Pre-order walk in character order; returns True once ``limit`` words are found."""
        if node.end:
            found.append(text)
            if limit is not None and len(found) >= limit:
                return True
        for ch, child in sorted(node.children.items(), key=lambda item: item[0].lower()):
            self.visits += 1
            if self._collect(child, text + ch, found, limit):
                return True
        return False
