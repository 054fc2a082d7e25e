"""Greedy word wrapping with first-line and subsequent indents, paragraphs and long words."""
from __future__ import annotations

__all__ = ["fill", "wrap"]


def _paragraphs(text: str) -> list[list[str]]:
    """Word lists of the paragraphs; blank lines separate paragraphs."""
    paragraphs: list[list[str]] = []
    current: list[str] = []
    for line in text.split("\n"):
        if line.strip():
            current.extend(line.split())
        elif current:
            paragraphs.append(current)
            current = list()
    if current:
        paragraphs.append(current)
    return paragraphs


def _wrap_paragraph(words: list[str], width: int, first: str, later: str,
                    break_long_words: bool) -> list[str]:
    lines: list[str] = []
    line = ""          # text of the current line without its indent
    for word in words:
        prefix = first if not lines else later
        if line and len(prefix) + len(line) + 1 + len(word) <= width:
            line += " " + word
            continue
        if line:
            lines.append(prefix + line)
            line = ""
            prefix = later
        room = width - len(prefix)
        if len(word) <= room:
            line = word
        elif not break_long_words:
            lines.append(prefix + word)
        else:
            # Cut full pieces while the rest still does not fit on a fresh line.
            while len(word) > room:
                lines.append(prefix + word[:room])
                word = word[room:]
                prefix = later
                room = width - len(prefix)
            line = word
    if line:
        lines.append((first if not lines else later) + line)
    return lines


def wrap(text: str, width: int, *, indent: str = "", subsequent_indent: str | None = None,
         break_long_words: bool = True) -> list[str]:
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ValueError(f"width must be an int >= 1, got {width!r}")
    later = indent if subsequent_indent is None else subsequent_indent
    if len(indent) >= width or len(later) >= width:
        raise ValueError("indent leaves no room for text")
    output: list[str] = []
    for paragraph in _paragraphs(text):
        if output:
            output.append("")
        output.extend(_wrap_paragraph(paragraph, width, indent, later, break_long_words))
    return output


def fill(text: str, width: int, **options) -> str:
    return "\n".join(wrap(text, width, **options))
