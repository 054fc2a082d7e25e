"""Registry of named, versioned plugins with priority-based resolution."""
from dataclasses import dataclass
import re

__all__ = ["Registry", "Plugin", "PluginError", "DuplicatePlugin", "PluginNotFound"]

_VERSION = re.compile(r"[0-9]+(\.[0-9]+){0,2}")


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


def parse_version(text):
    """'1.4' -> (1, 4, 0); raises ValueError for anything else than 1-3 digit groups."""
    if not isinstance(text, str) or not _VERSION.fullmatch(text):
        raise ValueError(f"malformed version {text!r}")
    parts = [int(p) for p in text.split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def _format(key):
    return ".".join(str(p) for p in key)


def _check_name(name):
    if not isinstance(name, str) or not name:
        raise ValueError(f"plugin name must be a non-empty string, got {name!r}")


def _parse_entry(entry_key, obj):
    """'name@1.2' -> (name, version tuple, obj, priority); raises ValueError when malformed."""
    name, sep, version = entry_key.rpartition("@")
    if not sep:
        name, version = entry_key, "0"
    _check_name(name)
    priority = getattr(obj, "priority", 0)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise ValueError(f"priority of {entry_key!r} must be an int")
    return name, parse_version(version), obj, priority


class Registry:
    def __init__(self):
        self._by_name = {}      # name -> {version tuple: Plugin}

    def register(self, name, version, obj, priority=0, replace=False):
        _check_name(name)
        key = parse_version(version)
        versions = self._by_name.setdefault(name, {})
        if key in versions and not replace:
            raise DuplicatePlugin(f"{name} {_format(key)} is already registered")
        plugin = Plugin(name, _format(key), obj, priority)
        versions[key] = plugin
        return plugin

    def _ordered(self, name):
        versions = self._by_name.get(name, {})
        ranked = sorted(versions.items(), key=lambda kv: (-kv[1].priority, kv[0]), reverse=True)
        return [(key, plugin) for key, plugin in ranked]

    def get(self, name, major=None):
        for key, plugin in self._ordered(name):
            if major is None or key[0] == major:
                return plugin.obj
        raise PluginNotFound(f"no plugin {name!r}" + ("" if major is None else f" with major {major}"))

    def get_exact(self, name, version):
        key = parse_version(version)
        try:
            return self._by_name[name][key].obj
        except KeyError:
            raise PluginNotFound(f"no plugin {name!r} at version {_format(key)}") from None

    def plugins(self, name):
        return [plugin for _, plugin in self._ordered(name)]

    def versions(self, name):
        return [_format(key) for key in sorted(self._by_name.get(name, {}))]

    def names(self):
        return sorted(name for name, versions in self._by_name.items() if versions)

    def unregister(self, name, version=None):
        versions = self._by_name.get(name, {})
        if version is None:
            removed = len(versions)
            versions.clear()
        else:
            key = parse_version(version)
            removed = 1 if versions.pop(key, None) is not None else 0
        if not removed:
            raise PluginNotFound(f"nothing registered for {name!r}")
        return removed

    def discover(self, entry_points):
        # Parse every key before registering anything, so a bad key leaves the registry as it was.
        parsed = [_parse_entry(k, obj) for k, obj in entry_points.items()]
        added = []
        for name, key, obj, priority in parsed:
            if key in self._by_name.get(name, {}):
                continue
            self.register(name, _format(key), obj, priority)
            added.append(f"{name}@{_format(key)}")
        return added
