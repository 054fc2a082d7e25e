"""Render nested mappings as box-drawing trees."""
from collections.abc import Mapping

__all__ = ["render"]

TEE, ELBOW = "\u251c\u2500\u2500 ", "\u2514\u2500\u2500 "
PIPE, BLANK = "\u2502   ", "    "


def _validate(children):
    if not isinstance(children, Mapping):
        raise TypeError(f"children must be a mapping, not {type(children).__name__}")
    for name, node in children.items():
        if not isinstance(name, str):
            raise TypeError(f"node names must be str, got {name!r}")
        if node is not None:
            if not isinstance(node, Mapping):
                raise TypeError(f"node {name!r} must be a mapping or None, not {type(node).__name__}")
            _validate(node)


def _ordered(children, sort, branches_first):
    names = list(children)
    if sort == "name":
        names.sort(key=lambda name: (name.lower(), name))
    if branches_first:
        # sorted() is stable, so each group keeps the order chosen above.
        names.sort(key=lambda name: children[name] is None)
    return names


def _suffix(node, depth, max_depth):
    if max_depth is not None and depth == max_depth and len(node) > 0:
        return f" [+{len(node)}]"
    return ""


def _walk(children, prefix, depth, options, lines):
    names = _ordered(children, options["sort"], options["branches_first"])
    for index, name in enumerate(names):
        node = children[name]
        last = index == len(names) - 1
        label = name if node is None else name + "/"
        if node is not None:
            label += _suffix(node, depth, options["max_depth"])
        lines.append(prefix + (ELBOW if last else TEE) + label)
        if node is not None and (options["max_depth"] is None or depth < options["max_depth"]):
            _walk(node, prefix + (BLANK if last else PIPE), depth + 1, options, lines)


def render(root, children, *, sort=None, branches_first=False, max_depth=None):
    if sort not in (None, "name"):
        raise ValueError(f"sort must be None or 'name', got {sort!r}")
    if max_depth is not None:
        if isinstance(max_depth, bool) or not isinstance(max_depth, int):
            raise TypeError("max_depth must be an int or None")
        if max_depth < 0:
            raise ValueError("max_depth must not be negative")
    _validate(children)
    lines = [str(root) + _suffix(children, 0, max_depth)]
    if max_depth is None or max_depth > 0:
        options = {"sort": sort, "branches_first": branches_first, "max_depth": max_depth}
        _walk(children, "", 1, options, lines)
    return "\n".join(lines)
