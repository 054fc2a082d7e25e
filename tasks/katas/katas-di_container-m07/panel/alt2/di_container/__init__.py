"""DI container whose whole family shares one singleton cache keyed by (owner id, key)."""

__all__ = ["Container", "ResolutionError", "UnknownService", "CircularDependency"]


class ResolutionError(Exception):
    pass


class UnknownService(LookupError, ResolutionError):
    def __init__(self, key):
        self.key = key
        super().__init__(f"unknown service: {key!r}")


class CircularDependency(ResolutionError):
    def __init__(self, path):
        self.path = path
        super().__init__("cycle: " + " > ".join(map(str, path)))


class _Family:
    """State shared by a root container and all its descendants."""

    def __init__(self):
        self.singletons = {}
        self.in_progress = {}      # id(container) -> {key: depth}
        self.order = {}            # id(container) -> [keys]


class Container:
    def __init__(self, parent=None):
        self._parent = parent
        self._family = parent._family if parent is not None else _Family()
        self._entries = {}

    def register(self, key, factory, lifetime="transient", deps=()):
        if lifetime not in {"transient", "singleton"}:
            raise ValueError(f"unknown lifetime {lifetime!r}")
        self._entries[key] = {"factory": factory, "singleton": lifetime == "singleton",
                              "deps": tuple(deps)}
        self._family.singletons.pop((id(self), key), None)

    def register_instance(self, key, obj):
        self._entries[key] = {"factory": None, "singleton": True, "deps": ()}
        self._family.singletons[(id(self), key)] = obj

    def child(self):
        return Container(self)

    def _locate(self, key):
        here = self
        while here is not None:
            entry = here._entries.get(key)
            if entry is not None:
                return here, entry
            here = here._parent
        raise UnknownService(key)

    def has(self, key):
        try:
            self._locate(key)
            return True
        except UnknownService:
            return False

    def resolve(self, key):
        owner, entry = self._locate(key)
        if not entry["singleton"]:
            return self._construct(key, entry)
        slot = (id(owner), key)
        if slot not in self._family.singletons:
            value = owner._construct(key, entry)
            self._family.singletons[slot] = value
        return self._family.singletons[slot]

    def _construct(self, key, entry):
        active = self._family.in_progress.setdefault(id(self), {})
        order = self._family.order.setdefault(id(self), [])
        if key in active:
            raise CircularDependency(order[active[key]:] + [key])
        active[key] = len(order)
        order.append(key)
        try:
            values = []
            for dep in entry["deps"]:
                values.append(self.resolve(dep))
            return entry["factory"](*values)
        finally:
            order.pop()
            del active[key]

    def validate(self):
        graph = {}
        chain = []
        here = self
        while here is not None:
            chain.append(here)
            here = here._parent
        for container in chain:
            for key, entry in container._entries.items():
                graph.setdefault(key, entry["deps"])
        WHITE, GREY, BLACK = 0, 1, 2
        colour = dict.fromkeys(graph, WHITE)
        trail = []

        def dfs(key):
            colour[key] = GREY
            trail.append(key)
            for dep in graph[key]:
                if dep not in graph:
                    raise UnknownService(dep)
                if colour[dep] == GREY:
                    raise CircularDependency(trail[trail.index(dep):] + [dep])
                if colour[dep] == WHITE:
                    dfs(dep)
            trail.pop()
            colour[key] = BLACK

        for key in graph:
            if colour[key] == WHITE:
                dfs(key)
