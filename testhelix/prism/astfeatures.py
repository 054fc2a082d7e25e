"""AST features of a program tree and the Jaccard distance between two feature sets.

Used to pick diverse invalid candidates for a panel (testhelix pack build) and to measure panel
diversity (TestPrism metrics). A program's features are a set of short strings collected from
every `.py` file below the program folder (caches excluded, the same files a tree digest covers):

  node:<Type>             an AST node type occurs (e.g. node:While, node:ListComp)
  edge:<Parent>><Child>   a node of type Child sits directly under a node of type Parent
  call:<name>             a call of that name (`f(...)` -> f, `x.append(...)` -> append)
  op:<Op>                 an operator (binary, unary, boolean, comparison, augmented assignment)
  const:<shape>           the shape of a literal constant (see `_const_shape`)
  in:<scope>:<feature>    a call, operator or constant feature together with the function it sits
                          in (qualified name, e.g. in:LRUCache.put:op:GtE)
  error:syntax:<path>     a file that does not parse (it still contributes this one feature)

The scoped `in:` features matter for small edits: flipping `>` to `>=` inside one method rarely
changes the unscoped set (the file usually has a `>=` elsewhere), but it does change the scoped
one, so two mutations in different functions come out at a positive distance.
Features are whole strings in a set, so only presence counts (not how often a feature occurs).
"""

from __future__ import annotations

import ast
from pathlib import Path

from testhelix.core.digest import tree_files

# Operator node classes whose instances carry no information beyond their type.
_OPERATOR_BASES = (ast.operator, ast.unaryop, ast.boolop, ast.cmpop)


def _const_shape(value: object) -> str:
    """A coarse shape of a constant: exact for the values that off-by-one and boundary edits touch
    (0, 1, 2, empty strings, booleans, None), bucketed otherwise so renamed messages do not count."""
    if value is None or value is Ellipsis or isinstance(value, bool):
        return repr(value)
    if isinstance(value, int):
        if value in (0, 1, 2):
            return f"int:{value}"
        return "int:small" if abs(value) < 100 else "int:large"
    if isinstance(value, float):
        return "float"
    if isinstance(value, complex):
        return "complex"
    if isinstance(value, (str, bytes)):
        kind = type(value).__name__
        if not value:
            return f"{kind}:empty"
        return f"{kind}:short" if len(value) <= 3 else f"{kind}:long"
    return type(value).__name__


def _call_name(func: ast.expr) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


class _Collector(ast.NodeVisitor):
    def __init__(self) -> None:
        self.features: set[str] = set()
        self._scope: list[str] = []

    def _add(self, feature: str, scoped: bool = False) -> None:
        self.features.add(feature)
        if scoped and self._scope:
            self.features.add(f"in:{'.'.join(self._scope)}:{feature}")

    def generic_visit(self, node: ast.AST) -> None:
        parent = type(node).__name__
        for child in ast.iter_child_nodes(node):
            # Expression contexts (Load/Store/Del) are noise; operators are recorded as op: below.
            if isinstance(child, (ast.expr_context, *_OPERATOR_BASES)):
                continue
            self.features.add(f"edge:{parent}>{type(child).__name__}")
        super().generic_visit(node)

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, ast.expr_context):
            return
        if isinstance(node, _OPERATOR_BASES):
            self._add(f"op:{type(node).__name__}", scoped=True)
            return
        self.features.add(f"node:{type(node).__name__}")
        if isinstance(node, ast.Call):
            name = _call_name(node.func)
            if name:
                self._add(f"call:{name}", scoped=True)
        elif isinstance(node, ast.Constant):
            self._add(f"const:{_const_shape(node.value)}", scoped=True)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._scope.append(node.name)
            try:
                super().visit(node)
            finally:
                self._scope.pop()
        else:
            super().visit(node)


def source_features(source: str) -> frozenset[str]:
    """Features of one module's source text (raises SyntaxError if it does not parse)."""
    collector = _Collector()
    collector.visit(ast.parse(source))
    return frozenset(collector.features)


def ast_features(program_dir: Path) -> frozenset[str]:
    """Union of the features of every .py file below `program_dir` (see the module docstring)."""
    root = Path(program_dir)
    features: set[str] = set()
    for rel in tree_files(root):
        if rel.suffix != ".py":
            continue
        try:
            features |= source_features((root / rel).read_text(encoding="utf-8", errors="replace"))
        except (SyntaxError, ValueError):  # ValueError: source with NUL bytes
            features.add(f"error:syntax:{rel.as_posix()}")
    return frozenset(features)


def jaccard_distance(a: frozenset[str], b: frozenset[str]) -> float:
    """1 - |a & b| / |a | b|; two empty sets are identical (distance 0)."""
    union = len(a | b)
    if union == 0:
        return 0.0
    return 1.0 - len(a & b) / union
