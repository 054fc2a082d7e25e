"""Expressions with a Pratt parser that compiles to closures; the closures run after parsing."""
import re
from typing import NamedTuple


class Token(NamedTuple):
    kind: str
    text: str
    pos: int


class ExprSyntaxError(ValueError):
    def __init__(self, message, position):
        super().__init__(f"{message} (at {position})")
        self.position = position


class UnknownVariableError(KeyError):
    def __init__(self, name):
        super().__init__(name)
        self.name = name


_RULES = [
    ("NUM", re.compile(r"[0-9]+\.[0-9]*|[0-9]+|\.[0-9]+")),
    ("NAME", re.compile(r"[A-Za-z_]\w*", re.ASCII)),
    ("OP", re.compile(r"\*\*|//|[+\-*/%]")),
    ("LPAREN", re.compile(r"\(")),
    ("RPAREN", re.compile(r"\)")),
]


def tokenize(expr):
    if not isinstance(expr, str):
        raise TypeError("tokenize() needs a str")
    found, at = [], 0
    while at < len(expr):
        if expr[at].isspace():
            at += 1
            continue
        for kind, rx in _RULES:
            m = rx.match(expr, at)
            if m:
                found.append(Token(kind, m.group(), at))
                at = m.end()
                break
        else:
            raise ExprSyntaxError("invalid character", at)
    return found


# binding powers: left bp for infix operators
_INFIX = {"+": 10, "-": 10, "*": 20, "/": 20, "//": 20, "%": 20, "**": 40}
_PREFIX_BP = 30


def _binary(op, left, right):
    def run(env):
        a = left(env)
        b = right(env)
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b
        if op == "//":
            return a // b
        if op == "%":
            return a % b
        return a ** b
    return run


class _Pratt:
    def __init__(self, tokens, length):
        self.toks = tokens
        self.k = 0
        self.length = length

    def _here(self):
        return self.toks[self.k] if self.k < len(self.toks) else None

    def _error(self, msg):
        tok = self._here()
        raise ExprSyntaxError(msg, self.length if tok is None else tok.pos)

    def parse(self, min_bp=0):
        tok = self._here()
        if tok is None:
            self._error("expression ended early")
        self.k += 1
        if tok.kind == "NUM":
            value = float(tok.text) if "." in tok.text else int(tok.text)
            left = lambda env, v=value: v
        elif tok.kind == "NAME":
            def left(env, name=tok.text):
                if name not in env:
                    raise UnknownVariableError(name)
                return env[name]
        elif tok.kind == "LPAREN":
            inner = self.parse(0)
            closing = self._here()
            if closing is None or closing.kind != "RPAREN":
                self._error("missing ')'")
            self.k += 1
            left = inner
        elif tok.kind == "OP" and tok.text in ("+", "-"):
            operand = self.parse(_PREFIX_BP)
            left = (lambda env, f=operand: -f(env)) if tok.text == "-" else (lambda env, f=operand: +f(env))
        else:
            self.k -= 1
            self._error("operand expected")
        while True:
            op = self._here()
            if op is None or op.kind != "OP":
                break
            bp = _INFIX[op.text]
            if bp <= min_bp:
                break
            self.k += 1
            # ** is right-associative and its right side may start with a unary sign
            right = self.parse(_PREFIX_BP - 1 if op.text == "**" else bp)
            left = _binary(op.text, left, right)
        return left


def evaluate(expr, variables=None):
    parser = _Pratt(tokenize(expr), len(expr))
    program = parser.parse(0)
    if parser._here() is not None:
        parser._error("trailing input")
    return program(variables or {})
