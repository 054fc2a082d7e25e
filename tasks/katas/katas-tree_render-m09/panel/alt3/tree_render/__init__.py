"""Tree rendering that first converts the input into frozen node records, then prints them
using the list of 'is last sibling' flags on the path to compute each prefix."""
from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["render"]


@dataclass(frozen=True)
class Node:
    name: str
    kids: tuple  # of Node; empty for leaves and empty branches
    branch: bool


def _build(mapping):
    if not isinstance(mapping, Mapping):
        raise TypeError("a branch must be a mapping")
    nodes = []
    for name, value in mapping.items():
        if not isinstance(name, str):
            raise TypeError(f"name {name!r} is not a string")
        if value is None:
            nodes.append(Node(name, (), False))
        elif isinstance(value, Mapping):
            nodes.append(Node(name, _build(value), True))
        else:
            raise TypeError(f"{name!r}: expected mapping or None")
    return tuple(nodes)


def _arranged(nodes, sort, branches_first):
    nodes = list(nodes)
    if sort == "name":
        nodes.sort(key=lambda n: n.name)
        nodes.sort(key=lambda n: n.name.lower())
    if branches_first:
        nodes.sort(key=lambda n: not n.branch)
    return nodes


def _emit(nodes, flags, depth, cfg, out):
    ordered = _arranged(nodes, cfg["sort"], cfg["first"])
    for i, node in enumerate(ordered):
        is_last = i + 1 == len(ordered)
        prefix = "".join("    " if f else "\u2502   " for f in flags)
        label = node.name + ("/" if node.branch else "")
        hidden = cfg["limit"] is not None and depth == cfg["limit"]
        if node.branch and hidden and node.kids:
            label += " [+%d]" % len(node.kids)
        out.append(prefix + ("\u2514\u2500\u2500 " if is_last else "\u251c\u2500\u2500 ") + label)
        if node.branch and not hidden:
            _emit(node.kids, flags + [is_last], depth + 1, cfg, out)


def render(root, children, *, sort=None, branches_first=False, max_depth=None):
    if sort not in (None, "name"):
        raise ValueError("sort must be None or 'name'")
    if max_depth is not None:
        if isinstance(max_depth, bool) or not isinstance(max_depth, int):
            raise TypeError("max_depth must be int")
        if max_depth < 0:
            raise ValueError("max_depth must be >= 0")
    top = _build(children)
    first = str(root)
    if max_depth == 0:
        return first + (" [+%d]" % len(top) if top else "")
    out = [first]
    _emit(top, [], 1, {"sort": sort, "first": branches_first, "limit": max_depth}, out)
    return "\n".join(out)
