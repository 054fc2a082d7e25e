"""unit_convert doing linear conversions exactly with fractions (floats only for printing)."""
import argparse
import math
import sys
from fractions import Fraction

__all__ = ["main"]

FACTORS = {
    "length": {"mm": "0.001", "cm": "0.01", "m": "1", "km": "1000", "in": "0.0254", "ft": "0.3048",
               "yd": "0.9144", "mi": "1609.344"},
    "mass": {"mg": "0.001", "g": "1", "kg": "1000", "oz": "28.349523125", "lb": "453.59237"},
    "time": {"s": "1", "min": "60", "h": "3600", "d": "86400"},
}
KELVIN_OFFSET = Fraction("273.15")


class Refused(Exception):
    pass


def family(unit):
    if unit in ("C", "F", "K"):
        return "temperature"
    for fam, table in FACTORS.items():
        if unit in table:
            return fam
    raise Refused(f"'{unit}' is not a known unit")


def to_kelvin(q, unit):
    return {"K": q, "C": q + KELVIN_OFFSET, "F": (q - 32) * Fraction(5, 9) + KELVIN_OFFSET}[unit]


def from_kelvin(k, unit):
    return {"K": k, "C": k - KELVIN_OFFSET, "F": (k - KELVIN_OFFSET) * Fraction(9, 5) + 32}[unit]


def transform(q, src, dst):
    fa, fb = family(src), family(dst)
    if fa != fb:
        raise Refused(f"'{src}' is {fa} but '{dst}' is {fb}")
    if fa == "temperature":
        k = to_kelvin(q, src)
        if k < Fraction(-1, 10 ** 9):
            raise Refused("below absolute zero")
        return from_kelvin(k, dst)
    table = FACTORS[fa]
    return q * Fraction(table[src]) / Fraction(table[dst])


def show(q, digits):
    out = format(float(q), f".{digits}f")
    if out.startswith("-") and float(out) == 0.0:
        out = out.lstrip("-")
    return out


def number(text):
    x = float(text)
    if math.isinf(x) or math.isnan(x):
        raise ValueError(text)
    return x


def digits(text):
    d = int(text)
    if d not in range(11):
        raise ValueError(text)
    return d


def main(argv=None):
    parser = argparse.ArgumentParser(prog="unit_convert")
    parser.add_argument("value", type=number)
    parser.add_argument("src")
    parser.add_argument("dst")
    parser.add_argument("--precision", type=digits, default=2)
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    q = Fraction(ns.value)
    try:
        result = transform(q, ns.src, ns.dst)
    except Refused as why:
        print(f"unit_convert: {why}", file=sys.stderr)
        return 1
    print(f"{show(q, ns.precision)} {ns.src} = {show(result, ns.precision)} {ns.dst}")
    return 0
