"""Plain-text table rendering with per-column alignment and truncation."""

__all__ = ["render_table"]

ELLIPSIS = "\u2026"
_WHITESPACE = str.maketrans({"\n": " ", "\r": " ", "\t": " "})


def _cell_text(cell, max_width):
    text = "" if cell is None else str(cell)
    text = text.translate(_WHITESPACE)
    if max_width is not None and len(text) > max_width:
        text = text[: max_width - 1] + ELLIPSIS
    return text


def _pad(text, width, how):
    gap = width - len(text)
    if how == "r":
        return " " * gap + text
    if how == "c":
        left = gap // 2
        return " " * left + text + " " * (gap - left)
    return text + " " * gap


def _check_options(columns, align, max_width):
    if align is None:
        align = "l" * columns
    if not isinstance(align, str) or len(align) != columns or set(align) - set("lrc"):
        raise ValueError(f"align must be {columns} characters from 'l', 'r', 'c', got {align!r}")
    if max_width is not None:
        if isinstance(max_width, bool) or not isinstance(max_width, int) or max_width < 1:
            raise ValueError(f"max_width must be an int >= 1, got {max_width!r}")
    return align


def render_table(headers, rows, align=None, max_width=None):
    columns = len(headers)
    if columns == 0:
        raise ValueError("a table needs at least one column")
    align = _check_options(columns, align, max_width)
    for index, row in enumerate(rows):
        if len(row) != columns:
            raise ValueError(f"row {index} has {len(row)} cells, expected {columns}")

    grid = [[_cell_text(cell, max_width) for cell in row] for row in [headers, *rows]]
    widths = [max(len(line[i]) for line in grid) for i in range(columns)]

    def rule(char):
        return "+" + "+".join(char * (w + 2) for w in widths) + "+"

    def line(cells):
        padded = (_pad(text, widths[i], align[i]) for i, text in enumerate(cells))
        return "|" + "|".join(f" {text} " for text in padded) + "|"

    out = [rule("-"), line(grid[0]), rule("==")]
    out.extend(line(cells) for cells in grid[1:])
    out.append(rule("-"))
    return "\n".join(out)
