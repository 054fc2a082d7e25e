"""Arithmetic expressions: regex tokenizer, recursive-descent parser to a tree, tree evaluator."""
from __future__ import annotations

import re
from typing import Mapping, NamedTuple

__all__ = ["ExprSyntaxError", "Token", "UnknownVariableError", "evaluate", "tokenize"]


class ExprSyntaxError(ValueError):
    def __init__(self, message: str, position: int) -> None:
        super().__init__(f"{message} at position {position}")
        self.position = position


class UnknownVariableError(KeyError):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


class Token(NamedTuple):
    kind: str
    text: str
    pos: int


_TOKEN = re.compile(r"""
    (?P<NUM>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)
  | (?P<NAME>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<OP>\*\*|//|[-+*/%])
  | (?P<LPAREN>\()
  | (?P<RPAREN>\))
""", re.VERBOSE)


def tokenize(expr: str) -> list[Token]:
    if not isinstance(expr, str):
        raise TypeError(f"expr must be a str, got {type(expr).__name__}")
    tokens: list[Token] = []
    pos = 0
    while pos < len(expr):
        if expr[pos].isspace():
            pos += 1
            continue
        match = _TOKEN.match(expr, pos)
        if match is None:
            raise ExprSyntaxError(f"unexpected character {expr[pos]!r}", pos)
        tokens.append(Token(match.lastgroup, match.group(), pos))
        pos = match.end()
    return tokens


class _Parser:
    """Builds a tree of tuples: ("num", value) | ("var", name) | ("neg"/"pos", x) | (op, a, b)."""

    def __init__(self, tokens: list[Token], end: int) -> None:
        self.tokens = tokens
        self.i = 0
        self.end = end

    def peek(self) -> Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def fail(self, what: str):
        tok = self.peek()
        raise ExprSyntaxError(what, tok.pos if tok else self.end)

    def take_op(self, *ops: str) -> str | None:
        tok = self.peek()
        if tok is not None and tok.kind == "OP" and tok.text in ops:
            self.i += 1
            return tok.text
        return None

    def expr(self):
        node = self.term()
        while (op := self.take_op("+", "-")) is not None:
            node = (op, node, self.term())
        return node

    def term(self):
        node = self.unary()
        while (op := self.take_op("*", "/", "//", "%")) is not None:
            node = (op, node, self.unary())
        return node

    def unary(self):
        op = self.take_op("+", "-")
        if op == "-":
            return ("neg", self.unary())
        if op == "+":
            return ("pos", self.unary())
        return self.power()

    def power(self):
        base = self.atom()
        if self.take_op("**") is not None:
            return ("**", base, self.unary())
        return base

    def atom(self):
        tok = self.peek()
        if tok is None:
            self.fail("unexpected end of expression")
        if tok.kind == "NUM":
            self.i += 1
            return ("num", float(tok.text) if "." in tok.text else int(tok.text))
        if tok.kind == "NAME":
            self.i += 1
            return ("var", tok.text)
        if tok.kind == "LPAREN":
            self.i += 1
            node = self.expr()
            if self.peek() is None or self.peek().kind != "RPAREN":
                self.fail("expected ')'")
            self.i += 1
            return node
        self.fail(f"unexpected {tok.text!r}")


def _apply(op: str, a, b):
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


def _run(node, variables: Mapping[str, float]):
    kind = node[0]
    if kind == "num":
        return node[1]
    if kind == "var":
        if node[1] not in variables:
            raise UnknownVariableError(node[1])
        return variables[node[1]]
    if kind == "neg":
        return -_run(node[1], variables)
    if kind == "pos":
        return +_run(node[1], variables)
    left = _run(node[1], variables)
    right = _run(node[2], variables)
    return _apply(kind, left, right)


def evaluate(expr: str, variables: Mapping[str, float] | None = None):
    tokens = tokenize(expr)
    parser = _Parser(tokens, len(expr))
    tree = parser.expr()
    if parser.i < len(tokens) - 1:
        parser.fail("unexpected token after the expression")
    return _run(tree, variables or {})
