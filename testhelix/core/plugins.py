"""One way to find a plug-in object: a built-in name, a dotted path, or an installed entry point.

Every registry of the project (model providers, sandboxes, executors, GTDD domains) resolves the
text a user typed with `load_plugin`:

- a built-in name, mapped by the registry to the `package.module:OBJECT` path that holds it (so
  importing a registry stays cheap: nothing is imported until it is asked for),
- a dotted path `package.module:OBJECT` (an object that lives outside the project), or
- the name of an entry point in the registry's group (an installed package that declares one in
  its `pyproject.toml`, e.g. `[project.entry-points."testhelix.executors"] mine = "pkg.mod:Factory"`).

A name that is none of these, or a path that does not import, is a UserError (exit code 2) naming
the option and the value, never a traceback. Importing a plug-in runs its author's code: whatever
that code raises (a syntax error, an exception at import, source that is not UTF-8, a recursion in
an attribute lookup, even `sys.exit()`) is reported the same way, in one line naming the plug-in.
"""

from __future__ import annotations

import functools
import importlib
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from testhelix.core.errors import UserError

# The entry-point groups the project reads (one per registry, and one through which a package
# teaches the simulated models to answer its own requests).
PROVIDERS_GROUP = "testhelix.providers"
SANDBOXES_GROUP = "testhelix.sandboxes"
EXECUTORS_GROUP = "testhelix.executors"
DOMAINS_GROUP = "gtdd.domains"
# Not a registry a user names things from: every role installed here is loaded (testhelix/llm/sim/contributed.py).
SIMULATED_ROLES_GROUP = "testhelix.simulated_roles"
STORE_SCHEMAS_GROUP = "testhelix.store_schemas"   # each package's run-store tables and run kinds (migrations.py)
VIEW_SECTIONS_GROUP = "testhelix.view_sections"   # parts of `testhelix view` drawn by a package (view/contributed.py)


def is_dotted_path(spec: str) -> bool:
    return ":" in spec


def group_entry_points(group: str) -> list[Any]:
    """Every installed entry point of `group` (also for a registry that loads all of them)."""
    # Imported here: fork servers and zygotes load built-in sandboxes without scanning metadata.
    from importlib.metadata import entry_points
    return list(entry_points(group=group))


def entry_point_names(group: str) -> list[str]:
    return sorted({ep.name for ep in group_entry_points(group)})


def describe_failure(err: BaseException) -> str:
    """`SyntaxError: invalid syntax (mod.py, line 3)`: the error's type and first line, short."""
    text = " ".join(str(err).split())[:300]
    if isinstance(err, SystemExit):
        return f"it called sys.exit({err.code!r})"
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def run_plugin_code(option: str, spec: str, doing: str, action: Callable[[], Any]) -> Any:
    """`action()` (a plug-in author's code: an import, an attribute lookup, a constructor); whatever
    it raises, SystemExit and RecursionError included, becomes one UserError naming the plug-in.
    KeyboardInterrupt still stops the command."""
    try:
        return action()
    except UserError:
        raise
    except (Exception, SystemExit) as err:  # noqa: BLE001 - a plug-in's fault is reported, never a traceback
        raise UserError(f"{option} {spec!r}: {doing} failed ({describe_failure(err)})") from None


def load_dotted(path: str, *, option: str, spec: str, default_attr: str | None = None) -> Any:
    """The object `package.module:OBJECT` names (OBJECT may be `a.b` for a nested attribute)."""
    module_name, _, attr = path.partition(":")
    attr = attr or default_attr or ""
    if not module_name or not attr:
        raise UserError(f"{option} {spec!r}: expected package.module:OBJECT")
    if module_name.startswith(".") or not all(part.isidentifier() for part in module_name.split(".")):
        raise UserError(f"{option} {spec!r}: {module_name!r} is not an absolute module name "
                        "(expected package.module:OBJECT, e.g. mypkg.sandboxes:MySandbox)")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UserError(f"{option} {spec!r}: cannot import {module_name!r} ({exc})") from None
    except (Exception, SystemExit) as err:  # noqa: BLE001 - the plug-in's own code failed while importing
        raise UserError(f"{option} {spec!r}: cannot import {module_name!r} ({describe_failure(err)})") from None
    obj: Any = module
    for part in attr.split("."):
        obj = run_plugin_code(option, spec, f"looking up {attr!r} in {module_name}",
                              functools.partial(getattr, obj, part, _MISSING))
        if obj is _MISSING:
            raise UserError(f"{option} {spec!r}: {module_name} has no attribute {attr!r}")
    return obj


_MISSING = object()


def load_plugin(spec: str, *, group: str, builtins: Mapping[str, Any], option: str, what: str,
                default_attr: str | None = None) -> Any:
    """Resolve `spec` as a built-in name, a `package.module:OBJECT` path or an entry point of `group`.
    A built-in is a dotted path to import on first use, or the object itself (the model registry's
    providers)."""
    if spec in builtins:
        found = builtins[spec]
        return load_dotted(found, option=option, spec=spec) if isinstance(found, str) else found
    if is_dotted_path(spec):
        return load_dotted(spec, option=option, spec=spec, default_attr=default_attr)
    found = [ep for ep in group_entry_points(group) if ep.name == spec]
    if not found:
        known = sorted(builtins) + [n for n in entry_point_names(group) if n not in builtins]
        raise UserError(f"{option}: unknown {what} {spec!r}; known: {', '.join(known) or 'none'}, or give "
                        f"package.module:OBJECT, or install a package with a {group} entry point")
    return run_plugin_code(option, spec, f"loading the {group} entry point {found[0].value!r}", found[0].load)


def check_callable(obj: Any, *, option: str, spec: str, what: str, **arguments: Any) -> None:
    """Refuse, when it is loaded, a plug-in that cannot be called the way its registry will call it
    (e.g. `--executor os:getcwd`, which is callable but takes no `workers`), instead of a TypeError
    deep inside a run. Objects whose signature Python cannot tell (some builtins) pass."""
    import inspect

    if not callable(obj):
        raise UserError(f"{option} {spec!r}: {obj!r} is not callable (expected {what})")
    try:
        signature = inspect.signature(obj)
    except (TypeError, ValueError):
        return
    try:
        signature.bind(**arguments)
    except TypeError as err:
        shown = ", ".join(f"{k}=" for k in arguments) or "no arguments"
        raise UserError(f"{option} {spec!r}: {getattr(obj, '__qualname__', obj)!r} is not {what}: it cannot be "
                        f"called with ({shown}): {err}") from None


def protocol_members(protocol: type) -> tuple[str, ...]:
    """The public members a `typing.Protocol` declares (annotated attributes, methods, properties), in
    declaration order, own class first: the one list a loaded plug-in is checked against, so no
    registry keeps a copy of it by hand."""
    names: list[str] = []
    for cls in protocol.__mro__:
        if not vars(cls).get("_is_protocol", False) or cls.__module__ == "typing":
            continue
        for name in [*vars(cls).get("__annotations__", {}), *vars(cls)]:
            if not name.startswith("_") and name not in names:
                names.append(name)
    return tuple(names)


def missing_members(obj: Any, protocol: type) -> list[str]:
    """The members of `protocol` that `obj` lacks (a plug-in is checked once, when it is loaded)."""
    return [name for name in protocol_members(protocol) if not _has(obj, name)]


def _has(obj: Any, name: str) -> bool:
    """hasattr, where an attribute lookup that fails in any other way (a plug-in's __getattr__ that
    recurses or raises) counts as the member missing, not as a traceback."""
    try:
        return hasattr(obj, name)
    except Exception:  # noqa: BLE001 - the plug-in's lookup is broken: the member is not there
        return False


def import_root(obj: Any) -> str | None:
    """The sys.path entry `obj`'s top-level package was imported from, so a child process (a fork
    server) can import the same plug-in; None for the project's own objects."""
    module_name = getattr(obj, "__module__", None) or getattr(type(obj), "__module__", None) or ""
    top = sys.modules.get(module_name.partition(".")[0])
    file = getattr(top, "__file__", None)
    if not file or module_name.startswith(("testhelix.", "gtdd.", "autosaddler.")):
        return None
    path = Path(file).resolve()
    return str(path.parent.parent if path.name == "__init__.py" else path.parent)
