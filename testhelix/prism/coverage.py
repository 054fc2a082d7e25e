"""Change Coverage ΔC and Entry Coverage of a submitted suite (seed appendix, B.6.2).

Coordinates are `(state, path, line)` with state "initial" or "reference" and path relative to the
program tree, so a replaced line can be one target in each state.

ΔC: the targets C_i are the lines the reference repair changes (lines removed from the initial
program, lines added in the reference, by a difflib line diff) that the TRUSTED tests execute in
that state; changed lines with no executed event under the trusted tests do not count. The hits
H_i are the coordinates the generated suite executes when run on the initial program and on the
reference. ΔC_i = |H_i ∩ C_i| / |C_i|.

Entry Coverage: the trusted tests name production entry points; a called name counts only when it
maps to exactly one function or method defined in the reference (a class call maps to its
`__init__`), which keeps the mapping unique and auditable. E_i are the executable statements in
the bodies of those definitions (statements as reported by coverage.py for the reference state);
the hits are the lines the generated suite executes on the reference. Entry_i = |H^g ∩ E_i| / |E_i|.

Line data comes from coverage.py run INSIDE the sandbox: the executor runs the suite in coverage
mode (coverage_run.py: pytest under coverage.py in the test process, then the measured statements
and missing lines printed between two markers). That text is produced next to untrusted code, so
the host parses it defensively: malformed data is a failed collection, unknown files and
out-of-range lines are dropped. A suite could still forge its own report; coverage is a
diagnostic, not a gate.

Every ratio comes with a status: "ok", "empty" (measured denominator is empty), "failed" (a
collector run produced no usable data) or "missing" (no suite). Only "ok" carries a number.
"""

from __future__ import annotations

import ast
import dataclasses
import difflib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from testhelix.core.digest import tree_files
from testhelix.execution.coverage_run import BEGIN, END
from testhelix.execution.outcome import Limits

CoverageStatus = Literal["ok", "empty", "failed", "missing"]
Coord = tuple[str, str, int]  # (state, program-relative path, line)
REPORT_OUTPUT_BYTES = 8 * 1024 * 1024  # room for the line report at the tail of the output


@dataclass(frozen=True)
class LineCoverage:
    """Parsed line data of one suite run on one program state (paths relative to the program)."""

    status: Literal["ok", "failed"]
    reason: str | None = None
    statements: Mapping[str, frozenset[int]] = field(default_factory=dict)
    executed: Mapping[str, frozenset[int]] = field(default_factory=dict)

    def coords(self, state: str) -> frozenset[Coord]:
        return frozenset((state, path, line) for path, lines in self.executed.items() for line in lines)


@dataclass(frozen=True)
class EntryPoint:
    """One trusted-test call resolved to a unique definition in the reference (for audit)."""

    name: str
    path: str
    qualname: str
    first_line: int  # first line of the body
    last_line: int


@dataclass(frozen=True)
class CoverageTargets:
    """Per-task targets fixed by the trusted tests; computed once and reused for every suite."""

    status: Literal["ok", "failed"]
    reason: str | None
    change: frozenset[Coord]  # C_i
    entry: frozenset[tuple[str, int]]  # E_i, reference-state (path, line)
    entry_points: tuple[EntryPoint, ...]


@dataclass(frozen=True)
class SuiteCoverage:
    delta_c: float | None
    delta_c_status: CoverageStatus
    entry: float | None
    entry_status: CoverageStatus

    @property
    def status(self) -> str:
        """One word when both agree (the store's coverage_status column), otherwise both."""
        if self.delta_c_status == self.entry_status:
            return self.delta_c_status
        return f"delta_c:{self.delta_c_status},entry:{self.entry_status}"


MISSING = SuiteCoverage(None, "missing", None, "missing")


def _py_lines(root: Path) -> dict[str, list[str]]:
    out = {}
    for rel in tree_files(root):
        if rel.suffix == ".py":
            out[rel.as_posix()] = (root / rel).read_text(encoding="utf-8", errors="replace").splitlines()
    return out


def changed_lines(initial_dir: Path, reference_dir: Path) -> tuple[dict[str, set[int]], dict[str, set[int]]]:
    """Lines removed from the initial program and lines added in the reference, per .py file."""
    before, after = _py_lines(Path(initial_dir)), _py_lines(Path(reference_dir))
    removed: dict[str, set[int]] = {}
    added: dict[str, set[int]] = {}
    for path in sorted(before.keys() | after.keys()):
        a, b = before.get(path, []), after.get(path, [])
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
            if tag in ("replace", "delete"):
                removed.setdefault(path, set()).update(range(i1 + 1, i2 + 1))
            if tag in ("replace", "insert"):
                added.setdefault(path, set()).update(range(j1 + 1, j2 + 1))
    return removed, added


def _definitions(reference_dir: Path) -> dict[str, list[EntryPoint]]:
    """Every function/method (and class, via its __init__) of the reference, by simple name."""
    found: dict[str, list[EntryPoint]] = {}

    def visit(body: list[ast.stmt], path: str, prefix: str) -> None:
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                qual = prefix + node.name
                span = (node.body[0].lineno, node.end_lineno or node.body[-1].lineno)
                found.setdefault(node.name, []).append(EntryPoint(node.name, path, qual, *span))
                visit(node.body, path, qual + ".")
            elif isinstance(node, ast.ClassDef):
                qual = prefix + node.name
                visit(node.body, path, qual + ".")
                init = [n for n in node.body if isinstance(n, ast.FunctionDef) and n.name == "__init__"]
                if init:  # calling the class enters its __init__
                    n = init[0]
                    span = (n.body[0].lineno, n.end_lineno or n.body[-1].lineno)
                    found.setdefault(node.name, []).append(EntryPoint(node.name, path, qual + ".__init__", *span))

    for path, lines in _py_lines(Path(reference_dir)).items():
        try:
            tree = ast.parse("\n".join(lines))
        except SyntaxError:
            continue
        visit(tree.body, path, "")
    return found


def entry_points(trusted_tests_dir: Path, reference_dir: Path) -> tuple[EntryPoint, ...]:
    """Reference definitions the trusted tests call, kept only when the name maps uniquely."""
    called: set[str] = set()
    local: set[str] = set()
    for lines in _py_lines(Path(trusted_tests_dir)).values():
        try:
            tree = ast.parse("\n".join(lines))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
                if name:
                    called.add(name)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                local.add(node.name)  # a test helper of the same name is not a production entry
    defs = _definitions(reference_dir)
    chosen = [defs[n][0] for n in sorted(called - local) if len(defs.get(n, [])) == 1]
    return tuple(sorted(chosen, key=lambda e: (e.path, e.first_line)))


def _int_lines(value: Any, limit: int) -> frozenset[int] | None:
    if not isinstance(value, list) or len(value) > 1_000_000:
        return None
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return None
    return frozenset(v for v in value if 1 <= v <= limit)


def _match_path(measured: str, known: Mapping[str, int]) -> str | None:
    """The program path a reported path names: equal to it, or (absolute paths) ending with it."""
    measured = measured.replace("\\", "/")
    hits = [p for p in known if measured == p or measured.endswith("/" + p)]
    return max(hits, key=len) if hits else None


def parse_line_report(output: str, program_dir: Path) -> LineCoverage:
    """Parse the LAST marked report in a run's output against the program tree on the host."""
    start = output.rfind(BEGIN)
    stop = output.find(END, start + 1) if start >= 0 else -1
    if start < 0 or stop < 0:
        return LineCoverage("failed", "no coverage report in the output")
    try:
        report = json.loads(output[start + len(BEGIN) : stop])
    except (ValueError, RecursionError):
        return LineCoverage("failed", "coverage report does not parse")
    if not isinstance(report, dict) or not isinstance(report.get("files"), dict):
        reason = report.get("error") if isinstance(report, dict) else None
        return LineCoverage("failed", str(reason or "coverage report has no file table")[:200])
    known = {path: len(lines) for path, lines in _py_lines(Path(program_dir)).items()}
    statements: dict[str, frozenset[int]] = {}
    executed: dict[str, frozenset[int]] = {}
    for measured, entry in report["files"].items():
        path = _match_path(str(measured), known)
        if path is None or not isinstance(entry, dict):
            continue  # a file outside the program (or junk): not a coverage target
        stmts = _int_lines(entry.get("statements"), known[path])
        missing = _int_lines(entry.get("missing"), known[path])
        if stmts is None or missing is None:
            return LineCoverage("failed", f"malformed line data for {path}")
        statements[path] = statements.get(path, frozenset()) | stmts
        executed[path] = executed.get(path, frozenset()) | (stmts - missing)
    return LineCoverage("ok", None, statements, executed)


def measure(executor: Any, suite_dir: Path, program_dir: Path, limits: Limits | None = None) -> LineCoverage:
    """Run a suite under coverage on one program through the harness executor."""
    limits = limits or Limits()
    limits = dataclasses.replace(limits, output_bytes=max(limits.output_bytes, REPORT_OUTPUT_BYTES))
    outcome = executor.run(Path(suite_dir), Path(program_dir), limits, coverage=True)
    parsed = parse_line_report(outcome.output or "", program_dir)
    if parsed.status == "failed" and outcome.status == "error":
        return LineCoverage("failed", f"run error: {outcome.reason}; {parsed.reason}")
    return parsed


def ratio(hits: frozenset, targets: frozenset) -> tuple[float | None, CoverageStatus]:
    if not targets:
        return None, "empty"
    return len(hits & targets) / len(targets), "ok"


def targets_from_runs(
    initial_dir: Path, reference_dir: Path, trusted_tests_dir: Path, on_initial: LineCoverage, on_reference: LineCoverage
) -> CoverageTargets:
    """C_i and E_i from the trusted tests' line data on both states."""
    points = entry_points(trusted_tests_dir, reference_dir)
    if on_initial.status != "ok" or on_reference.status != "ok":
        reason = on_initial.reason or on_reference.reason
        return CoverageTargets("failed", f"trusted tests: {reason}", frozenset(), frozenset(), points)
    removed, added = changed_lines(initial_dir, reference_dir)
    change = {("initial", p, n) for p, lines in removed.items() for n in lines & on_initial.executed.get(p, set())}
    change |= {("reference", p, n) for p, lines in added.items() for n in lines & on_reference.executed.get(p, set())}
    entry = {
        (e.path, n)
        for e in points
        for n in on_reference.statements.get(e.path, frozenset())
        if e.first_line <= n <= e.last_line
    }
    return CoverageTargets("ok", None, frozenset(change), frozenset(entry), points)


def task_targets(executor: Any, initial_dir: Path, reference_dir: Path, trusted_tests_dir: Path,
                 limits: Any = None) -> CoverageTargets:
    on_initial = measure(executor, trusted_tests_dir, initial_dir, limits)
    on_reference = measure(executor, trusted_tests_dir, reference_dir, limits)
    return targets_from_runs(initial_dir, reference_dir, trusted_tests_dir, on_initial, on_reference)


def coverage_from_runs(targets: CoverageTargets, on_initial: LineCoverage, on_reference: LineCoverage) -> SuiteCoverage:
    """ΔC and Entry Coverage of a generated suite from its line data on both states."""
    if targets.status != "ok":
        return SuiteCoverage(None, "failed", None, "failed")
    if on_initial.status == "ok" and on_reference.status == "ok":
        hits = on_initial.coords("initial") | on_reference.coords("reference")
        delta_c, delta_status = ratio(hits, targets.change)
    else:
        delta_c, delta_status = None, "failed"
    if on_reference.status == "ok":
        # E_i may also hold statements only the generated run reports (seed: its reference report).
        extra = {
            (e.path, n)
            for e in targets.entry_points
            for n in on_reference.statements.get(e.path, frozenset())
            if e.first_line <= n <= e.last_line
        }
        scope = targets.entry | extra
        hits_ref = frozenset((p, n) for p, lines in on_reference.executed.items() for n in lines)
        entry, entry_status = ratio(hits_ref, frozenset(scope))
    else:
        entry, entry_status = None, "failed"
    return SuiteCoverage(delta_c, delta_status, entry, entry_status)


def suite_coverage(
    executor: Any, targets: CoverageTargets, suite_dir: Path | None, initial_dir: Path, reference_dir: Path, limits: Any = None
) -> SuiteCoverage:
    """Measure a submitted suite; `suite_dir=None` (no suite submitted) gives status "missing"."""
    if suite_dir is None or not Path(suite_dir).is_dir():
        return MISSING
    if targets.status != "ok":
        return coverage_from_runs(targets, LineCoverage("failed"), LineCoverage("failed"))
    on_initial = measure(executor, suite_dir, initial_dir, limits)
    on_reference = measure(executor, suite_dir, reference_dir, limits)
    return coverage_from_runs(targets, on_initial, on_reference)


class CoverageMeter:
    """ΔC and Entry Coverage of submitted suites, measuring each task's targets once."""

    def __init__(self, executor: Any):
        self.executor = executor
        self._targets: dict[str, CoverageTargets] = {}

    def measure(self, task: Any, suite_dir: Path | None) -> SuiteCoverage:
        if suite_dir is None:
            return MISSING
        from testhelix.execution.environments import executor_for
        from testhelix.execution.protocols import RunsTrusted

        executor = executor_for(self.executor, task)  # the task's own environment, when it pins packages
        if task.id not in self._targets:
            # The hidden tests are trusted: they run on their own pool, never beside untrusted suites.
            trusted = executor.trusted() if isinstance(executor, RunsTrusted) else executor
            self._targets[task.id] = task_targets(trusted, task.initial_dir,
                                                  task.reference_dir, task.trusted_tests_dir)
        return suite_coverage(executor, self._targets[task.id], suite_dir, task.initial_dir, task.reference_dir)
