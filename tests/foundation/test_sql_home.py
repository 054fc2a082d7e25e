"""Every SQL statement of the three packages lives in a store module of its package, beside its
schema: testhelix/store/, autosaddler/store.py and schema.py, gtdd/store.py and schema.py. Views,
reports, loops and commands call typed query functions instead.

A statement is a string literal (an f-string's text included) that starts with an upper-case SQL
keyword followed by more text, as the project writes its SQL; docstrings and prose ("Select the
...", a kvstore's "SET NX") are not statements. The detector reads the syntax tree, not the text,
so a comment or a docstring naming SQL is never counted."""

from __future__ import annotations

import ast
import re
from pathlib import Path, PurePath

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("testhelix", "autosaddler", "gtdd")
STATEMENT = re.compile(r"\s*(SELECT|INSERT|UPDATE|DELETE|CREATE|ALTER|WITH|DROP)\s+\S")
HOMES = ("schema", "migrations", "queries")   # module names that hold SQL, besides any module under store/


def is_store_module(relative: PurePath) -> bool:
    parts = relative.with_suffix("").parts
    return "store" in parts or parts[-1] in HOMES


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def sql_literals(source: str, filename: str = "<source>") -> list[tuple[int, str]]:
    """(line, first words) of every string literal in `source` that is an SQL statement."""
    tree = ast.parse(source, filename)
    docs = _docstrings(tree)
    return [(node.lineno, " ".join(node.value.split())[:60]) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs
            and STATEMENT.match(node.value)]


def sql_outside_store(root: Path) -> list[str]:
    out = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            relative = path.relative_to(root)
            if is_store_module(relative):
                continue
            out += [f"{relative}:{line}: {text}" for line, text in sql_literals(path.read_text(), str(path))]
    return out


def test_sql_lives_only_in_store_modules():
    assert sql_outside_store(ROOT) == []


def test_the_store_modules_do_hold_the_sql():
    """The check looks where the SQL is (a detector that finds nothing anywhere proves nothing)."""
    homes = {str(p.relative_to(ROOT)) for package in PACKAGES for p in (ROOT / package).rglob("*.py")
             if is_store_module(p.relative_to(ROOT)) and sql_literals(p.read_text())}
    assert {"testhelix/store/runstore.py", "testhelix/store/migrations.py", "autosaddler/store.py",
            "autosaddler/schema.py", "gtdd/store.py", "gtdd/schema.py"} <= homes


def test_the_detector_finds_planted_sql_and_ignores_prose(tmp_path):
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "testhelix" / "view.py").write_text(
        '"""SELECT in a docstring is prose."""\n'
        'def rows(store, t):\n'
        '    """UPDATE this docstring: prose too."""\n'
        '    hint = "Select the best node; SET NX is a kvstore command"\n'
        '    store.query("SELECT run_label FROM runs")\n'
        '    return store.query(f"DELETE FROM {t} WHERE x = 1")\n')
    (tmp_path / "gtdd" / "report.py").write_text('Q = (\n    "  WITH t AS (SELECT 1) "\n    "SELECT * FROM t")\n')
    (tmp_path / "autosaddler" / "store.py").write_text('Q = "INSERT INTO dag_nodes VALUES (?)"\n')
    (tmp_path / "gtdd" / "schema.py").write_text('M = "CREATE TABLE t (x INTEGER)"\n')
    assert sql_outside_store(tmp_path) == [
        "testhelix/view.py:5: SELECT run_label FROM runs",
        "testhelix/view.py:6: DELETE FROM",
        "gtdd/report.py:2: WITH t AS (SELECT 1) SELECT * FROM t",
    ]
