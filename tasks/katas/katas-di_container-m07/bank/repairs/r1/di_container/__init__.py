"""Dependency-injection container with transient/singleton lifetimes and child containers."""
from dataclasses import dataclass

__all__ = ["Container", "ResolutionError", "UnknownService", "CircularDependency"]

LIFETIMES = ("transient", "singleton")


class ResolutionError(Exception):
    pass


class UnknownService(ResolutionError, LookupError):
    def __init__(self, key):
        super().__init__(f"no service registered for {key!r}")
        self.key = key


class CircularDependency(ResolutionError):
    def __init__(self, path):
        super().__init__(" -> ".join(repr(k) for k in path))
        self.path = path


@dataclass(frozen=True)
class _Registration:
    factory: object
    lifetime: str
    deps: tuple


class Container:
    def __init__(self, parent=None):
        self._parent = parent
        self._registrations = {}
        self._singletons = {}
        self._building = []     # keys being built through this container, outermost first

    def register(self, key, factory, lifetime="transient", deps=()):
        if lifetime not in LIFETIMES:
            raise ValueError(f"lifetime must be one of {LIFETIMES}, got {lifetime!r}")
        self._registrations[key] = _Registration(factory, lifetime, tuple(deps))
        self._singletons.pop(key, None)

    def register_instance(self, key, obj):
        self._registrations[key] = _Registration(None, "singleton", ())
        self._singletons[key] = obj

    def child(self):
        return Container(parent=self)

    def _owner_of(self, key):
        container = self
        while container is not None:
            if key in container._registrations:
                return container
            container = container._parent
        raise UnknownService(key)

    def has(self, key):
        try:
            self._owner_of(key)
        except UnknownService:
            return False
        return True

    def resolve(self, key):
        owner = self._owner_of(key)
        registration = owner._registrations[key]
        if registration.lifetime == "singleton":
            if key not in owner._singletons:
                owner._singletons[key] = owner._build(key, registration)
            return owner._singletons[key]
        return self._build(key, registration)

    def _build(self, key, registration):
        if key in self._building:
            start = self._building.index(key)
            raise CircularDependency(self._building[start:] + [key])
        self._building.append(key)
        try:
            args = [self.resolve(dep) for dep in registration.deps]
            result = registration.factory(*args)
        except BaseException:
            self._building.pop()
            raise
        self._building.pop()
        return result

    def _visible(self):
        chain = []
        container = self
        while container is not None:
            chain.append(container)
            container = container._parent
        keys = {}
        for container in reversed(chain):      # nearer containers override farther ones
            keys.update(container._registrations)
        return keys

    def validate(self):
        registrations = self._visible()
        done = set()

        def visit(key, path):
            if key in path:
                raise CircularDependency(path[path.index(key):] + [key])
            if key in done:
                return
            if key not in registrations:
                raise UnknownService(key)
            for dep in registrations[key].deps:
                visit(dep, path + [key])
            done.add(key)

        for key in registrations:
            visit(key, [])
