"""Tree rendering by bottom-up composition: each subtree is rendered to its own lines, and the
parent indents them, putting the connector on the first line and the continuation on the rest."""
from collections.abc import Mapping

__all__ = ["render"]


def _is_branch(value):
    if value is None:
        return False
    if isinstance(value, Mapping):
        return True
    raise TypeError(f"unexpected node value {value!r}")


def _validate_all(children):
    for name, value in children.items():
        if not isinstance(name, str):
            raise TypeError(f"unexpected node name {name!r}")
        if _is_branch(value):
            _validate_all(value)


def _sequence(children, sort, branches_first):
    keys = list(children)
    if sort == "name":
        keys.sort(key=lambda k: (k.lower(), k))
    if branches_first:
        branches = [k for k in keys if children[k] is not None]
        leaves = [k for k in keys if children[k] is None]
        keys = branches + leaves
    return keys


def _subtree(name, value, depth, opts):
    """Lines for one node and everything shown below it (no prefix yet)."""
    if value is None:
        return [name]
    limit = opts[2]
    if limit is not None and depth >= limit:
        return [name + "/" + (f" [+{len(value)}]" if value else "")]
    return [name + "/"] + _children_lines(value, depth, opts)


def _children_lines(children, depth, opts):
    keys = _sequence(children, opts[0], opts[1])
    lines = []
    for i, key in enumerate(keys):
        block = _subtree(key, children[key], depth + 1, opts)
        last = i == len(keys) - 1
        lines.append(("\u2514\u2500\u2500 " if last else "\u251c\u2500\u2500 ") + block[0])
        lines.extend(("    " if last else "\u2502   ") + line for line in block[1:])
    return lines


def render(root, children, *, sort=None, branches_first=False, max_depth=None):
    if sort not in (None, "name"):
        raise ValueError("sort must be None or 'name'")
    if max_depth is not None and (isinstance(max_depth, bool) or not isinstance(max_depth, int)):
        raise TypeError("max_depth must be an int")
    if max_depth is not None and max_depth < 0:
        raise ValueError("max_depth must be >= 0")
    if not isinstance(children, Mapping):
        raise TypeError("children must be a mapping")
    _validate_all(children)
    if max_depth == 0:
        return f"{root} [+{len(children)}]" if children else str(root)
    return "\n".join([str(root)] + _children_lines(children, 0, (sort, branches_first, max_depth)))
