"""calc_cli with a table of (arity, function) entries and exit codes carried by exceptions."""
import argparse
import math
import sys

__all__ = ["main"]


class Bad(Exception):
    code = 1


class StackBad(Bad):
    code = 1


class UsageBad(Bad):
    code = 2


class MathBad(Bad):
    code = 3


def _div(a, b):
    return a / b


OPS = {
    "+": (2, lambda a, b: [a + b]),
    "-": (2, lambda a, b: [a - b]),
    "*": (2, lambda a, b: [a * b]),
    "/": (2, lambda a, b: [_div(a, b)]),
    "%": (2, lambda a, b: [a % b]),
    "^": (2, lambda a, b: [a ** b]),
    "neg": (1, lambda a: [-a]),
    "dup": (1, lambda a: [a, a]),
    "swap": (2, lambda a, b: [b, a]),
}


def parse_number(tok):
    try:
        return int(tok)
    except ValueError:
        x = float(tok)  # may raise ValueError: handled by the caller
        if math.isnan(x) or math.isinf(x):
            raise ValueError(tok)
        return x


def run(tokens):
    stack = []
    for tok in tokens:
        if tok in OPS:
            arity, fn = OPS[tok]
            if len(stack) < arity:
                raise StackBad(f"stack underflow at {tok}")
            args = stack[len(stack) - arity:]
            del stack[len(stack) - arity:]
            try:
                produced = fn(*args)
            except (ZeroDivisionError, OverflowError) as exc:
                raise MathBad(f"{tok}: {exc}")
            for v in produced:
                if isinstance(v, complex) or (isinstance(v, float) and not math.isfinite(v)):
                    raise MathBad(f"{tok}: result out of range")
            stack.extend(produced)
        else:
            try:
                stack.append(parse_number(tok))
            except ValueError:
                raise UsageBad(f"what is {tok!r}?")
    if len(stack) != 1:
        raise StackBad(f"{len(stack)} values left on the stack")
    return stack[0]


def show(x, places):
    if type(x) is int:
        return str(x)
    s = format(x, f".{places}f")
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def main(argv=None):
    ap = argparse.ArgumentParser(prog="calc_cli")
    ap.add_argument("--precision", type=int, default=6)
    ap.add_argument("tokens", nargs="+")
    try:
        ns = ap.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    if not 0 <= ns.precision <= 12:
        print("calc_cli: --precision out of range", file=sys.stderr)
        return 2
    try:
        print(show(run(ns.tokens), ns.precision))
    except Bad as err:
        print(f"calc_cli: {err}", file=sys.stderr)
        return err.code
    return 0
