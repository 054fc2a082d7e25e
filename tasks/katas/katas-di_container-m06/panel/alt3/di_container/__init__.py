"""DI container that turns each registration into a provider object with its own cache."""

__all__ = ["Container", "ResolutionError", "UnknownService", "CircularDependency"]

_UNSET = object()


class ResolutionError(Exception):
    pass


class UnknownService(ResolutionError, LookupError):
    def __init__(self, key):
        ResolutionError.__init__(self, "missing %r" % (key,))
        self.key = key


class CircularDependency(ResolutionError):
    def __init__(self, path):
        ResolutionError.__init__(self, "circular: %r" % (path,))
        self.path = path


class _Provider:
    def __init__(self, key, factory, singleton, deps, owner):
        self.key = key
        self.factory = factory
        self.singleton = singleton
        self.deps = list(deps)
        self.owner = owner
        self.value = _UNSET

    def get(self, via):
        if not self.singleton:
            return via._make(self)
        if self.value is _UNSET:
            value = self.owner._make(self)
            self.value = value
        return self.value


class Container:
    def __init__(self, parent=None):
        self._up = parent
        self._providers = {}
        self._stack = []

    def register(self, key, factory, lifetime="transient", deps=()):
        if lifetime == "singleton":
            singleton = True
        elif lifetime == "transient":
            singleton = False
        else:
            raise ValueError("lifetime")
        self._providers[key] = _Provider(key, factory, singleton, deps, self)

    def register_instance(self, key, obj):
        provider = _Provider(key, None, True, (), self)
        provider.value = obj
        self._providers[key] = provider

    def child(self):
        return Container(self)

    def _provider(self, key):
        c = self
        while c is not None:
            if key in c._providers:
                return c._providers[key]
            c = c._up
        return None

    def has(self, key):
        return self._provider(key) is not None

    def resolve(self, key):
        provider = self._provider(key)
        if provider is None:
            raise UnknownService(key)
        return provider.get(self)

    def _make(self, provider):
        key = provider.key
        keys = [k for k, _ in self._stack]
        if key in keys:
            raise CircularDependency(keys[keys.index(key):] + [key])
        self._stack.append((key, provider))
        try:
            return provider.factory(*(self.resolve(dep) for dep in provider.deps))
        finally:
            self._stack.pop()

    def validate(self):
        visible = {}
        c = self
        while c is not None:
            for key, provider in c._providers.items():
                visible.setdefault(key, provider.deps)
            c = c._up
        for start in visible:
            self._check_from(start, visible, [start])

    def _check_from(self, key, visible, path):
        for dep in visible[key]:
            if dep in path:
                raise CircularDependency(path[path.index(dep):] + [dep])
            if dep not in visible:
                raise UnknownService(dep)
            self._check_from(dep, visible, path + [dep])
