"""State machine that expands wildcards eagerly into a per-(state, event) routing table.

Each route remembers whether it came from a wildcard so that an exact route always wins,
whatever order the two were added in.
"""

__all__ = ["Machine", "InvalidTransition", "GuardRejected", "UnknownState"]


class UnknownState(ValueError):
    pass


class InvalidTransition(Exception):
    def __init__(self, event, state):
        super().__init__(f"event {event!r} is not valid in {state!r}")
        self.event = event
        self.state = state


class GuardRejected(InvalidTransition):
    pass


class Machine:
    def __init__(self, states, initial, final=()):
        order = list(states)
        if not order:
            raise ValueError("no states given")
        if len(order) != len(set(order)):
            raise ValueError("states repeat")
        self._states = set(order)
        self._order = order
        for name in [initial, *final]:
            self._known(name)
        self._finals = set(final)
        self._initial = initial
        self._now = initial
        self._routes = {}       # (state, event) -> (target, guard, from_wildcard)
        self._wild_events = set()
        self._steps = []

    def _known(self, name):
        if name not in self._states:
            raise UnknownState(name)
        return name

    def add_transition(self, event, source, target, guard=None):
        self._known(target)
        if source == "*":
            if event in self._wild_events:
                raise ValueError("duplicate wildcard transition")
            self._wild_events.add(event)
            for state in self._order:
                if state in self._finals:
                    continue
                route = self._routes.get((state, event))
                if route is None or route[2]:
                    self._routes[(state, event)] = (target, guard, True)
            return
        names = [source] if isinstance(source, str) else list(source)
        for name in names:
            self._known(name)
            if name in self._finals:
                raise ValueError("final state")
        if len(set(names)) != len(names):
            raise ValueError("duplicate source")
        for name in names:
            route = self._routes.get((name, event))
            if route is not None and not route[2]:
                raise ValueError("duplicate transition")
        for name in names:
            self._routes[(name, event)] = (target, guard, False)

    @property
    def state(self):
        return self._now

    @property
    def is_final(self):
        return self._now in self._finals

    def fire(self, event, **context):
        route = self._routes.get((self._now, event))
        if route is None:
            raise InvalidTransition(event, self._now)
        target, guard, _ = route
        if guard is not None and not guard(context):
            raise GuardRejected(event, self._now)
        self._steps.append((self._now, event, target))
        self._now = target
        return target

    def can_fire(self, event, **context):
        route = self._routes.get((self._now, event))
        if route is None:
            return False
        return route[1] is None or bool(route[1](context))

    def available_events(self):
        return sorted({event for (state, event) in self._routes if state == self._now})

    @property
    def history(self):
        return list(self._steps)

    def undo(self):
        if not self._steps:
            raise IndexError("no transition to undo")
        self._now = self._steps[-1][0]
        del self._steps[-1]
        return self._now

    def reset(self):
        self._now = self._initial
        self._steps.clear()
