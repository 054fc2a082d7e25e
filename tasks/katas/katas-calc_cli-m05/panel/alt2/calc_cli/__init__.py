"""calc_cli as a small stack machine class with one method per word (dispatched by name)."""
import argparse
import math
import sys

__all__ = ["main"]


class Halt(Exception):
    def __init__(self, status, why):
        super().__init__(why)
        self.status = status


class Machine:
    SYMBOLS = {"+": "add", "-": "sub", "*": "mul", "/": "div", "%": "mod", "^": "pow",
               "neg": "neg", "dup": "dup", "swap": "swap"}

    def __init__(self):
        self.stack = []

    def take(self, n, word):
        if len(self.stack) < n:
            raise Halt(1, f"not enough operands for {word}")
        got = self.stack[-n:]
        self.stack = self.stack[:-n]
        return got

    def put(self, value):
        if isinstance(value, complex):
            raise Halt(3, "complex result")
        if isinstance(value, float) and (math.isinf(value) or math.isnan(value)):
            raise Halt(3, "overflow")
        self.stack.append(value)

    def op_add(self, w):
        a, b = self.take(2, w)
        self.put(a + b)

    def op_sub(self, w):
        a, b = self.take(2, w)
        self.put(a - b)

    def op_mul(self, w):
        a, b = self.take(2, w)
        self.put(a * b)

    def op_div(self, w):
        a, b = self.take(2, w)
        if b == 0:
            raise Halt(3, "divide by zero")
        self.put(a / b)

    def op_mod(self, w):
        a, b = self.take(2, w)
        if b == 0:
            raise Halt(3, "modulo by zero")
        self.put(a % b)

    def op_pow(self, w):
        a, b = self.take(2, w)
        if a == 0 and b < 0:
            raise Halt(3, "zero to a negative power")
        try:
            self.put(a ** b)
        except OverflowError:
            raise Halt(3, "overflow") from None

    def op_neg(self, w):
        (a,) = self.take(1, w)
        self.put(-a)

    def op_dup(self, w):
        (a,) = self.take(1, w)
        self.stack += [a, a]

    def op_swap(self, w):
        a, b = self.take(2, w)
        self.stack += [b, a]

    def feed(self, word):
        if word in self.SYMBOLS:
            getattr(self, "op_" + self.SYMBOLS[word])(word)
            return
        for kind in (int, float):
            try:
                value = kind(word)
            except ValueError:
                continue
            if kind is float and not math.isfinite(value):
                break
            self.stack.append(value)
            return
        raise Halt(2, f"bad token {word}")

    def result(self):
        if len(self.stack) != 1:
            raise Halt(1, f"stack holds {len(self.stack)} values")
        return self.stack[0]


def fmt(value, places):
    if isinstance(value, int):
        return f"{value}"
    text = f"{value:.{places}f}"
    if places > 0:
        text = text.rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def precision(text):
    n = int(text)
    if n < 0 or n > 12:
        raise ValueError(text)
    return n


def main(argv=None):
    parser = argparse.ArgumentParser(prog="calc_cli")
    parser.add_argument("--precision", type=precision, default=6)
    parser.add_argument("words", nargs="+")
    try:
        ns = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 2
    machine = Machine()
    try:
        for word in ns.words:
            machine.feed(word)
        value = machine.result()
    except Halt as halt:
        print(f"calc_cli: error: {halt}", file=sys.stderr)
        return halt.status
    print(fmt(value, ns.precision))
    return 0
