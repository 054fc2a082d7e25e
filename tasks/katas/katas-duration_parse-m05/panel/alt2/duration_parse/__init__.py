"""Durations parsed with one anchored regular expression whose groups fix the unit order."""
import re

UNITS = dict(w=604800, d=86400, h=3600, m=60, s=1)

_FULL = re.compile(
    r"(?P<sign>[+-])?(?:(?P<bare>[0-9]+)|"
    + "".join(rf"(?:(?P<{u}>[0-9]+){u}\s*)?" for u in UNITS)
    + r")"
)


def parse_duration(text):
    if not isinstance(text, str):
        raise TypeError(f"not a string: {text!r}")
    m = _FULL.fullmatch(text.strip())
    if m is None:
        raise ValueError(f"invalid duration: {text!r}")
    groups = m.groupdict()
    factor = -1 if groups["sign"] == "-" else 1
    if groups["bare"] is not None:
        return factor * int(groups["bare"])
    present = [u for u in UNITS if groups[u] is not None]
    if not present:
        raise ValueError(f"invalid duration: {text!r}")
    return factor * sum(int(groups[u]) * UNITS[u] for u in present)


def _pieces(value, units):
    if not units:
        return []
    unit, rest = units[0], units[1:]
    count, left = divmod(value, UNITS[unit])
    head = [f"{count}{unit}"] if count else []
    return head + _pieces(left, rest)


def format_duration(seconds, *, largest="w", max_units=None):
    if not isinstance(seconds, int) or isinstance(seconds, bool):
        raise TypeError("seconds must be an integer")
    if largest not in UNITS:
        raise ValueError(f"bad unit {largest!r}")
    bad_limit = max_units is not None and (not isinstance(max_units, int)
                                           or isinstance(max_units, bool) or max_units <= 0)
    if bad_limit:
        raise ValueError(f"bad max_units {max_units!r}")
    if seconds < 0:
        return "-" + format_duration(abs(seconds), largest=largest, max_units=max_units)
    names = list(UNITS)
    pieces = _pieces(seconds, names[names.index(largest):])
    if not pieces:
        return "0s"
    return "".join(pieces if max_units is None else pieces[:max_units])
