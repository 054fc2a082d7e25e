"""Durations parsed by a hand-written scanner."""

UNITS = {"w": 7 * 24 * 3600, "d": 24 * 3600, "h": 3600, "m": 60, "s": 1}
_DIGITS = "0123456789"


def parse_duration(text):
    if not isinstance(text, str):
        raise TypeError("parse_duration() needs a string")
    s = text.strip()
    negative = False
    if s.startswith("-") or s.startswith("+"):
        negative = s[0] == "-"
        s = s[1:]
    if s == "":
        raise ValueError("empty duration")
    if all(c in _DIGITS for c in s):
        value = int(s)
        return -value if negative else value
    total, i, smallest_seen = 0, 0, None
    while i < len(s):
        j = i
        while j < len(s) and s[j] in _DIGITS:
            j += 1
        if j == i:
            raise ValueError(f"expected digits at position {i} of {text!r}")
        if j == len(s) or s[j] not in UNITS:
            raise ValueError(f"expected a unit after {s[i:j]!r}")
        size = UNITS[s[j]]
        if smallest_seen is not None and size >= smallest_seen:
            raise ValueError("units must be in decreasing order without repeats")
        smallest_seen = size
        total += int(s[i:j]) * size
        i = j + 1
        while i < len(s) and s[i].isspace():
            i += 1
    return -total if negative else total


def format_duration(seconds, *, largest="w", max_units=None):
    if type(seconds) is not int:
        if isinstance(seconds, int) and not isinstance(seconds, bool):
            seconds = int(seconds)
        else:
            raise TypeError("seconds must be int")
    if not isinstance(largest, str) or largest not in UNITS:
        raise ValueError("largest must be one of " + "".join(UNITS))
    if max_units is not None:
        if type(max_units) is not int or max_units < 1:
            raise ValueError("max_units must be a positive int")
    if seconds == 0:
        return "0s"
    prefix = "-" if seconds < 0 else ""
    left = abs(seconds)
    out = []
    started = False
    for unit, size in UNITS.items():
        if unit == largest:
            started = True
        if not started:
            continue
        n = left // size
        left -= n * size
        if n and (max_units is None or len(out) < max_units):
            out.append(str(n) + unit)
    return prefix + "".join(out)
