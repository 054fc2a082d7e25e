"""Offline program variants: AST mutation operators (meant faulty) and semantics-preserving
rewrites (meant correct), for the offline candidate generator (generators.py).

Both work on one module's source text with the standard library's `ast` (parse, transform,
`ast.unparse`). Hand-written rather than taken from a mutation-testing tool: mutmut and cosmic-ray
are test runners built around their own mutant storage and execution; what a panel needs is a
pure function "source, seed -> new source" whose output our own verifier labels, which is a few
NodeTransformers. Intent is only a hint: a mutant that is equivalent to the reference passes the
verifier and is labelled valid, and a rewrite that changes behaviour is labelled invalid.
"""

from __future__ import annotations

import ast
import copy
import random
from collections.abc import Callable

# ------------------------------------------------------------------------------- mutation sites

_CMP_SWAP: dict[type, type] = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt,
                               ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.In: ast.NotIn, ast.NotIn: ast.In,
                               ast.Is: ast.IsNot, ast.IsNot: ast.Is}
_BIN_SWAP: dict[type, type] = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.FloorDiv, ast.FloorDiv: ast.Mult,
                               ast.Div: ast.Mult, ast.Mod: ast.FloorDiv, ast.Pow: ast.Mult,
                               ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd}
_BOOL_SWAP: dict[type, type] = {ast.And: ast.Or, ast.Or: ast.And}
_NAME_SWAP = {"min": "max", "max": "min", "any": "all", "all": "any", "True": "False", "False": "True"}


def _sites(tree: ast.AST) -> list[tuple[str, int]]:
    """Every (operator, index of the node in ast.walk order) where a mutation applies."""
    sites = []
    for index, node in enumerate(ast.walk(tree)):
        if isinstance(node, ast.Compare) and type(node.ops[0]) in _CMP_SWAP:
            sites.append(("compare", index))
        elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in _BIN_SWAP:
            sites.append(("arith", index))
        elif isinstance(node, ast.BoolOp) and type(node.op) in _BOOL_SWAP:
            sites.append(("boolean", index))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            sites += [("const+1", index), ("const-1", index)]
        elif isinstance(node, ast.Constant) and type(node.value) is str and node.value:
            sites.append(("string", index))
        elif isinstance(node, ast.Name) and node.id in _NAME_SWAP and isinstance(node.ctx, ast.Load):
            sites.append(("name", index))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Not, ast.USub)):
            sites.append(("unary", index))
        elif isinstance(node, ast.Slice):
            sites.append(("slice", index))
        elif isinstance(node, ast.Return) and node.value is not None:
            sites.append(("return", index))
        elif isinstance(node, (ast.Break, ast.Continue)):
            sites.append(("loopjump", index))
        elif isinstance(node, ast.If) and node.orelse == [] and len(node.body) >= 1:
            sites.append(("negate-if", index))
    return sites


def _apply_site(node: ast.AST, operator: str) -> ast.AST | None:
    """Mutate `node` in place (or return a replacement node); None when nothing changed."""
    if operator == "compare":
        node.ops[0] = _CMP_SWAP[type(node.ops[0])]()  # type: ignore[attr-defined]
    elif operator == "arith":
        node.op = _BIN_SWAP[type(node.op)]()  # type: ignore[attr-defined]
    elif operator == "boolean":
        node.op = _BOOL_SWAP[type(node.op)]()  # type: ignore[attr-defined]
    elif operator in ("const+1", "const-1"):
        node.value += 1 if operator == "const+1" else -1  # type: ignore[attr-defined]
    elif operator == "string":
        node.value = node.value[1:] if len(node.value) > 1 else node.value + node.value  # type: ignore[attr-defined]
    elif operator == "name":
        node.id = _NAME_SWAP[node.id]  # type: ignore[attr-defined]
    elif operator == "unary":
        return node.operand  # type: ignore[attr-defined]  # drop the `not` / the minus sign
    elif operator == "slice":
        sl: ast.Slice = node  # type: ignore[assignment]
        if sl.lower is not None:
            sl.lower = None
        elif sl.upper is not None:
            sl.upper = ast.BinOp(sl.upper, ast.Sub(), ast.Constant(1))
        else:
            return None
    elif operator == "return":
        node.value = ast.Constant(None)  # type: ignore[attr-defined]
    elif operator == "loopjump":
        return ast.Continue() if isinstance(node, ast.Break) else ast.Break()
    elif operator == "negate-if":
        node.test = ast.UnaryOp(ast.Not(), node.test)  # type: ignore[attr-defined]
    return node


class _Replace(ast.NodeTransformer):
    def __init__(self, target: int, operator: str) -> None:
        self.target, self.operator, self.changed = target, operator, False
        self._index: dict[int, int] = {}

    def run(self, tree: ast.AST) -> ast.AST:
        self._index = {id(node): i for i, node in enumerate(ast.walk(tree))}
        return self.visit(tree)

    def visit(self, node: ast.AST) -> ast.AST:
        if self._index.get(id(node)) == self.target:
            new = _apply_site(node, self.operator)
            self.changed = new is not None
            return new if new is not None else node
        return self.generic_visit(node)


def _docstring_nodes(tree: ast.AST) -> set[int]:
    """Constants that are docstrings: mutating them changes nothing a check can see."""
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def mutation_sites(source: str) -> list[tuple[str, int]]:
    """The mutation sites of `source` outside docstrings, in a stable order."""
    tree = ast.parse(source)
    docs = _docstring_nodes(tree)
    nodes = list(ast.walk(tree))
    return [(op, i) for op, i in _sites(tree) if id(nodes[i]) not in docs]


def mutate(source: str, site: tuple[str, int]) -> str | None:
    """`source` with one mutation applied at `site` (from mutation_sites), or None if it does not apply."""
    tree = ast.parse(source)
    changer = _Replace(site[1], site[0])
    new = changer.run(tree)
    if not changer.changed:
        return None
    ast.fix_missing_locations(new)
    try:
        return ast.unparse(new) + "\n"
    except (ValueError, AttributeError, TypeError):
        return None


# ------------------------------------------------------------------ semantics-preserving rewrites

class _AugToAssign(ast.NodeTransformer):
    """`x += y` -> `x = x + y` (for plain names only: attributes and items would evaluate twice)."""

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        if isinstance(node.target, ast.Name):
            load = ast.Name(node.target.id, ast.Load())
            return ast.copy_location(ast.Assign([node.target], ast.BinOp(load, node.op, node.value)), node)
        return node


class _MirrorCompare(ast.NodeTransformer):
    """`a < b` -> `b > a` for single comparisons of side-effect-free operands."""

    _MIRROR: dict[type, type] = {ast.Lt: ast.Gt, ast.Gt: ast.Lt, ast.LtE: ast.GtE, ast.GtE: ast.LtE,
                                 ast.Eq: ast.Eq, ast.NotEq: ast.NotEq}

    def visit_Compare(self, node: ast.Compare) -> ast.AST:
        self.generic_visit(node)
        simple = (ast.Name, ast.Constant, ast.Attribute, ast.Subscript)
        if (len(node.ops) == 1 and type(node.ops[0]) in self._MIRROR and isinstance(node.left, simple)
                and isinstance(node.comparators[0], simple)):
            return ast.Compare(node.comparators[0], [self._MIRROR[type(node.ops[0])]()], [node.left])
        return node


class _ReturnViaName(ast.NodeTransformer):
    """`return expr` -> `result = expr; return result` (a non-trivial expression only)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def visit_Return(self, node: ast.Return) -> ast.AST | list[ast.stmt]:
        if node.value is None or isinstance(node.value, (ast.Name, ast.Constant)):
            return node
        return [ast.Assign([ast.Name(self.name, ast.Store())], node.value),
                ast.Return(ast.Name(self.name, ast.Load()))]


class _IfElseSwap(ast.NodeTransformer):
    """`if c: A else: B` -> `if not c: B else: A` (both branches present, not an elif chain)."""

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if node.orelse and not (len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If)):
            return ast.If(ast.UnaryOp(ast.Not(), node.test), node.orelse, node.body)
        return node


class _ComprehensionToCall(ast.NodeTransformer):
    """`[e for x in xs]` -> `list(e for x in xs)`; `{e for ...}` -> `set(...)`."""

    def visit_ListComp(self, node: ast.ListComp) -> ast.AST:
        self.generic_visit(node)
        return ast.Call(ast.Name("list", ast.Load()), [ast.GeneratorExp(node.elt, node.generators)], [])

    def visit_SetComp(self, node: ast.SetComp) -> ast.AST:
        self.generic_visit(node)
        return ast.Call(ast.Name("set", ast.Load()), [ast.GeneratorExp(node.elt, node.generators)], [])


class _TernaryReturn(ast.NodeTransformer):
    """`if c: return A` + `else: return B` -> `return A if c else B`."""

    def visit_If(self, node: ast.If) -> ast.AST:
        self.generic_visit(node)
        if (len(node.body) == 1 and len(node.orelse) == 1 and isinstance(node.body[0], ast.Return)
                and isinstance(node.orelse[0], ast.Return) and node.body[0].value is not None
                and node.orelse[0].value is not None):
            return ast.Return(ast.IfExp(node.test, node.body[0].value, node.orelse[0].value))
        return node


def _delegate_to_helper(tree: ast.Module, helper: str) -> bool:
    """Move the body of each top-level function into a nested function `helper` that it calls with
    the same arguments. Scoped AST features (in:<function>:...) then differ from the original's, so
    the rewrite moves a candidate away from the reference in AST-feature space."""
    changed = False
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or node.args.vararg or node.args.kwarg or node.args.kwonlyargs:
            continue
        body = node.body
        doc = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else []
        names = [a.arg for a in [*node.args.posonlyargs, *node.args.args]]
        inner = ast.FunctionDef(name=helper, args=ast.arguments(posonlyargs=[], args=[ast.arg(n) for n in names],
                                                                kwonlyargs=[], kw_defaults=[], defaults=[]),
                                body=body[len(doc):] or [ast.Pass()], decorator_list=[], returns=None)
        if "type_params" in ast.FunctionDef._fields:  # Python 3.12+
            inner.type_params = []  # type: ignore[attr-defined,unused-ignore]
        call = ast.Call(ast.Name(helper, ast.Load()), [ast.Name(n, ast.Load()) for n in names], [])
        node.body = [*doc, inner, ast.Return(call)]
        changed = True
    return changed


_HELPER_NAMES = ("_solve", "_compute", "_impl", "_work", "_answer", "_core")
_RESULT_NAMES = ("result", "answer", "out", "value", "res")

Rewrite = Callable[[ast.Module, random.Random], bool]


def _transformer_rewrite(make: Callable[[random.Random], ast.NodeTransformer]) -> Rewrite:
    def apply(tree: ast.Module, rng: random.Random) -> bool:
        before = ast.dump(tree)
        make(rng).visit(tree)
        return ast.dump(tree) != before
    return apply


REWRITES: dict[str, Rewrite] = {
    "aug-assign": _transformer_rewrite(lambda rng: _AugToAssign()),
    "mirror-compare": _transformer_rewrite(lambda rng: _MirrorCompare()),
    "return-via-name": _transformer_rewrite(lambda rng: _ReturnViaName(rng.choice(_RESULT_NAMES))),
    "swap-if-else": _transformer_rewrite(lambda rng: _IfElseSwap()),
    "comprehension-call": _transformer_rewrite(lambda rng: _ComprehensionToCall()),
    "ternary-return": _transformer_rewrite(lambda rng: _TernaryReturn()),
    "helper-function": lambda tree, rng: _delegate_to_helper(tree, rng.choice(_HELPER_NAMES)),
}


def strip_docstrings(tree: ast.Module) -> None:
    """Drop docstrings inside functions (the module's own stays): a rewrite changes code, and the
    specification lives in the instruction, not in every alternative."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and len(node.body) > 1:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str):
                node.body = node.body[1:]


def rewrite(source: str, rng: random.Random) -> tuple[str, tuple[str, ...]] | None:
    """`source` after a random non-empty combination of the rewrites above, and their names; None
    when none applies."""
    tree = ast.parse(source)
    names = list(REWRITES)
    rng.shuffle(names)
    wanted = rng.randint(2, len(names))
    applied: list[str] = []
    for name in names:
        if len(applied) >= wanted:
            break
        trial = copy.deepcopy(tree)
        if REWRITES[name](trial, rng):
            tree, applied = trial, [*applied, name]
    if rng.random() < 0.5:
        strip_docstrings(tree)
        applied.append("drop-docstrings")
    if not applied:
        return None
    ast.fix_missing_locations(tree)
    return ast.unparse(tree) + "\n", tuple(applied)
