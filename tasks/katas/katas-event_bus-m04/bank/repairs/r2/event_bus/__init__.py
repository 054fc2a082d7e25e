"""Publish/subscribe bus with dotted topics, '*' and trailing '#' wildcards."""
from dataclasses import dataclass
import itertools

__all__ = ["EventBus", "PublishError"]


class PublishError(Exception):
    def __init__(self, errors):
        super().__init__(f"{len(errors)} handler(s) failed")
        self.errors = errors


def _segments(text, allow_wildcards):
    if not isinstance(text, str) or not text:
        raise ValueError(f"invalid topic or pattern {text!r}")
    parts = text.split(".")
    for i, part in enumerate(parts):
        if not part:
            raise ValueError(f"empty segment in {text!r}")
        if part in ("*", "#"):
            if not allow_wildcards:
                raise ValueError(f"wildcards are not allowed in a topic: {text!r}")
            if part == "#" and i != len(parts) - 1:
                raise ValueError(f"'#' must be the last segment: {text!r}")
        elif "*" in part or "#" in part:
            raise ValueError(f"bad segment {part!r} in {text!r}")
    return parts


def _matches(pattern, topic):
    """Segment-by-segment match; '#' can only be last, so it swallows whatever remains."""
    for i, part in enumerate(pattern):
        if part == "#":
            return True
        if i >= len(topic):
            return False
        if part != "*" and part != topic[i]:
            return False
    return len(pattern) == len(topic)


@dataclass
class _Subscription:
    token: int
    pattern: list
    handler: object
    once: bool
    priority: int


class EventBus:
    def __init__(self):
        self._subs = {}                 # token -> _Subscription, in subscription order
        self._tokens = itertools.count(1)

    def subscribe(self, pattern, handler, once=False, priority=0):
        parts = _segments(pattern, allow_wildcards=True)
        token = next(self._tokens)
        self._subs[token] = _Subscription(token, parts, handler, once, priority)
        return token

    def unsubscribe(self, token):
        return self._subs.pop(token, None) is not None

    def _matching(self, topic):
        parts = _segments(topic, allow_wildcards=False)
        found = [s for s in self._subs.values() if _matches(s.pattern, parts)]
        # sorted() is stable, so equal priorities keep subscription order.
        return sorted(found, key=lambda s: -s.priority)

    def subscribers(self, topic):
        return [s.token for s in self._matching(topic)]

    def publish(self, topic, payload=None):
        planned = self._matching(topic)
        called = 0
        errors = []
        for sub in planned:
            if self._subs.get(sub.token) is not sub:
                continue                # unsubscribed by an earlier handler of this dispatch
            if sub.once:
                self._subs.pop(sub.token)
            called += 1
            try:
                sub.handler(topic, payload)
            except Exception as exc:    # isolate handlers from each other
                errors.append((sub.token, exc))
        if errors:
            raise PublishError(errors)
        return called
