"""Word wrapping as a generator pipeline: paragraphs -> pieces -> lines."""
import re

_BLANK_LINE = re.compile(r"^\s*$")


def _paragraphs(text):
    words = []
    for line in text.split("\n"):
        if _BLANK_LINE.match(line):
            if words:
                yield words
                words = []
        else:
            words.extend(line.split())
    if words:
        yield words


def _lines(words, width, first, rest, breaking):
    prefix = first
    current = None            # words of the line being built, None when no line is open

    def room():
        return width - len(prefix)

    for word in words:
        if current is not None:
            if len(" ".join(current)) + 1 + len(word) <= room():
                current.append(word)
                continue
            yield prefix + " ".join(current)
            prefix, current = rest, None
        if len(word) > room():
            if not breaking:
                yield prefix + word
                prefix = rest
                continue
            while len(word) > room():
                yield prefix + word[:room()]
                word = word[room():]
                prefix = rest
        current = [word]
    if current is not None:
        yield prefix + " ".join(current)


def wrap(text, width, *, indent="", subsequent_indent=None, break_long_words=True):
    if not isinstance(text, str):
        raise TypeError("wrap() text must be a string")
    if isinstance(width, bool) or not isinstance(width, int) or width < 1:
        raise ValueError("wrap() width must be an int of at least 1")
    rest = indent if subsequent_indent is None else subsequent_indent
    if len(indent) >= width or len(rest) >= width:
        raise ValueError("indentation is as wide as the width")
    out = []
    for n, words in enumerate(_paragraphs(text)):
        if n:
            out.append("")
        out.extend(_lines(words, width, indent, rest, break_long_words))
    return out


def fill(text, width, **options):
    return "\n".join(wrap(text, width, **options))
