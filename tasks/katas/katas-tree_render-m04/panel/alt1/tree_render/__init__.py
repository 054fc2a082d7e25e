"""Tree rendering with an explicit stack instead of recursion."""
from collections.abc import Mapping

__all__ = ["render"]


def _check(children):
    pending = [children]
    while pending:
        level = pending.pop()
        if not isinstance(level, Mapping):
            raise TypeError("expected a mapping of children")
        for name, node in level.items():
            if not isinstance(name, str):
                raise TypeError("names have to be strings")
            if node is not None:
                if not isinstance(node, Mapping):
                    raise TypeError(f"bad node under {name!r}")
                pending.append(node)


def _order(level, sort, branches_first):
    names = list(level.keys())
    if sort == "name":
        names = sorted(names, key=lambda n: (n.lower(), n))
    if branches_first:
        names = [n for n in names if level[n] is not None] + [n for n in names if level[n] is None]
    return names


def render(root, children, *, sort=None, branches_first=False, max_depth=None):
    if sort is not None and sort != "name":
        raise ValueError("sort: None or 'name'")
    if max_depth is not None and (type(max_depth) is bool or not isinstance(max_depth, int)):
        raise TypeError("max_depth: int or None")
    if max_depth is not None and max_depth < 0:
        raise ValueError("max_depth: >= 0")
    _check(children)
    limit = float("inf") if max_depth is None else max_depth
    head = str(root)
    if limit == 0 and children:
        head += f" [+{len(children)}]"
    out = [head]
    if limit == 0:
        return "\n".join(out)
    # stack entries: (level mapping, ordered names, next index, prefix, depth)
    stack = [(children, _order(children, sort, branches_first), 0, "", 1)]
    while stack:
        level, names, i, prefix, depth = stack.pop()
        if i >= len(names):
            continue
        stack.append((level, names, i + 1, prefix, depth))
        name = names[i]
        node = level[name]
        last = i == len(names) - 1
        text = name
        if node is not None:
            text += "/"
            if depth == limit and node:
                text += f" [+{len(node)}]"
        out.append(prefix + ("\u2514\u2500\u2500 " if last else "\u251c\u2500\u2500 ") + text)
        if node is not None and depth < limit:
            stack.append((node, _order(node, sort, branches_first), 0,
                          prefix + ("    " if last else "\u2502   "), depth + 1))
    return "\n".join(out)
