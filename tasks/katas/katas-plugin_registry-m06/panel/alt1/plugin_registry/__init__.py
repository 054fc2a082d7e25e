"""Plugin registry over one flat list of Plugin records, scanned linearly."""
from dataclasses import dataclass

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


def _vtuple(version):
    if not isinstance(version, str):
        raise ValueError("version must be a string")
    groups = version.split(".")
    if not 1 <= len(groups) <= 3:
        raise ValueError("version needs 1 to 3 groups")
    for g in groups:
        if not g or not all("0" <= ch <= "9" for ch in g):
            raise ValueError(f"bad version group {g!r}")
    nums = [int(g) for g in groups]
    while len(nums) < 3:
        nums.append(0)
    return tuple(nums)


def _vstr(vt):
    return "%d.%d.%d" % vt


class Registry:
    def __init__(self):
        self._records = []

    def _find(self, name, vt):
        for i, p in enumerate(self._records):
            if p.name == name and _vtuple(p.version) == vt:
                return i
        return -1

    def register(self, name, version, obj, priority=0, replace=False):
        if not isinstance(name, str) or name == "":
            raise ValueError("empty plugin name")
        vt = _vtuple(version)
        plugin = Plugin(name, _vstr(vt), obj, priority)
        i = self._find(name, vt)
        if i >= 0:
            if not replace:
                raise DuplicatePlugin(name)
            self._records[i] = plugin
        else:
            self._records.append(plugin)
        return plugin

    def plugins(self, name):
        mine = [p for p in self._records if p.name == name]
        mine.sort(key=lambda p: _vtuple(p.version), reverse=True)
        mine.sort(key=lambda p: p.priority, reverse=True)     # stable: keeps newest-first ties
        return mine

    def get(self, name, major=None):
        for p in self.plugins(name):
            if major is None or _vtuple(p.version)[0] == major:
                return p.obj
        raise PluginNotFound(name)

    def get_exact(self, name, version):
        i = self._find(name, _vtuple(version))
        if i < 0:
            raise PluginNotFound(f"{name}@{version}")
        return self._records[i].obj

    def versions(self, name):
        return [_vstr(vt) for vt in sorted(_vtuple(p.version) for p in self._records if p.name == name)]

    def names(self):
        return sorted({p.name for p in self._records})

    def unregister(self, name, version=None):
        vt = None if version is None else _vtuple(version)
        keep = [p for p in self._records
                if not (p.name == name and (vt is None or _vtuple(p.version) == vt))]
        removed = len(self._records) - len(keep)
        if removed == 0:
            raise PluginNotFound(name)
        self._records = keep
        return removed

    def discover(self, entry_points):
        staged = []
        for key, obj in entry_points.items():
            if "@" in key:
                at = key.rindex("@")
                name, version = key[:at], key[at + 1:]
            else:
                name, version = key, "0.0.0"
            if not name:
                raise ValueError(f"entry point {key!r} has no name")
            vt = _vtuple(version)
            priority = obj.priority if hasattr(obj, "priority") else 0
            if type(priority) is not int:
                raise ValueError("priority must be int")
            staged.append((name, vt, obj, priority))
        added = []
        for name, vt, obj, priority in staged:
            if self._find(name, vt) < 0:
                self.register(name, _vstr(vt), obj, priority)
                added.append(name + "@" + _vstr(vt))
        return added
