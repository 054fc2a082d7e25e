"""Expressions via the shunting-yard algorithm: tokens -> postfix -> stack evaluation."""
from collections import namedtuple
import operator

Token = namedtuple("Token", ["kind", "text", "pos"])


class ExprSyntaxError(ValueError):
    def __init__(self, msg, position):
        super().__init__(msg)
        self.position = position


class UnknownVariableError(KeyError):
    def __init__(self, name):
        KeyError.__init__(self, name)
        self.name = name


def _scan_number(s, i):
    j = i
    while j < len(s) and s[j].isdigit() and s[j].isascii():
        j += 1
    if j < len(s) and s[j] == ".":
        j += 1
        while j < len(s) and s[j].isdigit() and s[j].isascii():
            j += 1
    return j


def tokenize(expr):
    if not isinstance(expr, str):
        raise TypeError("expr must be str")
    out, i = [], 0
    while i < len(expr):
        c = expr[i]
        if c.isspace():
            i += 1
        elif c in "0123456789" or (c == "." and expr[i + 1:i + 2] in tuple("0123456789")):
            j = _scan_number(expr, i)
            out.append(Token("NUM", expr[i:j], i))
            i = j
        elif c == "_" or (c.isascii() and c.isalpha()):
            j = i + 1
            while j < len(expr) and (expr[j] == "_" or (expr[j].isascii() and expr[j].isalnum())):
                j += 1
            out.append(Token("NAME", expr[i:j], i))
            i = j
        elif expr.startswith(("**", "//"), i):
            out.append(Token("OP", expr[i:i + 2], i))
            i += 2
        elif c in "+-*/%":
            out.append(Token("OP", c, i))
            i += 1
        elif c in "()":
            out.append(Token("LPAREN" if c == "(" else "RPAREN", c, i))
            i += 1
        else:
            raise ExprSyntaxError(f"bad character {c!r}", i)
    return out


_BINARY = {"+": (1, "left"), "-": (1, "left"), "*": (2, "left"), "/": (2, "left"),
           "//": (2, "left"), "%": (2, "left"), "**": (4, "right")}
_UNARY_PREC = 3
_FUNCS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
          "//": operator.floordiv, "%": operator.mod, "**": operator.pow}


def _to_postfix(tokens, end):
    output, stack = [], []      # stack items: ("bin", op) | ("un", op) | ("paren", pos)
    expect_operand = True
    for tok in tokens:
        if expect_operand:
            if tok.kind in ("NUM", "NAME"):
                output.append(tok)
                expect_operand = False
            elif tok.kind == "LPAREN":
                stack.append(("paren", tok.pos))
            elif tok.kind == "OP" and tok.text in "+-":
                stack.append(("un", tok.text))
            else:
                raise ExprSyntaxError("operand expected", tok.pos)
            continue
        if tok.kind == "OP":
            prec, assoc = _BINARY[tok.text]
            while stack and stack[-1][0] != "paren":
                top = stack[-1]
                top_prec = _UNARY_PREC if top[0] == "un" else _BINARY[top[1]][0]
                if top_prec > prec or (top_prec == prec and assoc == "left"):
                    output.append(stack.pop())
                else:
                    break
            stack.append(("bin", tok.text))
            expect_operand = True
        elif tok.kind == "RPAREN":
            while stack and stack[-1][0] != "paren":
                output.append(stack.pop())
            if not stack:
                raise ExprSyntaxError("unmatched ')'", tok.pos)
            stack.pop()
        else:
            raise ExprSyntaxError("operator expected", tok.pos)
    if expect_operand:
        raise ExprSyntaxError("unexpected end", end)
    while stack:
        item = stack.pop()
        if item[0] == "paren":
            raise ExprSyntaxError("unclosed '('", end)
        output.append(item)
    return output


def evaluate(expr, variables=None):
    postfix = _to_postfix(tokenize(expr), len(expr))
    env = variables if variables is not None else {}
    values = []
    for item in postfix:
        if isinstance(item, Token):
            if item.kind == "NUM":
                values.append(float(item.text) if "." in item.text else int(item.text))
            elif item.text in env:
                values.append(env[item.text])
            else:
                raise UnknownVariableError(item.text)
        elif item[0] == "un":
            values.append(-values.pop() if item[1] == "-" else +values.pop())
        else:
            right = values.pop()
            left = values.pop()
            values.append(_FUNCS[item[1]](left, right))
    return values[0]
