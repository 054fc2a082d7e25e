"""Bar chart that scales each value as (value / max) * width and pads labels by hand."""
import math
from collections.abc import Mapping

__all__ = ["render"]


class _Chart:
    def __init__(self, width, fmt):
        self.width = width
        self.fmt = fmt

    def text(self, value):
        if callable(self.fmt):
            return self.fmt(value)
        return self.fmt.format(value)

    def length(self, value, peak):
        if peak <= 0:
            return 0
        exact = value / peak * self.width
        n = int(math.floor(exact + 0.5))
        return 1 if (n < 1 and value > 0) else n


def render(data, *, width=40, sort=None, fmt="{:g}", title=None):
    if isinstance(width, bool) or not isinstance(width, int):
        raise TypeError(f"width={width!r} is not an int")
    if width < 1:
        raise ValueError(f"width={width!r} is too small")
    if sort not in (None, "value", "label"):
        raise ValueError(f"sort={sort!r} is not supported")
    source = data.items() if isinstance(data, Mapping) else data
    labels, values = [], []
    for label, value in source:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"{label!r}: {value!r} is not a number")
        if not (0 <= value < math.inf):
            raise ValueError(f"{label!r}: {value!r} is negative or not finite")
        labels.append(str(label))
        values.append(value)
    index = list(range(len(labels)))
    if sort == "value":
        index.sort(key=lambda i: values[i], reverse=True)
    elif sort == "label":
        index.sort(key=lambda i: labels[i])
    chart = _Chart(width, fmt)
    result = [] if title is None else [title, "\u2500" * len(title)]
    if index:
        pad = max(len(labels[i]) for i in index)
        peak = max(values)
        for i in index:
            name = labels[i] + " " * (pad - len(labels[i]))
            result.append(name + " \u2502" + "\u2588" * chart.length(values[i], peak) + " " + chart.text(values[i]))
    return "\n".join(result)
