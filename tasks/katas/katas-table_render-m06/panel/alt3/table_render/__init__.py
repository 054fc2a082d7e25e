"""Table rendering through one str.format template per table."""

__all__ = ["render_table"]

_ARROWS = {"l": "<", "r": ">", "c": "^"}   # str.format's '^' puts the odd space on the right
_TRANS = {ord("\n"): " ", ord("\r"): " ", ord("\t"): " "}


class _Options:
    def __init__(self, columns, align, max_width):
        if align is None:
            align = "l" * columns
        if not isinstance(align, str) or len(align) != columns or not all(a in _ARROWS for a in align):
            raise ValueError(f"invalid align {align!r}")
        if max_width is not None and (isinstance(max_width, bool) or not isinstance(max_width, int)
                                      or max_width < 1):
            raise ValueError(f"invalid max_width {max_width!r}")
        self.align = align
        self.max_width = max_width

    def text(self, cell):
        s = "" if cell is None else str(cell).translate(_TRANS)
        if self.max_width is not None and len(s) > self.max_width:
            s = s[: self.max_width - 1] + "\N{HORIZONTAL ELLIPSIS}"
        return s


def render_table(headers, rows, align=None, max_width=None):
    if len(headers) < 1:
        raise ValueError("need at least one header")
    opts = _Options(len(headers), align, max_width)
    matrix = [[opts.text(h) for h in headers]]
    for r in rows:
        if len(r) != len(headers):
            raise ValueError("row does not match headers")
        matrix.append([opts.text(c) for c in r])
    widths = [max(len(row[i]) for row in matrix) for i in range(len(headers))]
    template = "|" + "|".join(" {:%s%d} " % (_ARROWS[a], w) for a, w in zip(opts.align, widths)) + "|"
    rule = "+{}+".format("+".join("-" * (w + 2) for w in widths))
    header_rule = rule.replace("-", "=")
    rendered = [template.format(*row) for row in matrix]
    return "\n".join([rule, rendered[0], header_rule] + rendered[1:] + [rule])
