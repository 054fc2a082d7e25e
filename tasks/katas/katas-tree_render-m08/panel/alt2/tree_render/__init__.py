"""Tree rendering as a recursive generator of lines."""
from collections.abc import Mapping

__all__ = ["render"]

_BRANCH = ("\u251c\u2500\u2500 ", "\u2502   ")
_LAST = ("\u2514\u2500\u2500 ", "    ")


def _verify(node_map, path="children"):
    if not isinstance(node_map, Mapping):
        raise TypeError(f"{path} is not a mapping")
    for key, sub in node_map.items():
        if not isinstance(key, str):
            raise TypeError(f"{path}: key {key!r} is not a str")
        if sub is not None:
            _verify(sub, f"{path}/{key}")


def _arrange(node_map, by_name, dirs_first):
    keys = sorted(node_map, key=lambda k: (k.lower(), k)) if by_name else list(node_map)
    if dirs_first:
        keys = sorted(keys, key=lambda k: 0 if node_map[k] is not None else 1)
    return keys


def _lines(node_map, prefix, depth, limit, by_name, dirs_first):
    keys = _arrange(node_map, by_name, dirs_first)
    for pos, key in enumerate(keys):
        sub = node_map[key]
        connector, extension = _LAST if pos == len(keys) - 1 else _BRANCH
        if sub is None:
            yield prefix + connector + key
            continue
        folded = limit is not None and depth >= limit
        yield prefix + connector + key + "/" + (f" [+{len(sub)}]" if folded and sub else "")
        if not folded:
            yield from _lines(sub, prefix + extension, depth + 1, limit, by_name, dirs_first)


def render(root, children, *, sort=None, branches_first=False, max_depth=None):
    if sort not in (None, "name"):
        raise ValueError(f"unsupported sort {sort!r}")
    if max_depth is not None:
        if not isinstance(max_depth, int) or isinstance(max_depth, bool):
            raise TypeError(f"max_depth={max_depth!r}")
        if max_depth < 0:
            raise ValueError(f"max_depth={max_depth!r}")
    _verify(children)
    if max_depth == 0:
        return str(root) + (f" [+{len(children)}]" if children else "")
    body = _lines(children, "", 1, max_depth, sort == "name", branches_first)
    return "\n".join([str(root), *body])
