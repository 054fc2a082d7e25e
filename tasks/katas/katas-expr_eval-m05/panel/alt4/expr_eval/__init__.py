"""Expressions: recursive descent that emits a postfix program, run afterwards on a value stack."""
import operator
import re
from typing import List, NamedTuple


class Token(NamedTuple):
    kind: str
    text: str
    pos: int


class ExprSyntaxError(ValueError):
    def __init__(self, message, position):
        super().__init__(message)
        self.position = position


class UnknownVariableError(KeyError):
    def __init__(self, name):
        super().__init__(name)
        self.name = name


_SCANNER = re.compile(
    r"(?P<ws>\s+)|(?P<NUM>\d+\.\d*|\d+|\.\d+)|(?P<NAME>[A-Za-z_][A-Za-z_0-9]*)"
    r"|(?P<OP>\*\*|//|[-+*/%])|(?P<LPAREN>\()|(?P<RPAREN>\))",
    re.ASCII,
)


def tokenize(expr: str) -> List[Token]:
    if not isinstance(expr, str):
        raise TypeError("tokenize expects str")
    result, pos = [], 0
    while pos < len(expr):
        if expr[pos].isspace():   # str.isspace covers more than the ASCII \s class
            pos += 1
            continue
        m = _SCANNER.match(expr, pos)
        if not m or m.lastgroup == "ws":
            raise ExprSyntaxError("stray character", pos)
        result.append(Token(m.lastgroup, m.group(), pos))
        pos = m.end()
    return result


_OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
        "//": operator.floordiv, "%": operator.mod, "**": operator.pow}


class _Compiler:
    def __init__(self, tokens, length):
        self.tokens = tokens
        self.at = 0
        self.length = length
        self.code = []        # ("push", value) | ("load", name) | ("neg",) | ("pos",) | ("bin", op)

    def _tok(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def _is_op(self, *texts):
        tok = self._tok()
        return tok is not None and tok.kind == "OP" and tok.text in texts

    def _fail(self, msg):
        tok = self._tok()
        raise ExprSyntaxError(msg, self.length if tok is None else tok.pos)

    def sum(self):
        self.product()
        while self._is_op("+", "-"):
            op = self._tok().text
            self.at += 1
            self.product()
            self.code.append(("bin", op))

    def product(self):
        self.signed()
        while self._is_op("*", "/", "//", "%"):
            op = self._tok().text
            self.at += 1
            self.signed()
            self.code.append(("bin", op))

    def signed(self):
        if self._is_op("+", "-"):
            sign = self._tok().text
            self.at += 1
            self.signed()
            self.code.append(("neg",) if sign == "-" else ("pos",))
            return
        self.atom()
        if self._is_op("**"):
            self.at += 1
            self.signed()
            self.code.append(("bin", "**"))

    def atom(self):
        tok = self._tok()
        if tok is None:
            self._fail("operand missing at end")
        self.at += 1
        if tok.kind == "NUM":
            self.code.append(("push", float(tok.text) if "." in tok.text else int(tok.text)))
        elif tok.kind == "NAME":
            self.code.append(("load", tok.text))
        elif tok.kind == "LPAREN":
            self.sum()
            if self._tok() is None or self._tok().kind != "RPAREN":
                self._fail("')' expected")
            self.at += 1
        else:
            self.at -= 1
            self._fail("operand expected")


def evaluate(expr, variables=None):
    comp = _Compiler(tokenize(expr), len(expr))
    comp.sum()
    if comp._tok() is not None:
        comp._fail("extra input")
    env = {} if variables is None else variables
    stack = []
    for instr in comp.code:
        kind = instr[0]
        if kind == "push":
            stack.append(instr[1])
        elif kind == "load":
            if instr[1] not in env:
                raise UnknownVariableError(instr[1])
            stack.append(env[instr[1]])
        elif kind == "neg":
            stack.append(-stack.pop())
        elif kind == "pos":
            stack.append(+stack.pop())
        else:
            b = stack.pop()
            a = stack.pop()
            stack.append(_OPS[instr[1]](a, b))
    return stack.pop()
