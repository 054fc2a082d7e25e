"""Task sources for the bundled `mbpp` pack, from the 974 problems of MBPP.

The data is `mbpp.jsonl` of the google-research repository (CC-BY-4.0), kept in this checkout as
`tasks/mbpp-src/mbpp.jsonl.xz` (a build-time input: the pack archive is what ships). Per problem:

- program: `program.py` = the problem's `code` (line ends normalised to `\\n`); it is the reference,
  and `pack create` derives the panel and the faulty initial program from it (bug-reproduction mode).
- verifier: `tests/test_program.py`: the problem's `test_setup_code` at module level after
  `from program import *`, then one pytest test per assertion of `test_list` and
  `challenge_test_list`, each seeding `random` first.
- entry point: the first function the first assertion calls that the code defines.
- context and difficulty: the same rules as the humaneval pack (humaneval.py), on the entry point.
"""

from __future__ import annotations

import ast
import json
import lzma
from pathlib import Path

from testhelix.core.errors import UserError
from testhelix.core.paths import tasks_dir
from testhelix.pack.create import TaskSource
from testhelix.pack.humaneval import PROGRAM, context_of, difficulty_of

LICENCE = "CC-BY-4.0"
ORIGIN = "google-research/google-research mbpp/mbpp.jsonl"


def default_data_file() -> Path:
    path = tasks_dir() / "mbpp-src" / "mbpp.jsonl.xz"
    if not path.is_file():
        raise UserError(f"--mbpp: {path} is missing; give the path of mbpp.jsonl with --source-data")
    return path


def read_problems(path: Path) -> list[dict]:
    opener = lzma.open if str(path).endswith(".xz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    except (OSError, ValueError, lzma.LZMAError) as err:
        raise UserError(f"{path}: cannot read MBPP problems ({err})") from None
    for i, row in enumerate(rows, 1):
        missing = {"task_id", "text", "code", "test_list"} - set(row)
        if missing:
            raise UserError(f"{path}: line {i}: missing field(s) {', '.join(sorted(missing))}")
    return rows


def normalised_code(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").splitlines()).strip() + "\n"


def entry_point(program: str, assertion: str) -> str:
    """The first function the assertion calls that the program defines (ValueError if none)."""
    defined = {n.name for n in ast.parse(program).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    for node in ast.walk(ast.parse(assertion)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in defined:
            return node.func.id
    raise ValueError("the first assertion calls no function the code defines")


def verifier_module(row: dict) -> str:
    """The problem's assertions as a pytest module (see the module docstring)."""
    asserts = [normalised_code(a).strip() for a in [*row["test_list"], *(row.get("challenge_test_list") or [])]]
    asserts = [a for a in asserts if a]
    if not asserts:
        raise ValueError("no assertion")
    for a in asserts:
        ast.parse(a)
    lines = ['"""MBPP\'s assertions for this problem, one test per assertion (the verifier)."""', "",
             "import random", "", f"from {PROGRAM} import *  # noqa: F403", ""]
    setup = normalised_code(row.get("test_setup_code") or "").strip()
    if setup:
        ast.parse(setup)
        lines += [setup, ""]
    for i, a in enumerate(asserts, 1):
        body = "\n".join("    " + ln for ln in ["random.seed(0)", *a.splitlines()])
        lines += ["", f"def test_check_{i:02d}():", body, ""]
    return "\n".join(lines).rstrip() + "\n"


def write_sources(path: Path, into: Path, only: set[int] | None = None) -> tuple[list[TaskSource], list[tuple[str, str]]]:
    """Task sources under `into` for the problems of `path` (all, or the numbers in `only`), and the
    problems refused before any run (source id, reason)."""
    sources, refused = [], []
    for row in read_problems(path):
        number = int(row["task_id"])
        if only is not None and number not in only:
            continue
        source_id = f"MBPP/{number}"
        program = normalised_code(row["code"])
        try:
            ast.parse(program)
            entry = entry_point(program, row["test_list"][0] if row["test_list"] else "")
            tests = verifier_module(row)
        except (SyntaxError, ValueError) as err:
            refused.append((source_id, f"the program or its assertions cannot be converted: {err}"))
            continue
        task_id = f"mbpp-{number:03d}"
        root = into / task_id
        (root / "reference").mkdir(parents=True, exist_ok=True)
        (root / "tests").mkdir(exist_ok=True)
        (root / "reference" / f"{PROGRAM}.py").write_text(program, encoding="utf-8")
        (root / "tests" / f"test_{PROGRAM}.py").write_text(tests, encoding="utf-8")
        func = next(n for n in ast.parse(program).body if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name == entry)
        signature = f"class {entry}" if isinstance(func, ast.ClassDef) else f"def {entry}({ast.unparse(func.args)})"
        spec = (f"`{PROGRAM}.py` defines `{signature}` (MBPP problem {number}):\n\n{row['text'].strip()}\n")
        body = "\n".join(ast.unparse(func).splitlines()[1:])
        sources.append(TaskSource(
            id=task_id, title=f"MBPP {number}: {entry}", spec=spec, reference=root / "reference",
            tests=root / "tests", target=f"{PROGRAM}.py", packages=(PROGRAM,), context=context_of(program, entry),
            difficulty=difficulty_of(body), source="mbpp",
            upstream=(("source_id", source_id), ("entry_point", entry), ("licence", LICENCE), ("origin", ORIGIN))))
    return sources, refused
