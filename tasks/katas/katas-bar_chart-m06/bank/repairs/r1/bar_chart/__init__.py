"""Horizontal text bar charts."""
import math
from collections.abc import Mapping

__all__ = ["render"]

BLOCK = "\u2588"
AXIS = "\u2502"
RULE = "\u2500"
SORTS = (None, "value", "label")


def _rows(data):
    pairs = data.items() if isinstance(data, Mapping) else data
    rows = []
    for label, value in pairs:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"value for {label!r} must be a number, not {type(value).__name__}")
        if not math.isfinite(value) or value < 0 or not value:
            raise ValueError(f"value for {label!r} must be finite and non-negative, got {value!r}")
        rows.append((str(label), value))
    return rows


def _cells(value, top, width):
    if top == 0:
        return 0
    cells = math.floor(value * width / top + 0.5)
    if value > 0 and cells == 0:
        cells = 1  # keep tiny but non-zero values visible
    return cells


def render(data, *, width=40, sort=None, fmt="{:g}", title=None):
    if isinstance(width, bool) or not isinstance(width, int):
        raise TypeError("width must be an int")
    if width < 1:
        raise ValueError("width must be at least 1")
    if sort not in SORTS:
        raise ValueError(f"sort must be one of {SORTS}, got {sort!r}")
    rows = _rows(data)
    if sort == "value":
        rows.sort(key=lambda row: row[1], reverse=True)
    elif sort == "label":
        rows.sort(key=lambda row: row[0])
    format_value = fmt if callable(fmt) else fmt.format
    lines = []
    if title is not None:
        lines += [title, RULE * len(title)]
    if rows:
        label_width = max(len(label) for label, _ in rows)
        top = max(value for _, value in rows)
        for label, value in rows:
            bar = BLOCK * _cells(value, top, width)
            lines.append(f"{label.ljust(label_width)} {AXIS}{bar} {format_value(value)}")
    return "\n".join(lines)
