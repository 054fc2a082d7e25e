"""Expressions by precedence climbing into small AST node classes that evaluate themselves."""
from collections import namedtuple

Token = namedtuple("Token", "kind text pos")

_DIGITS = "0123456789"
_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"


class ExprSyntaxError(ValueError):
    def __init__(self, message, position):
        super().__init__(message)
        self.position = position


class UnknownVariableError(KeyError):
    def __init__(self, name):
        super().__init__(name)
        self.name = name


def tokenize(expr):
    if not isinstance(expr, str):
        raise TypeError("expected a string expression")
    tokens = []
    i = 0
    n = len(expr)
    while i < n:
        ch = expr[i]
        start = i
        if ch.isspace():
            i += 1
            continue
        if ch in _DIGITS or (ch == "." and i + 1 < n and expr[i + 1] in _DIGITS):
            while i < n and expr[i] in _DIGITS:
                i += 1
            if i < n and expr[i] == ".":
                i += 1
                while i < n and expr[i] in _DIGITS:
                    i += 1
            tokens.append(Token("NUM", expr[start:i], start))
        elif ch in _LETTERS:
            while i < n and (expr[i] in _LETTERS or expr[i] in _DIGITS):
                i += 1
            tokens.append(Token("NAME", expr[start:i], start))
        elif expr[i:i + 2] in ("**", "//"):
            tokens.append(Token("OP", expr[i:i + 2], start))
            i += 2
        elif ch in "+-*/%":
            tokens.append(Token("OP", ch, start))
            i += 1
        elif ch == "(":
            tokens.append(Token("LPAREN", ch, start))
            i += 1
        elif ch == ")":
            tokens.append(Token("RPAREN", ch, start))
            i += 1
        else:
            raise ExprSyntaxError("unknown character", i)
    return tokens


class Num:
    def __init__(self, value):
        self.value = value

    def eval(self, env):
        return self.value


class Var:
    def __init__(self, name):
        self.name = name

    def eval(self, env):
        try:
            return env[self.name]
        except KeyError:
            raise UnknownVariableError(self.name) from None


class Neg:
    def __init__(self, sign, operand):
        self.sign, self.operand = sign, operand

    def eval(self, env):
        value = self.operand.eval(env)
        return -value if self.sign == "-" else +value


class BinOp:
    def __init__(self, op, left, right):
        self.op, self.left, self.right = op, left, right

    def eval(self, env):
        a = self.left.eval(env)
        b = self.right.eval(env)
        return {
            "+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: a / b,
            "//": lambda: a // b, "%": lambda: a % b, "**": lambda: a ** b,
        }[self.op]()


_LEVEL = {"+": 1, "-": 1, "*": 2, "/": 2, "//": 2, "%": 2}


class _Climber:
    def __init__(self, tokens, size):
        self.tokens, self.pos, self.size = tokens, 0, size

    def current(self):
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def error_here(self, text):
        tok = self.current()
        raise ExprSyntaxError(text, tok.pos if tok is not None else self.size)

    def binary(self, min_level):
        left = self.prefix()
        while True:
            tok = self.current()
            if tok is None or tok.kind != "OP" or tok.text not in _LEVEL or _LEVEL[tok.text] < min_level:
                return left
            self.pos += 1
            right = self.binary(_LEVEL[tok.text] + 1)
            left = BinOp(tok.text, left, right)

    def prefix(self):
        tok = self.current()
        if tok is not None and tok.kind == "OP" and tok.text in ("+", "-"):
            self.pos += 1
            return Neg(tok.text, self.prefix())
        base = self.primary()
        tok = self.current()
        if tok is not None and tok.kind == "OP" and tok.text == "**":
            self.pos += 1
            return BinOp("**", base, self.prefix())
        return base

    def primary(self):
        tok = self.current()
        if tok is None:
            self.error_here("missing operand")
        if tok.kind == "NUM":
            self.pos += 1
            return Num(float(tok.text) if "." in tok.text else int(tok.text))
        if tok.kind == "NAME":
            self.pos += 1
            return Var(tok.text)
        if tok.kind == "LPAREN":
            self.pos += 1
            inside = self.binary(1)
            if self.current() is None or self.current().kind != "RPAREN":
                self.error_here("missing closing parenthesis")
            self.pos += 1
            return inside
        self.error_here("operand expected")


def evaluate(expr, variables=None):
    climber = _Climber(tokenize(expr), len(expr))
    tree = climber.binary(1)
    if climber.current() is not None:
        climber.error_here("unexpected token")
    return tree.eval(variables if variables is not None else {})
