"""State machine as a nested table: state -> event -> (target, guard); wildcards kept apart."""

__all__ = ["Machine", "InvalidTransition", "GuardRejected", "UnknownState"]


class UnknownState(ValueError):
    pass


class InvalidTransition(Exception):
    def __init__(self, event, state):
        super().__init__(event, state)
        self.event, self.state = event, state


class GuardRejected(InvalidTransition):
    pass


class Machine:
    def __init__(self, states, initial, final=()):
        names = tuple(states)
        if not names or len(names) != len(frozenset(names)):
            raise ValueError("states must be non-empty and unique")
        self.states = names
        for name in (initial, *final):
            if name not in names:
                raise UnknownState(name)
        self.initial, self.final = initial, set(final)
        self.state = initial
        self._by_state = {name: {} for name in names}
        self._anywhere = {}
        self._log = []

    def add_transition(self, event, source, target, guard=None):
        if target not in self.states:
            raise UnknownState(target)
        if source == "*":
            if event in self._anywhere:
                raise ValueError("wildcard transition already defined")
            self._anywhere[event] = (target, guard)
            return
        sources = [source] if isinstance(source, str) else list(source)
        for name in sources:
            if name not in self.states:
                raise UnknownState(name)
            if name in self.final:
                raise ValueError("final states are terminal")
            if event in self._by_state[name] or sources.count(name) > 1:
                raise ValueError("duplicate transition")
        for name in sources:
            self._by_state[name][event] = (target, guard)

    @property
    def is_final(self):
        return self.state in self.final

    def _find(self, event):
        if self.is_final:
            return None
        return self._by_state[self.state].get(event) or self._anywhere.get(event)

    def fire(self, event, **context):
        rule = self._find(event)
        if not rule:
            raise InvalidTransition(event, self.state)
        target, guard = rule
        if guard and not guard(context):
            raise GuardRejected(event, self.state)
        self._log.append((self.state, event, target))
        self.state = target
        return target

    def can_fire(self, event, **context):
        rule = self._find(event)
        return bool(rule) and (rule[1] is None or bool(rule[1](context)))

    def available_events(self):
        if self.is_final:
            return []
        return sorted(set(self._by_state[self.state]) | set(self._anywhere))

    @property
    def history(self):
        return self._log.copy()

    def undo(self):
        source = self._log.pop()[0]   # IndexError on an empty log, as specified
        self.state = source
        return source

    def reset(self):
        self.state = self.initial
        self._log = []
