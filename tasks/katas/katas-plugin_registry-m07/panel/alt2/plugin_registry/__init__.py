"""Plugin registry keyed by (name, version tuple); a name index is rebuilt on demand."""
from dataclasses import dataclass

__all__ = ["Registry", "Plugin", "PluginError", "DuplicatePlugin", "PluginNotFound"]


class PluginError(Exception):
    pass


class DuplicatePlugin(PluginError):
    pass


class PluginNotFound(LookupError, PluginError):
    pass


@dataclass(frozen=True)
class Plugin:
    name: str
    version: str
    obj: object
    priority: int = 0


_DIGITS = frozenset("0123456789")


class Registry:
    def __init__(self):
        self._table = {}

    @staticmethod
    def _norm(version):
        if type(version) is not str or version.count(".") > 2:
            raise ValueError("invalid version: %r" % (version,))
        groups = version.split(".")
        if any(not g or not set(g) <= _DIGITS for g in groups):
            raise ValueError("invalid version: %r" % (version,))
        return tuple(int(g) for g in groups) + (0,) * (3 - len(groups))

    @staticmethod
    def _text(vt):
        return ".".join(map(str, vt))

    def register(self, name, version, obj, priority=0, replace=False):
        if not (isinstance(name, str) and len(name) > 0):
            raise ValueError("name")
        vt = self._norm(version)
        if (name, vt) in self._table and not replace:
            raise DuplicatePlugin("%s@%s exists" % (name, self._text(vt)))
        self._table[(name, vt)] = Plugin(name, self._text(vt), obj, priority)
        return self._table[(name, vt)]

    def _entries(self, name):
        return [(vt, p) for (n, vt), p in self._table.items() if n == name]

    def plugins(self, name):
        ranked = sorted(self._entries(name), key=lambda e: (-e[1].priority, tuple(-x for x in e[0])))
        return [p for _, p in ranked]

    def get(self, name, major=None):
        ranked = sorted(self._entries(name), key=lambda e: (-e[1].priority, tuple(-x for x in e[0])))
        for vt, p in ranked:
            if major is None or vt[0] == major:
                return p.obj
        raise PluginNotFound("%s (major=%s)" % (name, major))

    def get_exact(self, name, version):
        entry = self._table.get((name, self._norm(version)))
        if entry is None:
            raise PluginNotFound("%s@%s" % (name, version))
        return entry.obj

    def versions(self, name):
        return [self._text(vt) for vt in sorted(vt for vt, _ in self._entries(name))]

    def names(self):
        return sorted({n for n, _ in self._table})

    def unregister(self, name, version=None):
        if version is None:
            doomed = [(name, vt) for vt, _ in self._entries(name)]
        else:
            vt = self._norm(version)
            doomed = [(name, vt)] if (name, vt) in self._table else []
        if not doomed:
            raise PluginNotFound(name)
        for key in doomed:
            del self._table[key]
        return len(doomed)

    def discover(self, entry_points):
        pending = {}
        for key, obj in entry_points.items():
            head, at, tail = key.rpartition("@")
            name, version = (head, tail) if at else (key, "0")
            if not name:
                raise ValueError("entry point %r: empty name" % key)
            vt = self._norm(version)
            priority = getattr(obj, "priority", 0)
            if isinstance(priority, bool) or not isinstance(priority, int):
                raise ValueError("entry point %r: bad priority" % key)
            pending.setdefault((name, vt), (obj, priority))
        added = []
        for (name, vt), (obj, priority) in pending.items():
            if (name, vt) not in self._table:
                self._table[(name, vt)] = Plugin(name, self._text(vt), obj, priority)
                added.append("%s@%s" % (name, self._text(vt)))
        return added
