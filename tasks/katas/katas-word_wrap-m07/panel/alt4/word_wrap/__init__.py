"""Word wrapping with an explicit line buffer string and per-paragraph state object."""


class _Para:
    def __init__(self, width, first, rest):
        self.width, self.first, self.rest = width, first, rest
        self.lines = []
        self.buf = ""

    def prefix(self):
        return self.first if not self.lines else self.rest

    def flush(self):
        if self.buf:
            self.lines.append(self.prefix() + self.buf)
            self.buf = ""

    def add(self, word, breaking):
        if self.buf:
            if len(self.prefix()) + len(self.buf) + len(word) + 1 <= self.width:
                self.buf = self.buf + " " + word
                return
            self.flush()
        space = self.width - len(self.prefix())
        if len(word) <= space:
            self.buf = word
            return
        if not breaking:
            self.lines.append(self.prefix() + word)
            return
        pos = 0
        while len(word) - pos > self.width - len(self.prefix()):
            take = self.width - len(self.prefix())
            self.lines.append(self.prefix() + word[pos:pos + take])
            pos += take
        self.buf = word[pos:]


def wrap(text, width, *, indent="", subsequent_indent=None, break_long_words=True):
    if not isinstance(text, str):
        raise TypeError("text: str expected")
    if width is True or width is False or not isinstance(width, int) or width < 1:
        raise ValueError("width: positive int expected")
    second = subsequent_indent if subsequent_indent is not None else indent
    for pre in (indent, second):
        if len(pre) >= width:
            raise ValueError("indent is too long for the width")
    result = []
    para = None
    for line in text.split("\n") + [""]:
        words = line.split()
        if words:
            if para is None:
                para = _Para(width, indent, second)
            for w in words:
                para.add(w, break_long_words)
        elif para is not None:
            para.flush()
            if result:
                result.append("")
            result.extend(para.lines)
            para = None
    return result


def fill(text, width, **options):
    return "\n".join(wrap(text, width, **options))
