"""Simulation banks: split a kata's bank/tests.py into a header and test functions, measure each
test's kind against a task's programs, and write bank/bank.json (format in tasks/README.md).

Kinds are measured, never declared by the author:
  broken          fails on the reference
  overfit         passes the reference, fails some valid alternative
  discriminating  passes every valid program, fails the initial program and rejects at least one
                  invalid candidate (each invalid candidate breaks a different behaviour, so a test
                  aimed at the reported defect rarely rejects more than one or two of them)
  weak            passes every valid program, otherwise
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from testhelix.errors import UserError
from testhelix.pack.runner import SuiteRun


@dataclass(frozen=True)
class BankTest:
    name: str
    source: str


@dataclass(frozen=True)
class BankSource:
    header: str
    tests: tuple[BankTest, ...]


def _is_test(node: ast.stmt) -> bool:
    return isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")


def split_bank(path: Path) -> BankSource:
    """Header = every top-level statement that is not a `test_*` function, in file order;
    each test keeps its decorators."""
    try:
        text = Path(path).read_text()
        tree = ast.parse(text)
    except FileNotFoundError:
        raise UserError(f"{path}: bank test file is missing") from None
    except SyntaxError as err:
        raise UserError(f"{path}: does not parse: {err}") from None
    lines = text.splitlines()
    tests: list[BankTest] = []
    keep = [True] * len(lines)
    for node in tree.body:
        if not _is_test(node):
            continue
        first = min([node.lineno] + [d.lineno for d in node.decorator_list])
        tests.append(BankTest(node.name, "\n".join(lines[first - 1:node.end_lineno]) + "\n"))
        keep[first - 1:node.end_lineno] = [False] * (node.end_lineno - first + 1)
    names = [t.name for t in tests]
    if len(set(names)) != len(names):
        raise UserError(f"{path}: test function names are not unique")
    # The header is the file with the test functions cut out (comments and spacing kept), with
    # the blank runs the cuts leave behind shortened to the usual two lines.
    header = re.sub(r"\n{4,}", "\n\n\n", "\n".join(line for line, k in zip(lines, keep) if k)).strip()
    return BankSource(header + "\n" if header else "", tuple(tests))


def per_function(run: SuiteRun, names: Sequence[str]) -> dict[str, bool]:
    """Per test function: passed iff every reported case of it passed (parametrised cases
    included). A function with no reported case (collection error, timeout) counts as failed."""
    seen: dict[str, bool] = {}
    for key, ok in run.results.items():
        func = key.rsplit("::", 1)[-1].split("[", 1)[0]
        seen[func] = seen.get(func, True) and ok
    return {name: seen.get(name, False) for name in names}


def measure_kind(passes_reference: bool, alternatives_pass: Sequence[bool], fails_initial: bool,
                 invalid_rejected: int, invalid_total: int) -> str:
    if not passes_reference:
        return "broken"
    if not all(alternatives_pass):
        return "overfit"
    if fails_initial and invalid_total and invalid_rejected >= 1:
        return "discriminating"
    return "weak"


@dataclass(frozen=True)
class Repair:
    id: str
    correct: bool
    program: Path  # where the repair program was materialised (copied into the task)


def bank_document(source: BankSource, reference: Mapping[str, bool], alternatives: Sequence[Mapping[str, bool]],
                  initial: Mapping[str, bool], invalids: Sequence[Mapping[str, bool]],
                  repairs: Sequence[Repair]) -> dict:
    """The bank.json document from per-function pass maps of each program."""
    tests = []
    for test in source.tests:
        name = test.name
        alt_pass = [alt[name] for alt in alternatives]
        rejected = sum(1 for inv in invalids if not inv[name])
        tests.append({
            "name": name,
            "source": test.source,
            "kind": measure_kind(reference[name], alt_pass, not initial[name], rejected, len(invalids)),
            "fails_initial": not initial[name],
            "passes_reference": reference[name],
            "valid_passed": int(reference[name]) + sum(alt_pass),
            "invalid_rejected": rejected,
        })
    return {
        "header": source.header,
        "tests": tests,
        "repairs": [{"id": r.id, "correct": r.correct, "artifact": f"bank/repairs/{r.id}"} for r in repairs],
    }


def dump_json(obj: object, path: Path) -> None:
    """Deterministic JSON: sorted keys, two-space indent, one trailing newline."""
    Path(path).write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
