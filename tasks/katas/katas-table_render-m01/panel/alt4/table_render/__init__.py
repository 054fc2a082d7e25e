"""Table rendering with ljust/rjust and explicit centring (str.center puts odd space left)."""

__all__ = ["render_table"]


def _prepare(value, limit):
    text = "" if value is None else str(value)
    text = "".join(" " if ch in "\n\r\t" else ch for ch in text)
    if limit and len(text) > limit:
        text = text[: limit - 1] + "\u2026"
    return text


def _fit(text, width, mode):
    if mode == "r":
        return text.rjust(width)
    if mode == "l":
        return text.ljust(width)
    left = (width - len(text)) // 2
    return (" " * left + text).ljust(width)


def render_table(headers, rows, align=None, max_width=None):
    count = len(headers)
    if count == 0:
        raise ValueError("empty headers")
    modes = align if align is not None else "l" * count
    if not isinstance(modes, str) or len(modes) != count or modes.strip("lrc"):
        raise ValueError("align must use l, r, c once per column")
    if max_width is not None and not (type(max_width) is int and max_width >= 1):
        raise ValueError("max_width must be a positive int")
    grid = [[_prepare(h, max_width) for h in headers]]
    for row in rows:
        try:
            grid.append([_prepare(cell, max_width) for _, cell in zip(headers, row, strict=True)])
        except ValueError:
            raise ValueError("every row needs one cell per header") from None
    widths = [0] * count
    for cells in grid:
        for i, text in enumerate(cells):
            widths[i] = max(widths[i], len(text))

    def border(fill):
        return "+" + "".join(fill * (w + 2) + "+" for w in widths)

    def render(cells):
        return "|" + "".join(" " + _fit(t, widths[i], modes[i]) + " |" for i, t in enumerate(cells))

    lines = [border("-"), render(grid[0]), border("=")]
    for cells in grid[1:]:
        lines.append(render(cells))
    lines.append(border("-"))
    return "\n".join(lines)
