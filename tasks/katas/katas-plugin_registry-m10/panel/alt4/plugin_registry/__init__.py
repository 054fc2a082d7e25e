"""Plugin registry that compares versions as digit strings (length first, then text).

Leading zeros are stripped so "007" and "7" are the same group; comparing (length, text)
is numeric comparison without converting to int.
"""
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


class _Version:
    __slots__ = ("groups",)

    def __init__(self, text):
        if not isinstance(text, str):
            raise ValueError("version is not a string")
        raw = text.split(".")
        if len(raw) > 3 or any(g == "" or g.strip("0123456789") for g in raw):
            raise ValueError(f"version {text!r} is malformed")
        raw += ["0"] * (3 - len(raw))
        self.groups = tuple(g.lstrip("0") or "0" for g in raw)

    def sort_key(self):
        return tuple((len(g), g) for g in self.groups)

    def major(self):
        return int(self.groups[0])

    def __str__(self):
        return ".".join(self.groups)


class Registry:
    def __init__(self):
        self._plugins = {}      # name -> {normalized version text: (version, Plugin)}

    def register(self, name, version, obj, priority=0, replace=False):
        if type(name) is not str or not name:
            raise ValueError("bad name")
        v = _Version(version)
        bucket = self._plugins.setdefault(name, {})
        if str(v) in bucket and not replace:
            raise DuplicatePlugin(f"duplicate {name} {v}")
        plugin = Plugin(name, str(v), obj, priority)
        bucket[str(v)] = (v, plugin)
        return plugin

    def _ranked(self, name):
        entries = list(self._plugins.get(name, {}).values())
        return sorted(entries, key=lambda e: (e[1].priority, e[0].sort_key()), reverse=True)

    def plugins(self, name):
        return [p for _, p in self._ranked(name)]

    def get(self, name, major=None):
        matches = [p for v, p in self._ranked(name) if major is None or v.major() == major]
        if not matches:
            raise PluginNotFound(f"no match for {name}")
        return matches[0].obj

    def get_exact(self, name, version):
        v = _Version(version)
        entry = self._plugins.get(name, {}).get(str(v))
        if entry is None:
            raise PluginNotFound(f"{name} {v}")
        return entry[1].obj

    def versions(self, name):
        entries = sorted(self._plugins.get(name, {}).values(), key=lambda e: e[0].sort_key())
        return [str(v) for v, _ in entries]

    def names(self):
        return sorted(n for n, b in self._plugins.items() if b)

    def unregister(self, name, version=None):
        bucket = self._plugins.get(name, {})
        if version is None:
            count = len(bucket)
            bucket.clear()
        else:
            count = int(bucket.pop(str(_Version(version)), None) is not None)
        if count == 0:
            raise PluginNotFound(name)
        return count

    def discover(self, entry_points):
        plan = []
        for key, obj in entry_points.items():
            name, at, version = key.rpartition("@")
            if not at:
                name, version = key, "0"
            if not name:
                raise ValueError(f"bad entry point {key!r}")
            prio = getattr(obj, "priority", 0)
            if prio is True or prio is False or not isinstance(prio, int):
                raise ValueError(f"bad priority on {key!r}")
            plan.append((name, _Version(version), obj, prio))
        done = []
        for name, v, obj, prio in plan:
            if str(v) in self._plugins.get(name, {}):
                continue
            self.register(name, str(v), obj, prio)
            done.append(f"{name}@{v}")
        return done
