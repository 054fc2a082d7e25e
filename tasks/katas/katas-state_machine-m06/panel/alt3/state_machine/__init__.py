"""State machine indexed by event first: event -> {source: (target, guard)}."""
from collections import defaultdict

__all__ = ["Machine", "InvalidTransition", "GuardRejected", "UnknownState"]

ANY = "*"


class UnknownState(ValueError):
    pass


class InvalidTransition(Exception):
    def __init__(self, event, state):
        Exception.__init__(self, "invalid transition %r from %r" % (event, state))
        self.event = event
        self.state = state


class GuardRejected(InvalidTransition):
    pass


class Machine:
    def __init__(self, states, initial, final=()):
        states = list(states)
        if len(states) == 0:
            raise ValueError("empty state list")
        seen = set()
        for s in states:
            if s in seen:
                raise ValueError("duplicate state %r" % s)
            seen.add(s)
        self._known = seen
        self._final = set()
        for s in [initial, *final]:
            if s not in seen:
                raise UnknownState(s)
        self._final.update(final)
        self._start = initial
        self._at = initial
        self._events = defaultdict(dict)
        self._undo_stack = []

    def add_transition(self, event, source, target, guard=None):
        if isinstance(source, (list, tuple)):
            sources = list(source)
        else:
            sources = [source]
        for s in sources + [target]:
            if s != ANY and s not in self._known:
                raise UnknownState(s)
        if target == ANY:
            raise UnknownState(target)
        if any(s in self._final for s in sources):
            raise ValueError("transition out of a final state")
        table = self._events[event]
        if len(set(sources)) < len(sources) or any(s in table for s in sources):
            raise ValueError("transition %r already exists" % event)
        for s in sources:
            table[s] = (target, guard)

    def _resolve(self, event):
        if self._at in self._final or event not in self._events:
            return None
        table = self._events[event]
        if self._at in table:
            return table[self._at]
        return table.get(ANY)

    state = property(lambda self: self._at)
    is_final = property(lambda self: self._at in self._final)

    def fire(self, event, **context):
        found = self._resolve(event)
        if found is None:
            raise InvalidTransition(event, self._at)
        target, guard = found
        if guard is not None:
            if not guard(context):
                raise GuardRejected(event, self._at)
        self._undo_stack.append((self._at, event, target))
        self._at = target
        return target

    def can_fire(self, event, **context):
        found = self._resolve(event)
        if found is None:
            return False
        return True if found[1] is None else bool(found[1](context))

    def available_events(self):
        if self._at in self._final:
            return []
        return sorted(e for e, table in self._events.items() if self._at in table or ANY in table)

    @property
    def history(self):
        return list(self._undo_stack)

    def undo(self):
        if not self._undo_stack:
            raise IndexError("undo with empty history")
        self._at = self._undo_stack.pop()[0]
        return self._at

    def reset(self):
        self._at = self._start
        self._undo_stack = []
