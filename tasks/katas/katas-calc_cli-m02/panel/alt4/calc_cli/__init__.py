"""calc_cli using a deque as the stack and structural pattern matching for the words."""
import argparse
import math
import sys
from collections import deque

__all__ = ["main"]


class CalcFailure(Exception):
    def __init__(self, exit_code, text):
        super().__init__(text)
        self.exit_code = exit_code


def _to_number(word):
    if word.lstrip("+-").isdigit():
        return int(word)
    try:
        return int(word)
    except ValueError:
        pass
    try:
        x = float(word)
    except ValueError:
        return None
    return x if math.isfinite(x) else None


def _finite(x):
    if isinstance(x, complex):
        raise CalcFailure(3, "complex result")
    if isinstance(x, float) and not math.isfinite(x):
        raise CalcFailure(3, "result too large")
    return x


def compute(words):
    st = deque()

    def pop_n(n, w):
        if len(st) < n:
            raise CalcFailure(1, f"underflow: {w} wants {n}")
        got = [st.pop() for _ in range(n)]
        got.reverse()
        return got

    for w in words:
        match w:
            case "+" | "-" | "*" | "/" | "%" | "^":
                a, b = pop_n(2, w)
                try:
                    match w:
                        case "+":
                            r = a + b
                        case "-":
                            r = a - b
                        case "*":
                            r = a * b
                        case "/":
                            r = a / b
                        case "%":
                            r = a % b
                        case _:
                            r = a ** b
                except ZeroDivisionError:
                    raise CalcFailure(3, f"{w} by zero") from None
                except OverflowError:
                    raise CalcFailure(3, "overflow") from None
                st.append(_finite(r))
            case "neg":
                (a,) = pop_n(1, w)
                st.append(-a)
            case "dup":
                (a,) = pop_n(1, w)
                st.extend((a, a))
            case "swap":
                a, b = pop_n(2, w)
                st.extend((b, a))
            case _:
                n = _to_number(w)
                if n is None:
                    raise CalcFailure(2, f"cannot read {w!r}")
                st.append(n)
    if len(st) != 1:
        raise CalcFailure(1, f"expected 1 value, found {len(st)}")
    return st[0]


def pretty(x, digits):
    if isinstance(x, int):
        return str(x)
    whole = f"{x:.{digits}f}"
    if "." in whole:
        whole = whole.rstrip("0").rstrip(".")
    return whole.replace("-0", "0", 1) if whole == "-0" else whole


def main(argv=None):
    ap = argparse.ArgumentParser(prog="calc_cli")
    ap.add_argument("--precision", default="6")
    ap.add_argument("words", nargs="+")
    try:
        ns = ap.parse_args(argv)
    except SystemExit as e:
        return e.code if isinstance(e.code, int) else 2
    try:
        digits = int(ns.precision)
        if digits < 0 or digits > 12:
            raise ValueError
    except ValueError:
        print("calc_cli: --precision wants 0..12", file=sys.stderr)
        return 2
    try:
        value = compute(ns.words)
    except CalcFailure as f:
        print(f"calc_cli: {f}", file=sys.stderr)
        return f.exit_code
    print(pretty(value, digits))
    return 0
