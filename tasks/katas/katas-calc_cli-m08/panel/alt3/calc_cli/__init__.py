"""calc_cli folding the tokens over an immutable tuple stack with functools.reduce."""
import argparse
import functools
import math
import operator
import sys

__all__ = ["main"]

_ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "%": operator.mod, "^": pow}


class Failure(Exception):
    pass


def _need(stack, n, tok):
    if len(stack) < n:
        raise Failure(1, f"{tok}: stack underflow ({len(stack)} < {n})")


def _real(x):
    if isinstance(x, complex) or (isinstance(x, float) and not math.isfinite(x)):
        raise Failure(3, "result is not a finite real")
    return x


def _literal(tok):
    try:
        return int(tok)
    except ValueError:
        try:
            x = float(tok)
        except ValueError:
            raise Failure(2, f"unknown token: {tok}") from None
        if not math.isfinite(x):
            raise Failure(2, f"unknown token: {tok}")
        return x


def step(stack, tok):
    if tok in _ARITH:
        _need(stack, 2, tok)
        *rest, a, b = stack
        try:
            return (*rest, _real(_ARITH[tok](a, b)))
        except (ZeroDivisionError, OverflowError) as exc:
            raise Failure(3, f"{tok}: {exc}") from None
    if tok == "neg":
        _need(stack, 1, tok)
        return stack[:-1] + (-stack[-1],)
    if tok == "dup":
        _need(stack, 1, tok)
        return stack + stack[-1:]
    if tok == "swap":
        _need(stack, 2, tok)
        return stack[:-2] + (stack[-1], stack[-2])
    return stack + (_literal(tok),)


def text_of(x, digits):
    if isinstance(x, int):
        return str(x)
    s = "%.*f" % (digits, x)
    if "." in s:
        s = s.rstrip("0")
        if s.endswith("."):
            s = s[:-1]
    return "0" if s == "-0" else s


def main(argv=None):
    p = argparse.ArgumentParser(prog="calc_cli")
    p.add_argument("--precision", type=int, default=6, choices=range(13), metavar="N")
    p.add_argument("token", nargs="+")
    try:
        ns = p.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    try:
        final = functools.reduce(step, ns.token, ())
        if len(final) != 1:
            raise Failure(1, f"{len(final)} values remain")
    except Failure as f:
        code, msg = f.args
        sys.stderr.write(f"calc_cli: {msg}\n")
        return code
    print(text_of(final[0], ns.precision))
    return 0
