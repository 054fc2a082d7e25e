"""Bar chart built from row records, laid out with str.format field widths."""
import math
from dataclasses import dataclass

__all__ = ["render"]


@dataclass(frozen=True)
class Row:
    position: int
    label: str
    value: float


def _validate(width, sort):
    if not isinstance(width, int) or isinstance(width, bool):
        raise TypeError("width should be an integer")
    if width <= 0:
        raise ValueError("width should be positive")
    if sort not in {None, "value", "label"}:
        raise ValueError("sort should be None, 'value' or 'label'")


def _collect(data):
    source = list(data.items()) if isinstance(data, dict) or hasattr(data, "keys") else list(data)
    rows = []
    for i, (label, value) in enumerate(source):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"row {i}: value is not numeric")
        if math.isnan(value) or math.isinf(value) or value < 0:
            raise ValueError(f"row {i}: value out of range")
        rows.append(Row(i, str(label), value))
    return rows


def render(data, *, width=40, sort=None, fmt="{:g}", title=None):
    _validate(width, sort)
    rows = _collect(data)
    if sort == "value":
        rows.sort(key=lambda r: (-r.value, r.position))
    elif sort == "label":
        rows.sort(key=lambda r: (r.label, r.position))
    out = []
    if title is not None:
        out.append(title)
        out.append("\u2500" * len(title))
    if rows:
        longest = max(len(r.label) for r in rows)
        peak = max(r.value for r in rows)
        show = fmt if callable(fmt) else (lambda v: fmt.format(v))
        for r in rows:
            cells = 0 if peak == 0 else int(r.value * width / peak + 0.5)
            if cells == 0 and r.value > 0:
                cells = 1
            out.append("{0:<{1}} \u2502{2} {3}".format(r.label, longest, "\u2588" * cells, show(r.value)))
    return "\n".join(out)
