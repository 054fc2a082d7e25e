"""DI container using collections.ChainMap for scoped lookups and an in-progress dict."""
from collections import ChainMap, namedtuple

__all__ = ["Container", "ResolutionError", "UnknownService", "CircularDependency"]

_Spec = namedtuple("_Spec", "factory lifetime deps home")


class ResolutionError(Exception):
    pass


class UnknownService(ResolutionError, LookupError):
    def __init__(self, key):
        super().__init__(f"{key!r} is not registered")
        self.key = key


class CircularDependency(ResolutionError):
    def __init__(self, path):
        super().__init__(f"dependency cycle {path!r}")
        self.path = path


class Container:
    def __init__(self, parent=None):
        self._own = {}
        self._specs = ChainMap(self._own) if parent is None else parent._specs.new_child(self._own)
        self._made = {}
        self._pending = {}      # key -> position, insertion-ordered

    def register(self, key, factory, lifetime="transient", deps=()):
        if lifetime not in ("transient", "singleton"):
            raise ValueError(f"bad lifetime {lifetime!r}")
        self._own[key] = _Spec(factory, lifetime, tuple(deps), self)
        self._made.pop(key, None)

    def register_instance(self, key, obj):
        self._own[key] = _Spec(lambda: obj, "singleton", (), self)
        self._made[key] = obj

    def child(self):
        return Container(self)

    def has(self, key):
        return key in self._specs

    def resolve(self, key):
        if key not in self._specs:
            raise UnknownService(key)
        spec = self._specs[key]
        if spec.lifetime == "transient":
            return self._create(key, spec)
        home = spec.home
        if key not in home._made:
            created = home._create(key, spec)
            home._made[key] = created
        return home._made[key]

    def _create(self, key, spec):
        if key in self._pending:
            chain = list(self._pending)
            raise CircularDependency(chain[chain.index(key):] + [key])
        self._pending[key] = len(self._pending)
        try:
            arguments = tuple(self.resolve(dep) for dep in spec.deps)
            return spec.factory(*arguments)
        finally:
            del self._pending[key]

    def validate(self):
        specs = dict(self._specs)
        finished = set()
        for key in specs:
            self._walk(key, specs, [], finished)

    def _walk(self, key, specs, path, finished):
        if key in path:
            raise CircularDependency(path[path.index(key):] + [key])
        if key in finished:
            return
        if key not in specs:
            raise UnknownService(key)
        for dep in specs[key].deps:
            self._walk(dep, specs, path + [key], finished)
        finished.add(key)
