"""unit_convert with direct pairwise temperature formulas and a two-step linear conversion."""
import argparse
import math
import sys

__all__ = ["main"]

LINEAR_UNITS = {
    "mm": ("length", 1e-3), "cm": ("length", 1e-2), "m": ("length", 1.0), "km": ("length", 1e3),
    "in": ("length", 0.0254), "ft": ("length", 0.3048), "yd": ("length", 0.9144), "mi": ("length", 1609.344),
    "mg": ("mass", 1e-3), "g": ("mass", 1.0), "kg": ("mass", 1e3), "oz": ("mass", 28.349523125),
    "lb": ("mass", 453.59237),
    "s": ("time", 1.0), "min": ("time", 60.0), "h": ("time", 3600.0), "d": ("time", 86400.0),
}
TEMPS = {
    ("C", "F"): lambda t: t * 1.8 + 32,
    ("F", "C"): lambda t: (t - 32) / 1.8,
    ("C", "K"): lambda t: t + 273.15,
    ("K", "C"): lambda t: t - 273.15,
    ("F", "K"): lambda t: (t - 32) / 1.8 + 273.15,
    ("K", "F"): lambda t: (t - 273.15) * 1.8 + 32,
}
IN_KELVIN = {"K": lambda t: t, "C": lambda t: t + 273.15, "F": lambda t: (t - 32) / 1.8 + 273.15}


def fail(code, msg):
    sys.stderr.write("unit_convert: " + msg + "\n")
    return code


def fixed(x, n):
    text = f"{x:.{n}f}"
    return "0" + text[2:] if text.startswith("-0") and float(text) == 0 and n == 0 else (
        text[1:] if text.startswith("-") and float(text) == 0 else text)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="unit_convert")
    parser.add_argument("value")
    parser.add_argument("frm")
    parser.add_argument("to")
    parser.add_argument("--precision", type=int, default=2)
    try:
        ns = parser.parse_args(argv)
    except SystemExit as stop:
        return stop.code if isinstance(stop.code, int) else 2
    try:
        value = float(ns.value)
    except ValueError:
        return fail(2, f"not a number: {ns.value}")
    if math.isnan(value) or math.isinf(value):
        return fail(2, "the value must be finite")
    if ns.precision < 0 or ns.precision > 10:
        return fail(2, "--precision must be 0..10")
    temps = set(IN_KELVIN)
    for unit in (ns.frm, ns.to):
        if unit not in LINEAR_UNITS and unit not in temps:
            return fail(1, f"unknown unit {unit}")
    if ns.frm in temps or ns.to in temps:
        if not (ns.frm in temps and ns.to in temps):
            return fail(1, f"{ns.frm} and {ns.to} measure different things")
        if IN_KELVIN[ns.frm](value) < -1e-9:
            return fail(1, "temperature below 0 K")
        result = value if ns.frm == ns.to else TEMPS[(ns.frm, ns.to)](value)
    else:
        (cat_a, fa), (cat_b, fb) = LINEAR_UNITS[ns.frm], LINEAR_UNITS[ns.to]
        if cat_a != cat_b:
            return fail(1, f"{ns.frm} is {cat_a}, {ns.to} is {cat_b}")
        base = value * fa
        result = base / fb
    n = ns.precision
    print(f"{fixed(value, n)} {ns.frm} = {fixed(result, n)} {ns.to}")
    return 0
