"""unit_convert with one flat table: symbol -> (category, to_base, from_base) functions.

Temperatures use Celsius as their base unit.
"""
import argparse
import math
import sys

__all__ = ["main"]


def _linear(category, factor):
    return category, (lambda v: v * factor), (lambda b: b / factor)


UNITS = {
    "C": ("temperature", lambda v: v, lambda c: c),
    "K": ("temperature", lambda v: v - 273.15, lambda c: c + 273.15),
    "F": ("temperature", lambda v: (v - 32) * 5 / 9, lambda c: c * 9 / 5 + 32),
}
for _cat, _pairs in (
    ("length", [("mm", 0.001), ("cm", 0.01), ("m", 1), ("km", 1000), ("in", 0.0254), ("ft", 0.3048),
                ("yd", 0.9144), ("mi", 1609.344)]),
    ("mass", [("mg", 0.001), ("g", 1), ("kg", 1000), ("oz", 28.349523125), ("lb", 453.59237)]),
    ("time", [("s", 1), ("min", 60), ("h", 3600), ("d", 86400)]),
):
    for _sym, _factor in _pairs:
        UNITS[_sym] = _linear(_cat, _factor)


def _fmt(x, n):
    s = "%.*f" % (n, x)
    return s[1:] if s[0] == "-" and not any(ch in "123456789" for ch in s) else s


def main(argv=None):
    ap = argparse.ArgumentParser(prog="unit_convert")
    ap.add_argument("value")
    ap.add_argument("source")
    ap.add_argument("target")
    ap.add_argument("--precision", default="2")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    try:
        value = float(a.value)
        precision = int(a.precision)
    except ValueError:
        print("unit_convert: bad number", file=sys.stderr)
        return 2
    if not math.isfinite(value) or not 0 <= precision <= 10:
        print("unit_convert: value must be finite and precision within 0..10", file=sys.stderr)
        return 2
    for sym in (a.source, a.target):
        if sym not in UNITS:
            print(f"unit_convert: no such unit: {sym}", file=sys.stderr)
            return 1
    cat_from, to_base, _ = UNITS[a.source]
    cat_to, _, from_base = UNITS[a.target]
    if cat_from != cat_to:
        print(f"unit_convert: {cat_from} vs {cat_to}", file=sys.stderr)
        return 1
    base = to_base(value)
    if cat_from == "temperature" and base + 273.15 < -1e-9:
        print("unit_convert: colder than absolute zero", file=sys.stderr)
        return 1
    print(f"{_fmt(value, precision)} {a.source} = {_fmt(from_base(base), precision)} {a.target}")
    return 0
