"""Bar chart whose bar lengths are computed exactly with fractions (no float rounding)."""
import math
from fractions import Fraction

__all__ = ["render"]


def _pairs(data):
    items = data.items() if hasattr(data, "items") else data
    out = []
    for label, value in items:
        if type(value) is bool or not isinstance(value, (int, float)):
            raise TypeError(f"not a number: {value!r}")
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"not finite: {value!r}")
        if value < 0:
            raise ValueError(f"negative: {value!r}")
        out.append([str(label), value])
    return out


def render(data, *, width=40, sort=None, fmt="{:g}", title=None):
    if type(width) is bool or not isinstance(width, int):
        raise TypeError("width: int required")
    if width < 1:
        raise ValueError("width: must be >= 1")
    if sort is not None and sort != "value" and sort != "label":
        raise ValueError(f"unknown sort {sort!r}")
    rows = _pairs(data)
    if sort == "value":
        rows = sorted(rows, key=lambda r: -r[1])
    elif sort == "label":
        rows = sorted(rows, key=lambda r: r[0])
    head = [] if title is None else [title, "\u2500" * len(title)]
    if not rows:
        return "\n".join(head)
    biggest = Fraction(max(r[1] for r in rows))
    pad = max(len(r[0]) for r in rows)
    body = []
    for label, value in rows:
        if biggest == 0:
            n = 0
        else:
            n = math.floor(Fraction(value) * width / biggest + Fraction(1, 2))
            n = max(n, 1) if value > 0 else n
        text = fmt(value) if callable(fmt) else fmt.format(value)
        body.append(label + " " * (pad - len(label)) + " \u2502" + "\u2588" * n + " " + text)
    return "\n".join(head + body)
