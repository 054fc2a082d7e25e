"""Table rendering that works column by column, then zips the padded columns into lines."""

__all__ = ["render_table"]


def _text(cell):
    if cell is None:
        return ""
    out = str(cell)
    for ch in "\n\r\t":
        out = out.replace(ch, " ")
    return out


def _shorten(text, limit):
    if limit is not None and len(text) > limit:
        return text[:limit - 1] + "…"
    return text


def _justify(text, width, mode):
    spare = width - len(text)
    if mode == "l":
        return text + " " * spare
    if mode == "r":
        return " " * spare + text
    before = spare // 2
    return " " * before + text + " " * (spare - before)


def render_table(headers, rows, align=None, max_width=None):
    ncols = len(headers)
    if not ncols:
        raise ValueError("headers must not be empty")
    if align is None:
        align = "l" * ncols
    elif type(align) is not str or len(align) != ncols or any(a not in "lrc" for a in align):
        raise ValueError("align")
    if max_width is not None:
        if isinstance(max_width, bool) or not isinstance(max_width, int) or max_width <= 0:
            raise ValueError("max_width")
    rows = [list(r) for r in rows]
    if any(len(r) != ncols for r in rows):
        raise ValueError("ragged rows")
    columns = []
    for c in range(ncols):
        texts = [_shorten(_text(v), max_width) for v in [headers[c]] + [r[c] for r in rows]]
        width = max(map(len, texts))
        columns.append((width, [_justify(t, width, align[c]) for t in texts]))
    body_lines = ["| " + " | ".join(parts) + " |" for parts in zip(*(cells for _, cells in columns))]
    dash = "+" + "+".join("-" * (w + 2) for w, _ in columns) + "+"
    equals = "+" + "+".join("=" * (w + 2) for w, _ in columns) + "+"
    return "\n".join([dash, body_lines[0], equals, *body_lines[1:], dash])
