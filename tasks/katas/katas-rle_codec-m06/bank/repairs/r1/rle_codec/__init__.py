"""Run-length codec: "aaab" <-> "3ab", with backslash-escaped digits and strict decoding."""
from __future__ import annotations

__all__ = ["RLEError", "decode", "encode", "runs"]

_DIGITS = "0123456789"
_ESCAPE = "\\"


class RLEError(ValueError):
    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at position {position}")
        self.position = position


def _require_str(value: object, name: str) -> None:
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")


def runs(text: str) -> list[tuple[str, int]]:
    _require_str(text, "text")
    result: list[tuple[str, int]] = []
    for ch in text:
        if result and result[-1][0] == ch:
            result[-1] = (ch, result[-1][1] + 1)
        else:
            result.append((ch, 1))
    return result


def _symbol(ch: str) -> str:
    return _ESCAPE + ch if ch in _DIGITS or ch == _ESCAPE else ch


def encode(text: str) -> str:
    parts = []
    for ch, length in runs(text):
        parts.append(_symbol(ch) if length == 1 else f"{length}{_symbol(ch)}")
    return "".join(parts)


def decode(data: str, max_length: int | None = None) -> str:
    _require_str(data, "data")
    if max_length is not None and (isinstance(max_length, bool) or not isinstance(max_length, int)
                                   or max_length < 0):
        raise ValueError(f"max_length must be None or an int >= 0, got {max_length!r}")
    out: list[str] = []
    produced = 0
    i, n = 0, len(data)
    while i < n:
        item_start = i
        if data[i] == "0":
            raise RLEError("count starts with 0", i)
        while i < n and data[i] in _DIGITS:
            i += 1
        count = int(data[item_start:i]) if i > item_start else 1
        if i >= n:
            raise RLEError("count without a symbol", n)
        if data[i] == _ESCAPE:
            if i + 1 == n or data[i + 1] not in _DIGITS + _ESCAPE:
                raise RLEError("bad escape", i)
            ch = data[i + 1]
            i += 2
        else:
            ch = data[i]
            i += 1
        # Check the limit before building the string, so huge counts cost nothing.
        if max_length is not None and produced + count > max_length:
            raise RLEError(f"output longer than {max_length}", item_start)
        out.append(ch * count)
        produced += count
    return "".join(out)
