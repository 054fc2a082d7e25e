"""Event bus storing subscriptions in a segment trie; '*' and '#' are child keys of a node."""

__all__ = ["EventBus", "PublishError"]


class PublishError(Exception):
    def __init__(self, errors):
        self.errors = list(errors)
        super().__init__("handlers failed: " + ", ".join(repr(e) for _, e in self.errors))


class _Node:
    __slots__ = ("children", "tokens")

    def __init__(self):
        self.children = {}
        self.tokens = []


def _split(text, pattern):
    if type(text) is not str or text == "":
        raise ValueError("topic must be a non-empty string")
    segs = text.split(".")
    last = len(segs) - 1
    for i, s in enumerate(segs):
        wild = s in ("*", "#")
        if s == "" or (not wild and ("*" in s or "#" in s)):
            raise ValueError(f"bad segment in {text!r}")
        if wild and (not pattern or (s == "#" and i != last)):
            raise ValueError(f"bad wildcard in {text!r}")
    return segs


class EventBus:
    def __init__(self):
        self._root = _Node()
        self._subs = {}        # token -> dict(handler, once, priority, path)
        self._issued = 0

    def subscribe(self, pattern, handler, once=False, priority=0):
        segs = _split(pattern, True)
        node = self._root
        for s in segs:
            node = node.children.setdefault(s, _Node())
        self._issued += 1
        token = self._issued
        node.tokens.append(token)
        self._subs[token] = {"handler": handler, "once": once, "priority": priority, "node": node}
        return token

    def unsubscribe(self, token):
        sub = self._subs.pop(token, None)
        if sub is None:
            return False
        sub["node"].tokens.remove(token)
        return True

    def _collect(self, node, segs, i, out):
        if "#" in node.children:
            out.extend(node.children["#"].tokens)
        if i == len(segs):
            out.extend(node.tokens)
            return
        for key in (segs[i], "*"):
            child = node.children.get(key)
            if child is not None:
                self._collect(child, segs, i + 1, out)

    def subscribers(self, topic):
        segs = _split(topic, False)
        found = []
        self._collect(self._root, segs, 0, found)
        return sorted(set(found), key=lambda t: (-self._subs[t]["priority"], t))

    def publish(self, topic, payload=None):
        plan = [(t, self._subs[t]) for t in self.subscribers(topic)]
        called = 0
        errors = []
        for token, sub in plan:
            if self._subs.get(token) is not sub:
                continue
            if sub["once"]:
                self.unsubscribe(token)
            called += 1
            try:
                sub["handler"](topic, payload)
            except Exception as exc:
                errors.append((token, exc))
        if errors:
            raise PublishError(errors)
        return called
