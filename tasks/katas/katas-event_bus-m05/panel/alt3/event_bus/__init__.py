"""Event bus with a recursive matcher that treats '#' as "zero or more segments"."""

__all__ = ["EventBus", "PublishError"]


class PublishError(Exception):
    def __init__(self, errors):
        Exception.__init__(self, "publish failed")
        self.errors = errors


def _parse(text, is_pattern):
    if not isinstance(text, str) or not text:
        raise ValueError("empty")
    segs = tuple(text.split("."))
    for idx, seg in enumerate(segs):
        if not seg:
            raise ValueError("empty segment")
        if seg == "*" and is_pattern:
            continue
        if seg == "#" and is_pattern and idx == len(segs) - 1:
            continue
        if "*" in seg or "#" in seg:
            raise ValueError("wildcard misuse")
    return segs


def _match(pat, top):
    if not pat:
        return not top
    head, rest = pat[0], pat[1:]
    if head == "#":
        return any(_match(rest, top[k:]) for k in range(len(top) + 1))
    if not top:
        return False
    return (head == "*" or head == top[0]) and _match(rest, top[1:])


class _Sub:
    def __init__(self, token, pattern, handler, once, priority):
        self.token = token
        self.pattern = pattern
        self.handler = handler
        self.once = once
        self.priority = priority
        self.active = True


class EventBus:
    def __init__(self):
        self._subs = []
        self._counter = 0

    def subscribe(self, pattern, handler, once=False, priority=0):
        pat = _parse(pattern, True)
        self._counter += 1
        self._subs.append(_Sub(self._counter, pat, handler, once, priority))
        return self._counter

    def unsubscribe(self, token):
        for sub in self._subs:
            if sub.token == token and sub.active:
                sub.active = False
                self._subs.remove(sub)
                return True
        return False

    def _plan(self, topic):
        top = _parse(topic, False)
        chosen = [s for s in self._subs if s.active and _match(s.pattern, top)]
        return sorted(chosen, key=lambda s: (-s.priority, s.token))

    def subscribers(self, topic):
        return [s.token for s in self._plan(topic)]

    def publish(self, topic, payload=None):
        calls = 0
        problems = []
        for sub in self._plan(topic):
            if not sub.active:
                continue
            if sub.once:
                self.unsubscribe(sub.token)
            calls += 1
            try:
                sub.handler(topic, payload)
            except Exception as err:
                problems.append((sub.token, err))
        if problems:
            raise PublishError(problems)
        return calls
