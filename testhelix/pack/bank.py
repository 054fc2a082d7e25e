"""Simulation banks: split a kata's bank/tests.py into a header and test functions, measure each
test's label on a task's initial program and candidate repairs, and write bank/bank.json (format in tasks/README.md).

Labels are measured, never declared by the author, and only on what an agent could run itself:
the task's initial program and the bank's own candidate repairs (`public_label`). The reference,
the panel and the trusted tests never reach a label, so a simulated model that acts on the labels
acts on public information only (tasks/README.md).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from testhelix.core.errors import UserError
from testhelix.pack.runner import SuiteRun


@dataclass(frozen=True)
class BankTest:
    name: str
    source: str


@dataclass(frozen=True)
class BankSource:
    header: str
    tests: tuple[BankTest, ...]


def _is_test(node: ast.stmt) -> TypeGuard[ast.FunctionDef | ast.AsyncFunctionDef]:
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
        last = node.end_lineno or node.lineno  # ast.parse always sets end_lineno; the type allows None
        tests.append(BankTest(node.name, "\n".join(lines[first - 1:last]) + "\n"))
        keep[first - 1:last] = [False] * (last - first + 1)
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


def public_label(fails_initial: bool, passes_repairs: Sequence[bool]) -> str:
    """A bank test's label from what an agent could run itself: the initial program and its own
    candidate repairs (never the reference, the panel or the trusted tests).

      reproduces        fails the initial program and passes at least one candidate repair
      fails-everywhere  fails the initial program and every candidate repair
      guard             passes the initial program and every candidate repair
      separates         passes the initial program and fails some candidate repair
    """
    if fails_initial:
        return "reproduces" if any(passes_repairs) else "fails-everywhere"
    return "guard" if all(passes_repairs) else "separates"


@dataclass(frozen=True)
class Repair:
    id: str        # neutral name (r1, r2, ... in tree-digest order): it says nothing about the repair
    program: Path  # where the repair program was materialised (copied into the task)


def bank_document(source: BankSource, initial: Mapping[str, bool],
                  repairs: Sequence[tuple[Repair, Mapping[str, bool]]]) -> dict:
    """The bank.json document from per-function pass maps of the initial program and of each
    candidate repair: nothing else can reach a label."""
    tests = []
    for test in source.tests:
        name = test.name
        passing = [r.id for r, passed in repairs if passed[name]]
        tests.append({
            "name": name,
            "source": test.source,
            "fails_initial": not initial[name],
            "passes_repairs": passing,
            "label": public_label(not initial[name], [passed[name] for _, passed in repairs]),
        })
    return {
        "header": source.header,
        "tests": tests,
        "repairs": [{"id": r.id, "artifact": f"bank/repairs/{r.id}"} for r, _ in repairs],
    }


def bank_module(doc: Mapping) -> str:
    """The bank's tests as one module (header + every test function), as the labels are measured."""
    body = "\n\n\n".join(t["source"].strip() for t in doc["tests"])
    return f"{str(doc['header']).rstrip()}\n\n\n{body}\n"


def relabel_task_bank(task_dir: Path, workers: int = 2, timeout: float = 60.0) -> dict:
    """Measure a built task's bank afresh from the task folder: the bank's tests on `environment/`
    (the initial program) and on each `bank/repairs/<id>/`. Only those trees are read, so hidden
    material (solution/, tests/, panel/) cannot change the result. Returns the bank document."""
    import tempfile

    from testhelix.pack.runner import Job, run_each, run_jobs

    task_dir = Path(task_dir)
    path = task_dir / "bank" / "bank.json"
    try:
        doc = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as err:
        raise UserError(f"{path}: cannot read the simulation bank: {err}") from None
    source = BankSource(doc["header"], tuple(BankTest(t["name"], t["source"]) for t in doc["tests"]))
    names = [t.name for t in source.tests]
    programs = {"initial": task_dir / "environment"}
    programs |= {r["id"]: task_dir / r["artifact"] for r in doc["repairs"]}
    with tempfile.TemporaryDirectory(prefix="bank-relabel-") as tmp:
        module = Path(tmp) / "test_bank.py"
        module.write_text(bank_module(doc))
        runs = run_jobs([Job(key, module, prog, timeout) for key, prog in programs.items()], workers)
        for key, run in list(runs.items()):
            if run.reason == "timeout":
                runs[key] = run_each(module, programs[key], names)
    maps = {key: per_function(run, names) for key, run in runs.items()}
    repairs = [(Repair(r["id"], task_dir / r["artifact"]), maps[r["id"]]) for r in doc["repairs"]]
    return bank_document(source, maps["initial"], repairs)


def dump_json(obj: object, path: Path) -> None:
    """Deterministic JSON: sorted keys, two-space indent, one trailing newline."""
    Path(path).write_text(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
