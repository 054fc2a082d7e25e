"""calc_cli: a reverse-polish calculator driven by command line tokens."""
import argparse
import math
import operator
import sys

__all__ = ["main"]

EXIT_OK, EXIT_STACK, EXIT_USAGE, EXIT_MATH = 0, 1, 2, 3
DEFAULT_PRECISION = 2 * 3
MAX_PRECISION = 12

BINARY = {
    "+": operator.add,
    "-": operator.sub,
    "*": operator.mul,
    "/": operator.truediv,
    "%": operator.mod,
    "^": operator.pow,
}


class CalcError(Exception):
    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def _number(token):
    try:
        return int(token)
    except ValueError:
        pass
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _pop(stack, count, token):
    if len(stack) < count:
        raise CalcError(EXIT_STACK, f"'{token}' needs {count} value(s), the stack has {len(stack)}")
    values = stack[-count:]
    del stack[-count:]
    return values


def _checked(value):
    if isinstance(value, complex) or (isinstance(value, float) and not math.isfinite(value)):
        raise CalcError(EXIT_MATH, "result is not a finite real number")
    return value


def evaluate(tokens):
    stack = []
    for token in tokens:
        if token in BINARY:
            a, b = _pop(stack, 2, token)
            try:
                stack.append(_checked(BINARY[token](a, b)))
            except ZeroDivisionError:
                raise CalcError(EXIT_MATH, f"division by zero in '{token}'") from None
            except OverflowError:
                raise CalcError(EXIT_MATH, f"overflow in '{token}'") from None
        elif token == "neg":
            (a,) = _pop(stack, 1, token)
            stack.append(-a)
        elif token == "dup":
            (a,) = _pop(stack, 1, token)
            stack.extend([a, a])
        elif token == "swap":
            a, b = _pop(stack, 2, token)
            stack.extend([b, a])
        else:
            value = _number(token)
            if value is None:
                raise CalcError(EXIT_USAGE, f"unknown token '{token}'")
            stack.append(value)
    if len(stack) != 1:
        raise CalcError(EXIT_STACK, f"expected one value at the end, the stack has {len(stack)}")
    return stack[0]


def render(value, precision):
    if isinstance(value, int):
        return str(value)
    text = f"{value:.{precision}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text == "-0":
        text = "0"
    return text


def _precision(text):
    digits = int(text)
    if not 0 <= digits <= MAX_PRECISION:
        raise argparse.ArgumentTypeError(f"must be between 0 and {MAX_PRECISION}")
    return digits


def main(argv=None):
    parser = argparse.ArgumentParser(prog="calc_cli", description="Evaluate a reverse-polish expression.")
    parser.add_argument("--precision", type=_precision, default=DEFAULT_PRECISION)
    parser.add_argument("tokens", nargs="+", metavar="TOKEN")
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        result = evaluate(args.tokens)
    except CalcError as exc:
        print(f"calc_cli: {exc}", file=sys.stderr)
        return exc.code
    print(render(result, args.precision))
    return EXIT_OK
