"""Closing summaries that fit the output: prose wrapped at word boundaries, table rows clipped.

A long command's last lines are what a log keeps, so when standard output is not a terminal (CI, a
pipe, `tee`), every line fits `LOG_WIDTH` columns; on a terminal the terminal's width is used. Prose
is wrapped with textwrap at spaces only (never inside a word or a path; a command in backticks may
be split between its words), so a single word wider than the width is the one thing left longer. Table rows are not
re-wrapped, which would break their columns: a row too wide is cut and ends in an ellipsis.
"""

from __future__ import annotations

import shutil
import sys
import textwrap
from typing import IO

LOG_WIDTH = 80
ELLIPSIS = "…"


def output_width(stream: IO[str] | None = None) -> int:
    """LOG_WIDTH when `stream` (default: stdout) is not a terminal, else the terminal's width."""
    stream = sys.stdout if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    if isatty is None or not isatty():
        return LOG_WIDTH
    return max(20, shutil.get_terminal_size((LOG_WIDTH, 24)).columns)


def wrap(text: str, width: int, indent: str = "", hang: str = "  ") -> str:
    """Each line of `text` as a paragraph wrapped to `width`: continuation lines keep the line's
    own leading spaces plus `hang`; `indent` prefixes every line."""
    out: list[str] = []
    for line in text.splitlines() or [""]:
        lead = line[:len(line) - len(line.lstrip(" "))]
        out.extend(textwrap.wrap(line, width, initial_indent=indent, subsequent_indent=indent + lead + hang,
                                 break_long_words=False, break_on_hyphens=False) or [indent.rstrip()])
    return "\n".join(out)


def clip(row: str, width: int) -> str:
    """One table row cut to `width` columns, ending in an ellipsis when it was cut."""
    return row if len(row) <= width else row[:width - len(ELLIPSIS)] + ELLIPSIS
