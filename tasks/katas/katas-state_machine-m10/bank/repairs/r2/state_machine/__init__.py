"""Finite state machine keyed by (event, source) with a wildcard source."""

__all__ = ["Machine", "InvalidTransition", "GuardRejected", "UnknownState"]

WILDCARD = "*"


class UnknownState(ValueError):
    pass


class InvalidTransition(Exception):
    def __init__(self, event, state, reason="no transition"):
        super().__init__(f"cannot fire {event!r} in state {state!r}: {reason}")
        self.event = event
        self.state = state


class GuardRejected(InvalidTransition):
    def __init__(self, event, state):
        super().__init__(event, state, reason="guard rejected")


class Machine:
    def __init__(self, states, initial, final=()):
        self._states = list(states)
        if not self._states:
            raise ValueError("a machine needs at least one state")
        if len(set(self._states)) != len(self._states):
            raise ValueError("duplicate state names")
        self._require(initial)
        self._final = frozenset(final)
        for name in self._final:
            self._require(name)
        self._initial = initial
        self._state = initial
        self._table = {}      # (event, source or WILDCARD) -> (target, guard)
        self._history = []

    def _require(self, name):
        if name not in self._states:
            raise UnknownState(f"unknown state {name!r}")

    def add_transition(self, event, source, target, guard=None):
        sources = [source] if isinstance(source, str) else list(source)
        for name in sources:
            if name != WILDCARD:
                self._require(name)
                if name in self._final:
                    raise ValueError(f"final state {name!r} cannot have outgoing transitions")
        self._require(target)
        keys = [(event, name) for name in sources]
        # Validate every pair before storing any, so a failed call adds nothing.
        if len(set(keys)) != len(keys) or any(key in self._table for key in keys):
            raise ValueError(f"duplicate transition for event {event!r}")
        for key in keys:
            self._table[key] = (target, guard)

    def _lookup(self, event):
        if self._state in self._final:
            return None
        found = self._table.get((event, self._state))
        if found is None:
            found = self._table.get((event, WILDCARD))
        return found

    @property
    def state(self):
        return self._state

    @property
    def is_final(self):
        return self._state in self._final

    def fire(self, event, **context):
        found = self._lookup(event)
        if found is None:
            raise InvalidTransition(event, self._state)
        target, guard = found
        if guard is not None and not guard(context):
            raise GuardRejected(event, self._state)
        self._history.append((self._state, event, target))
        self._state = target
        return target

    def can_fire(self, event, **context):
        found = self._lookup(event)
        if found is None:
            return False
        guard = found[1]
        return guard is None or bool(guard(context))

    def available_events(self):
        if self._state in self._final:
            return []
        return sorted({event for (event, source) in self._table
                       if source == WILDCARD})

    @property
    def history(self):
        return list(self._history)

    def undo(self):
        if not self._history:
            raise IndexError("nothing to undo")
        source, _event, _target = self._history.pop()
        self._state = source
        return source

    def reset(self):
        self._state = self._initial
        self._history.clear()
