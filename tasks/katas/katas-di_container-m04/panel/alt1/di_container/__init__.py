"""DI container that threads an explicit resolution stack of (container, key) pairs."""

__all__ = ["Container", "ResolutionError", "UnknownService", "CircularDependency"]


class ResolutionError(Exception):
    pass


class UnknownService(ResolutionError, LookupError):
    def __init__(self, key):
        super().__init__(key)
        self.key = key


class CircularDependency(ResolutionError):
    def __init__(self, path):
        super().__init__(path)
        self.path = list(path)


class Container:
    def __init__(self, parent=None):
        self.parent = parent
        self.providers = {}      # key -> (factory, lifetime, deps)
        self.cache = {}

    def register(self, key, factory, lifetime="transient", deps=()):
        if lifetime != "transient" and lifetime != "singleton":
            raise ValueError(lifetime)
        self.providers[key] = (factory, lifetime, list(deps))
        if key in self.cache:
            del self.cache[key]

    def register_instance(self, key, obj):
        self.providers[key] = (None, "singleton", [])
        self.cache[key] = obj

    def child(self):
        return Container(self)

    def _find(self, key):
        node = self
        while node is not None and key not in node.providers:
            node = node.parent
        if node is None:
            raise UnknownService(key)
        return node

    def has(self, key):
        node = self
        while node is not None:
            if key in node.providers:
                return True
            node = node.parent
        return False

    def resolve(self, key):
        return self._get(key, ())

    def _get(self, key, stack):
        owner = self._find(key)
        factory, lifetime, deps = owner.providers[key]
        builder = owner if lifetime == "singleton" else self
        if lifetime == "singleton" and key in owner.cache:
            return owner.cache[key]
        frame = (builder, key)
        if frame in stack:
            same = [k for (c, k) in stack[stack.index(frame):] if c is builder]
            raise CircularDependency(same + [key])
        stack = stack + (frame,)
        value = factory(*[builder._get(dep, stack) for dep in deps])
        if lifetime == "singleton":
            owner.cache[key] = value
        return value

    def validate(self):
        seen = {}
        node = self
        while node is not None:
            for key, entry in node.providers.items():
                seen.setdefault(key, entry)
            node = node.parent
        ok = set()
        for root in seen:
            stack = [(root, iter(seen[root][2]))]
            path = [root]
            while stack:
                key, deps = stack[-1]
                dep = next(deps, None)
                if dep is None:
                    ok.add(key)
                    stack.pop()
                    path.pop()
                    continue
                if dep in path:
                    raise CircularDependency(path[path.index(dep):] + [dep])
                if dep in ok:
                    continue
                if dep not in seen:
                    raise UnknownService(dep)
                stack.append((dep, iter(seen[dep][2])))
                path.append(dep)
