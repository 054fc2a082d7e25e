"""Word wrapping that measures how many words fit using running line lengths."""
from itertools import accumulate


class _Layout:
    def __init__(self, width, indent, subsequent_indent, break_long_words):
        self.width = width
        self.first = indent
        self.rest = indent if subsequent_indent is None else subsequent_indent
        self.breaking = break_long_words

    def _how_many_fit(self, words, start, room):
        # lengths of the candidate lines words[start:start+k] for k = 1, 2, ...
        sizes = accumulate(len(w) + 1 for w in words[start:])
        count = 0
        for size in sizes:
            if size - 1 > room:
                break
            count += 1
        return count

    def paragraph(self, words):
        lines = []
        i = 0
        words = list(words)
        while i < len(words):
            prefix = self.first if not lines else self.rest
            room = self.width - len(prefix)
            k = self._how_many_fit(words, i, room)
            if k:
                lines.append(prefix + " ".join(words[i:i + k]))
                i += k
            elif self.breaking:
                lines.append(prefix + words[i][:room])
                words[i] = words[i][room:]
            else:
                lines.append(prefix + words[i])
                i += 1
        return lines


def _split_paragraphs(text):
    groups, group = [], []
    for raw in text.split("\n"):
        if raw.isspace() or raw == "":
            if group:
                groups.append(group)
            group = []
        else:
            group += raw.split()
    if group:
        groups.append(group)
    return groups


def wrap(text, width, *, indent="", subsequent_indent=None, break_long_words=True):
    if not isinstance(text, str):
        raise TypeError(f"expected str, got {type(text).__name__}")
    if not isinstance(width, int) or isinstance(width, bool) or width <= 0:
        raise ValueError(f"invalid width {width!r}")
    layout = _Layout(width, indent, subsequent_indent, break_long_words)
    if len(layout.first) >= width or len(layout.rest) >= width:
        raise ValueError("no room left after the indent")
    out = []
    for words in _split_paragraphs(text):
        out.extend([""] if out else [])
        out.extend(layout.paragraph(words))
    return out


def fill(text, width, **options):
    return "\n".join(wrap(text, width, **options))
