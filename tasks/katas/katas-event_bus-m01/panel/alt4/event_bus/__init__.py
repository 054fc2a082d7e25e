"""Event bus keeping subscriptions grouped by priority level, each level a FIFO dict."""
from collections import defaultdict
import itertools

__all__ = ["EventBus", "PublishError"]


class PublishError(Exception):
    def __init__(self, errors):
        super().__init__(f"{len(errors)} failure(s)")
        self.errors = errors


def _validate(text, pattern):
    if not isinstance(text, str):
        raise ValueError(text)
    segments = text.split(".")
    for position, segment in enumerate(segments, start=1):
        if segment == "":
            raise ValueError(text)
        if segment == "*" or segment == "#":
            if not pattern or (segment == "#" and position != len(segments)):
                raise ValueError(text)
        elif set(segment) & {"*", "#"}:
            raise ValueError(text)
    return segments


def _matches(pattern, topic):
    if pattern and pattern[-1] == "#":
        fixed = pattern[:-1]
        if len(topic) < len(fixed):
            return False
        topic = topic[:len(fixed)]
        pattern = fixed
    if len(pattern) != len(topic):
        return False
    return all(p == "*" or p == t for p, t in zip(pattern, topic))


class EventBus:
    def __init__(self):
        self._levels = defaultdict(dict)     # priority -> {token: (pattern, handler, once)}
        self._where = {}                     # token -> priority
        self._ids = itertools.count(101)   # tokens are opaque; start away from 1

    def subscribe(self, pattern, handler, once=False, priority=0):
        segments = _validate(pattern, True)
        token = next(self._ids)
        self._levels[priority][token] = (segments, handler, once)
        self._where[token] = priority
        return token

    def unsubscribe(self, token):
        if token not in self._where:
            return False
        del self._levels[self._where.pop(token)][token]
        return True

    def _plan(self, topic):
        segments = _validate(topic, False)
        plan = []
        for priority in sorted(self._levels, reverse=True):
            for token, entry in self._levels[priority].items():
                if _matches(entry[0], segments):
                    plan.append((token, entry))
        return plan

    def subscribers(self, topic):
        return [token for token, _ in self._plan(topic)]

    def publish(self, topic, payload=None):
        errors = []
        count = 0
        for token, entry in self._plan(topic):
            priority = self._where.get(token)
            if priority is None or self._levels[priority].get(token) is not entry:
                continue
            _, handler, once = entry
            if once:
                self.unsubscribe(token)
            count += 1
            try:
                handler(topic, payload)
            except Exception as exc:
                errors.append((token, exc))
        if errors:
            raise PublishError(errors)
        return count
