"""Word wrapping driven by a queue of words; long words are split lazily at the queue head."""
from collections import deque
import re


def _check(text, width, indent, subsequent_indent):
    if not isinstance(text, str):
        raise TypeError("text must be str")
    if not (isinstance(width, int) and not isinstance(width, bool) and width >= 1):
        raise ValueError("width must be a positive int")
    rest = indent if subsequent_indent is None else subsequent_indent
    if max(len(indent), len(rest)) >= width:
        raise ValueError("indent too wide")
    return rest


def _paragraph_words(text):
    blocks = re.split(r"\n(?:[^\S\n]*\n)+", "\n" + text + "\n")
    found = []
    for block in blocks:
        words = block.split()
        if words:
            found.append(words)
    return found


def _lines_for(words, width, first, rest, breaking):
    queue = deque(words)
    out = []
    while queue:
        prefix = first if not out else rest
        room = width - len(prefix)
        head = queue.popleft()
        if len(head) > room:
            if breaking:
                out.append(prefix + head[:room])
                queue.appendleft(head[room:])
            else:
                out.append(prefix + head)
            continue
        current = [head]
        used = len(head)
        while queue and used + 1 + len(queue[0]) <= room:
            used += 1 + len(queue[0])
            current.append(queue.popleft())
        out.append(prefix + " ".join(current))
    return out


def wrap(text, width, *, indent="", subsequent_indent=None, break_long_words=True):
    rest = _check(text, width, indent, subsequent_indent)
    result = []
    for k, words in enumerate(_paragraph_words(text)):
        if k:
            result.append("")
        result += _lines_for(words, width, indent, rest, break_long_words)
    return result


def fill(text, width, **options):
    return "\n".join(wrap(text, width, **options))
