"""RLE codec: decoding split into an item generator and a consumer that enforces the limit."""
from typing import Iterator, List, Optional, Tuple


class RLEError(ValueError):
    def __init__(self, message: str, position: int):
        super().__init__(message)
        self.position = position


def _check_text(text) -> None:
    if not isinstance(text, str):
        raise TypeError("a str is required")


def runs(text: str) -> List[Tuple[str, int]]:
    _check_text(text)
    out: List[Tuple[str, int]] = []
    start = 0
    while start < len(text):
        end = start
        while end < len(text) and text[end] == text[start]:
            end += 1
        out.append((text[start], end - start))
        start = end
    return out


def _is_digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def encode(text: str) -> str:
    items = []
    for ch, count in runs(text):
        symbol = f"\\{ch}" if _is_digit(ch) or ch == "\\" else ch
        items.append(f"{count}{symbol}" if count > 1 else symbol)
    return "".join(items)


def _items(data: str) -> Iterator[Tuple[int, int, str]]:
    """Yield (start position, count, character) per item."""
    i = 0
    while i < len(data):
        start = i
        if data[i] == "0":
            raise RLEError("zero-prefixed count", i)
        value = 0
        while i < len(data) and _is_digit(data[i]):
            value = value * 10 + (ord(data[i]) - ord("0"))
            i += 1
        if i == len(data):
            raise RLEError("count is not followed by a symbol", i)
        if data[i] == "\\":
            nxt = data[i + 1] if i + 1 < len(data) else ""
            if not (nxt == "\\" or (nxt and _is_digit(nxt))):
                raise RLEError("invalid escape", i)
            ch, i = nxt, i + 2
        else:
            ch, i = data[i], i + 1
        # counts never start with 0, so value == 0 means there was no count
        yield start, value or 1, ch


def decode(data: str, max_length: Optional[int] = None) -> str:
    _check_text(data)
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int)):
        raise ValueError("max_length must be an int")
    if max_length is not None and max_length < 0:
        raise ValueError("max_length must not be negative")
    budget = max_length
    chunks = []
    for start, count, ch in _items(data):
        if budget is not None:
            if count > budget:
                raise RLEError("too much output", start)
            budget -= count
        chunks.append(ch * count)
    return "".join(chunks)
