"""State machine scanning a flat list of transition records; exact sources beat wildcards."""
from dataclasses import dataclass
from typing import Callable, Optional

__all__ = ["Machine", "InvalidTransition", "GuardRejected", "UnknownState"]


class UnknownState(ValueError):
    pass


class InvalidTransition(Exception):
    def __init__(self, event, state, message=None):
        super().__init__(message or f"{event} not allowed from {state}")
        self.event = event
        self.state = state


class GuardRejected(InvalidTransition):
    def __init__(self, event, state):
        super().__init__(event, state, f"guard blocked {event} from {state}")


@dataclass(frozen=True)
class _Rule:
    event: str
    source: str          # a state name or "*"
    target: str
    guard: Optional[Callable] = None

    def matches(self, event, state):
        return self.event == event and self.source in (state, "*")


class Machine:
    def __init__(self, states, initial, final=()):
        self._states = []
        for name in states:
            if name in self._states:
                raise ValueError(f"state {name} declared twice")
            self._states.append(name)
        if not self._states:
            raise ValueError("no states")
        self._check(initial)
        self._final = []
        for name in final:
            self._check(name)
            self._final.append(name)
        self._initial = self._current = initial
        self._rules = []
        self._trail = []

    def _check(self, name):
        if name not in self._states:
            raise UnknownState(name)

    def add_transition(self, event, source, target, guard=None):
        sources = (source,) if isinstance(source, str) else tuple(source)
        new_rules = []
        for name in sources:
            if name != "*":
                self._check(name)
                if name in self._final:
                    raise ValueError(f"{name} is final")
            new_rules.append(_Rule(event, name, target, guard))
        self._check(target)
        taken = {(r.event, r.source) for r in self._rules}
        for rule in new_rules:
            if (rule.event, rule.source) in taken:
                raise ValueError(f"{event} from {rule.source} already defined")
            taken.add((rule.event, rule.source))
        self._rules.extend(new_rules)

    def _rule_for(self, event):
        if self._current in self._final:
            return None
        candidates = [r for r in self._rules if r.matches(event, self._current)]
        candidates.sort(key=lambda r: r.source == "*")   # exact source first
        return candidates[0] if candidates else None

    @property
    def state(self):
        return self._current

    @property
    def is_final(self):
        return self._current in self._final

    def fire(self, event, **context):
        rule = self._rule_for(event)
        if rule is None:
            raise InvalidTransition(event, self._current)
        if rule.guard is not None and not rule.guard(context):
            raise GuardRejected(event, self._current)
        self._trail.append((self._current, event, rule.target))
        self._current = rule.target
        return self._current

    def can_fire(self, event, **context):
        try:
            rule = self._rule_for(event)
        except TypeError:
            return False
        if rule is None:
            return False
        return rule.guard is None or bool(rule.guard(context))

    def available_events(self):
        if self.is_final:
            return []
        return sorted({r.event for r in self._rules if r.source in (self._current, "*")})

    @property
    def history(self):
        return [tuple(step) for step in self._trail]

    def undo(self):
        if len(self._trail) == 0:
            raise IndexError("history is empty")
        previous = self._trail.pop()[0]
        self._current = previous
        return previous

    def reset(self):
        self._current = self._initial
        del self._trail[:]
