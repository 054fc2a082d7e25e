"""Compact durations: "1h30m" <-> 5400 seconds."""
from __future__ import annotations

import re

__all__ = ["UNITS", "format_duration", "parse_duration"]

UNITS: dict[str, int] = {"w": 604800, "d": 86400, "h": 3600, "m": 60, "s": 1}
_ORDER = list(UNITS)
_COMPONENT = re.compile(r"([0-9]+)([a-z])\s*")
_BARE = re.compile(r"[0-9]+")


def parse_duration(text: str) -> int:
    if not isinstance(text, str):
        raise TypeError(f"expected a str, got {type(text).__name__}")
    body = text.strip()
    sign = 1
    if body[:1] in ("+", "-"):
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if not body:
        raise ValueError(f"no duration in {text!r}")
    if _BARE.fullmatch(body):
        return sign * int(body)
    total = 0
    last_rank = -1
    pos = 0
    while pos < len(body):
        match = _COMPONENT.match(body, pos)
        if match is None:
            raise ValueError(f"cannot parse {body[pos:]!r} in {text!r}")
        digits, unit = match.groups()
        if unit not in UNITS:
            raise ValueError(f"unknown unit {unit!r} in {text!r}")
        rank = _ORDER.index(unit)
        # Units must get strictly smaller, which also forbids repeating one.
        if rank <= last_rank:
            raise ValueError(f"unit {unit!r} out of order in {text!r}")
        last_rank = rank
        total += int(digits) * UNITS[unit]
        pos = match.end()
    return sign * total


def format_duration(seconds: int, *, largest: str = "w", max_units: int | None = None) -> str:
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise TypeError(f"seconds must be an int, got {type(seconds).__name__}")
    if largest not in UNITS:
        raise ValueError(f"unknown unit {largest!r}")
    if max_units is not None and (isinstance(max_units, bool) or not isinstance(max_units, int)
                                  or max_units < 1):
        raise ValueError(f"max_units must be None or an int >= 1, got {max_units!r}")
    if seconds == 0:
        return "0s"
    if seconds < 0:
        return "-" + format_duration(abs(seconds), largest=largest, max_units=max_units)
    parts: list[str] = []
    remaining = seconds
    for unit in _ORDER[_ORDER.index(largest):]:
        count, remaining = divmod(remaining, UNITS[unit])
        if count:
            parts.append(f"{count}{unit}")
    if max_units is not None:
        parts = parts[:max_units]
    return "".join(parts)
