"""Durations: re.split on unit letters, then check the pieces."""
import re
from typing import Optional

UNITS = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_RANK = {unit: rank for rank, unit in enumerate(UNITS)}


def _is_ascii_number(piece: str) -> bool:
    return piece != "" and piece.isascii() and piece.isdigit()


def parse_duration(text: str) -> int:
    if not isinstance(text, str):
        raise TypeError(type(text).__name__)
    stripped = text.strip()
    negate = stripped[:1] == "-"
    if stripped[:1] in ("-", "+"):
        stripped = stripped[1:]
    if _is_ascii_number(stripped):
        return -int(stripped) if negate else int(stripped)
    pieces = re.split(r"([A-Za-z])", stripped)
    # pieces alternate: number, unit, number, unit, ..., trailing remainder
    *pairs, tail = pieces
    if not pairs or tail != "":
        raise ValueError(f"bad duration {text!r}")
    total, last = 0, -1
    for k in range(0, len(pairs), 2):
        number, unit = pairs[k], pairs[k + 1]
        if k:
            number = number.lstrip()
        if not _is_ascii_number(number) or unit not in UNITS:
            raise ValueError(f"bad component in {text!r}")
        if _RANK[unit] <= last:
            raise ValueError(f"unit {unit} repeated or out of order")
        last = _RANK[unit]
        total += int(number) * UNITS[unit]
    return -total if negate else total


def format_duration(seconds: int, *, largest: str = "w", max_units: Optional[int] = None) -> str:
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise TypeError("seconds must be an int")
    if largest not in _RANK:
        raise ValueError(f"largest={largest!r}")
    if max_units is not None and (type(max_units) is not int or max_units < 1):
        raise ValueError(f"max_units={max_units!r}")
    if not seconds:
        return "0s"
    sizes = [(u, UNITS[u]) for u in UNITS if _RANK[u] >= _RANK[largest]]
    amount, out = abs(seconds), []
    for unit, size in sizes:
        if amount >= size:
            out.append(f"{amount // size}{unit}")
            amount %= size
    limit = len(out) if max_units is None else max_units
    return ("-" if seconds < 0 else "") + "".join(out[:limit])
