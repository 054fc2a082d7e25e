"""Plugin registry that keeps each name's plugins in resolution order using bisect."""
import bisect
from dataclasses import dataclass, field

__all__ = ["Registry", "Plugin", "PluginError", "DuplicatePlugin", "PluginNotFound"]


class PluginError(Exception):
    pass


class DuplicatePlugin(PluginError):
    pass


class PluginNotFound(PluginError, LookupError):
    pass


@dataclass(frozen=True)
class Plugin:
    name: str
    version: str
    obj: object
    priority: int = 0


@dataclass(order=True)
class _Slot:
    rank: tuple                       # (-priority, -major, -minor, -patch): ascending = resolution order
    version: tuple = field(compare=False)
    plugin: Plugin = field(compare=False)


def _parse(version):
    if not isinstance(version, str):
        raise ValueError("version must be str")
    pieces = version.split(".")
    if len(pieces) > 3 or not all(p.isascii() and p.isdigit() for p in pieces):
        raise ValueError(f"bad version {version!r}")
    return tuple(map(int, pieces)) + (0,) * (3 - len(pieces))


def _show(vt):
    return f"{vt[0]}.{vt[1]}.{vt[2]}"


def _split_entry(key):
    if "@" not in key:
        return key, "0"
    name, _, version = key.rpartition("@")
    return name, version


class Registry:
    def __init__(self):
        self._slots = {}

    def register(self, name, version, obj, priority=0, replace=False):
        if not isinstance(name, str) or not name:
            raise ValueError("plugin name required")
        vt = _parse(version)
        slots = self._slots.setdefault(name, [])
        existing = [i for i, s in enumerate(slots) if s.version == vt]
        if existing and not replace:
            raise DuplicatePlugin(f"{name}@{_show(vt)}")
        for i in reversed(existing):
            del slots[i]
        plugin = Plugin(name, _show(vt), obj, priority)
        bisect.insort(slots, _Slot((-priority,) + tuple(-x for x in vt), vt, plugin))
        return plugin

    def plugins(self, name):
        return [s.plugin for s in self._slots.get(name, [])]

    def get(self, name, major=None):
        for s in self._slots.get(name, []):
            if major is None or s.version[0] == major:
                return s.plugin.obj
        raise PluginNotFound(name)

    def get_exact(self, name, version):
        vt = _parse(version)
        for s in self._slots.get(name, []):
            if s.version == vt:
                return s.plugin.obj
        raise PluginNotFound(f"{name}@{_show(vt)}")

    def versions(self, name):
        return [_show(v) for v in sorted(s.version for s in self._slots.get(name, []))]

    def names(self):
        return sorted(n for n, slots in self._slots.items() if slots)

    def unregister(self, name, version=None):
        slots = self._slots.get(name, [])
        if version is None:
            keep = []
        else:
            vt = _parse(version)
            keep = [s for s in slots if s.version != vt]
        removed = len(slots) - len(keep)
        if removed == 0:
            raise PluginNotFound(name)
        self._slots[name] = keep
        return removed

    def discover(self, entry_points):
        checked = []
        for key, obj in entry_points.items():
            name, version = _split_entry(key)
            if not name:
                raise ValueError(f"{key!r}: missing name")
            priority = getattr(obj, "priority", 0)
            if type(priority) is not int:
                raise ValueError(f"{key!r}: priority must be an int")
            checked.append((name, _parse(version), obj, priority))
        added = []
        for name, vt, obj, priority in checked:
            if any(s.version == vt for s in self._slots.get(name, [])):
                continue
            self.register(name, _show(vt), obj, priority)
            added.append(f"{name}@{_show(vt)}")
        return added
