"""Bar chart rendered by a generator of lines; the scale is computed once as a ratio."""
import math

__all__ = ["render"]

_FULL = "\u2588"


def _check_value(label, value):
    if value.__class__ is bool or not isinstance(value, (int, float)):
        raise TypeError("bad value type for " + str(label))
    if value != value or value in (math.inf, -math.inf) or value < 0:
        raise ValueError("bad value for " + str(label))
    return value


def _lines(rows, width, fmt, title):
    if title is not None:
        yield title
        yield "\u2500" * len(title)
    if not rows:
        return
    label_w = max(len(l) for l, _ in rows)
    top = max(v for _, v in rows)
    to_text = fmt if callable(fmt) else fmt.format
    for label, value in rows:
        if top:
            length = math.floor(value * width / top + 0.5)
            if not length and value:
                length = 1
        else:
            length = 0
        yield f"{label:<{label_w}} \u2502{_FULL * length} {to_text(value)}"


def render(data, *, width=40, sort=None, fmt="{:g}", title=None):
    if isinstance(width, bool) or not isinstance(width, int):
        raise TypeError("width must be int")
    if width < 1:
        raise ValueError("width must be >= 1")
    try:
        items = list(data.items())
    except AttributeError:
        items = list(data)
    rows = [(str(label), _check_value(label, value)) for label, value in items]
    if sort == "value":
        order = sorted(range(len(rows)), key=lambda i: (-rows[i][1], i))
        rows = [rows[i] for i in order]
    elif sort == "label":
        order = sorted(range(len(rows)), key=lambda i: (rows[i][0], i))
        rows = [rows[i] for i in order]
    elif sort is not None:
        raise ValueError("sort: expected None, 'value' or 'label'")
    return "\n".join(_lines(rows, width, fmt, title))
