"""Table rendering built on format-spec alignment ('<', '>', '^' centre extra space right)."""
import re

__all__ = ["render_table"]

_SPEC = {"l": "<", "r": ">", "c": "^"}


def _clean(value):
    text = "" if value is None else str(value)
    return re.sub(r"[\n\r\t]", " ", text)


def _clip(text, limit):
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "\u2026"


def render_table(headers, rows, align=None, max_width=None):
    n = len(headers)
    if n == 0:
        raise ValueError("no columns")
    align = "l" * n if align is None else align
    if not isinstance(align, str) or not re.fullmatch(r"[lrc]{%d}" % n, align):
        raise ValueError("bad align")
    if max_width is not None and (type(max_width) is not int or max_width < 1):
        raise ValueError("bad max_width")
    table = []
    for cells in [headers] + list(rows):
        if len(cells) != n:
            raise ValueError("row length mismatch")
        table.append([_clip(_clean(c), max_width) for c in cells])
    widths = [max(len(r[i]) for r in table) for i in range(n)]
    border = "+" + "".join("-" * (w + 2) + "+" for w in widths)
    double = border.replace("-", "=")
    lines = [border]
    for k, r in enumerate(table):
        lines.append("|" + "".join(f" {r[i]:{_SPEC[align[i]]}{widths[i]}} |" for i in range(n)))
        if k == 0:
            lines.append(double)
    lines.append(border)
    return "\n".join(lines)
