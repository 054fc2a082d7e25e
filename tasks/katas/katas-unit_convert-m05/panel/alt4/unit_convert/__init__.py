"""unit_convert modelling every unit as a frozen dataclass with an affine map to its base
(base = value * scale + offset), which covers temperatures and linear units alike."""
import argparse
import math
import sys
from dataclasses import dataclass

__all__ = ["main"]


@dataclass(frozen=True)
class Unit:
    symbol: str
    dimension: str
    scale: float
    offset: float = 0.0

    def to_base(self, v):
        return v * self.scale + self.offset

    def from_base(self, b):
        return (b - self.offset) / self.scale


_ALL = [
    Unit("mm", "length", 0.001), Unit("cm", "length", 0.01), Unit("m", "length", 1.0),
    Unit("km", "length", 1000.0), Unit("in", "length", 0.0254), Unit("ft", "length", 0.3048),
    Unit("yd", "length", 0.9144), Unit("mi", "length", 1609.344),
    Unit("mg", "mass", 0.001), Unit("g", "mass", 1.0), Unit("kg", "mass", 1000.0),
    Unit("oz", "mass", 28.349523125), Unit("lb", "mass", 453.59237),
    Unit("s", "time", 1.0), Unit("min", "time", 60.0), Unit("h", "time", 3600.0), Unit("d", "time", 86400.0),
    # temperature base is the kelvin
    Unit("K", "temperature", 1.0), Unit("C", "temperature", 1.0, 273.15),
    Unit("F", "temperature", 5 / 9, 273.15 - 32 * 5 / 9),
]
REGISTRY = {u.symbol: u for u in _ALL}


class UsageProblem(Exception):
    pass


class ConversionProblem(Exception):
    pass


def _pretty(x, places):
    s = f"{x:.{places}f}"
    if s.startswith("-") and set(s[1:]) <= set("0."):
        s = s[1:]
    return s


def _compute(raw_value, src, dst, precision):
    try:
        value = float(raw_value)
    except ValueError:
        raise UsageProblem(f"{raw_value!r} is not a number")
    if not math.isfinite(value):
        raise UsageProblem("value is not finite")
    if precision not in range(0, 11):
        raise UsageProblem("precision outside 0..10")
    try:
        a, b = REGISTRY[src], REGISTRY[dst]
    except KeyError as missing:
        raise ConversionProblem(f"unit {missing.args[0]!r} is unknown")
    if a.dimension != b.dimension:
        raise ConversionProblem(f"{a.dimension} cannot become {b.dimension}")
    base = a.to_base(value)
    if a.dimension == "temperature" and base < -1e-9:
        raise ConversionProblem("that is colder than 0 K")
    return f"{_pretty(value, precision)} {src} = {_pretty(b.from_base(base), precision)} {dst}"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="unit_convert")
    parser.add_argument("value")
    parser.add_argument("src")
    parser.add_argument("dst")
    parser.add_argument("--precision", type=int, default=2)
    try:
        args = parser.parse_args(argv)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 2
    try:
        print(_compute(args.value, args.src, args.dst, args.precision))
    except UsageProblem as problem:
        print(f"unit_convert: usage: {problem}", file=sys.stderr)
        return 2
    except ConversionProblem as problem:
        print(f"unit_convert: {problem}", file=sys.stderr)
        return 1
    return 0
