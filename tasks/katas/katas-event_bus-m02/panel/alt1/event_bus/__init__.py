"""Event bus that compiles each pattern to a regular expression once, at subscribe time."""
import re

__all__ = ["EventBus", "PublishError"]


class PublishError(Exception):
    def __init__(self, errors):
        super().__init__(errors)
        self.errors = errors


_SEGMENT = re.compile(r"[^.*#]+")


def _check(text, wildcards):
    if not isinstance(text, str):
        raise ValueError("not a string")
    parts = text.split(".")
    for i, p in enumerate(parts):
        if _SEGMENT.fullmatch(p):
            continue
        if wildcards and (p == "*" or (p == "#" and i == len(parts) - 1)):
            continue
        raise ValueError(f"malformed: {text!r}")
    return parts


def _compile(parts):
    if parts == ["#"]:
        return re.compile(r".+")
    pieces = []
    for p in parts:
        if p == "*":
            pieces.append(r"[^.]+")
        elif p == "#":
            # zero or more further segments, attached with their leading dot
            return re.compile(r"\.".join(pieces) + r"(?:\..+)?")
        else:
            pieces.append(re.escape(p))
    return re.compile(r"\.".join(pieces))


class EventBus:
    def __init__(self):
        self._next_token = 1
        self._order = []          # tokens in subscription order
        self._table = {}          # token -> (regex, handler, once, priority)

    def subscribe(self, pattern, handler, once=False, priority=0):
        regex = _compile(_check(pattern, True))
        token = self._next_token
        self._next_token += 1
        self._order.append(token)
        self._table[token] = (regex, handler, once, priority)
        return token

    def unsubscribe(self, token):
        if token not in self._table:
            return False
        del self._table[token]
        self._order.remove(token)
        return True

    def subscribers(self, topic):
        _check(topic, False)
        hits = [t for t in self._order if self._table[t][0].fullmatch(topic)]
        hits.sort(key=lambda t: self._table[t][3], reverse=True)   # stable: keeps order on ties
        return hits

    def publish(self, topic, payload=None):
        plan = [(t, self._table[t]) for t in self.subscribers(topic)]
        count, failures = 0, []
        for token, entry in plan:
            if self._table.get(token) is not entry:
                continue
            _, handler, once, _ = entry
            if once:
                self.unsubscribe(token)
            count += 1
            try:
                handler(topic, payload)
            except Exception as exc:
                failures.append((token, exc))
        if failures:
            raise PublishError(failures)
        return count
