"""Check and rewrite the bug reports of a built pack (`testhelix pack reports`).

A report is flawed when its check block holds a position-mark line (`^^^^`, `~~~^^` under an
expression, as Python 3.11+ tracebacks print them) or quotes a line of the faulty initial program
that is not a line of the trusted tests (a program frame of the traceback: it points at the bug).
Rewriting runs the trusted tests on the task's initial program once more in the sandbox, with
pytest's short tracebacks, and writes the report bugreport.py derives from that output (the same
writer `pack create` uses) into instruction.md; nothing else of the task changes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from testhelix.pack.bugreport import bug_report
from testhelix.pack.create import Verifier

REPORT_HEADING = "## Bug report\n\n"
_MARKS = re.compile(r"^\s*[\^~]+[\s^~]*$")
_BLOCK = re.compile(r"```python\n(.*?)```", re.S)


@dataclass(frozen=True)
class Flaw:
    task: str
    kind: str        # "position marks" | "program line"
    line: str


def _lines(folder: Path) -> set[str]:
    return {ln.strip() for p in sorted(folder.rglob("*.py")) for ln in p.read_text(encoding="utf-8").splitlines()}


def report_flaws(task_dir: Path) -> list[Flaw]:
    """The flaws of one task's bug report (none for a task without one)."""
    text = (task_dir / "instruction.md").read_text(encoding="utf-8")
    report = text.split(REPORT_HEADING, 1)[1] if REPORT_HEADING in text else ""
    program = {ln for ln in _lines(task_dir / "environment") if len(ln) >= 10} - _lines(task_dir / "tests")
    flaws = []
    for block in _BLOCK.findall(report):
        for line in block.splitlines():
            if _MARKS.match(line):
                flaws.append(Flaw(task_dir.name, "position marks", line.strip()))
            elif line.strip() in program:
                flaws.append(Flaw(task_dir.name, "program line", line.strip()))
    return flaws


def task_dirs(pack: Path) -> list[Path]:
    return sorted(p for p in Path(pack).iterdir() if (p / "instruction.md").is_file())


def rewrite_report(task_dir: Path, target: str, verifier: Verifier) -> str | None:
    """Write a fresh report into instruction.md; None on success, else why not (nothing written)."""
    (run,) = verifier(task_dir / "tests", [task_dir / "environment"], "short")
    if run.status != "fail":
        return f"the verifier does not reject the initial program ({run.status}: {run.reason})"
    reference = (task_dir / "solution" / "program" / target).read_text(encoding="utf-8")
    initial = (task_dir / "environment" / target).read_text(encoding="utf-8")
    report, why = bug_report(run.output, reference, initial)
    if report is None:
        return why
    path = task_dir / "instruction.md"
    head = path.read_text(encoding="utf-8").split(REPORT_HEADING, 1)[0]
    path.write_text(head + REPORT_HEADING + report, encoding="utf-8")
    return None


def rewrite_flawed(pack: Path, verifier: Verifier, log: Callable[[str], None] = print) -> tuple[list[str], list[tuple[str, str]]]:
    """Rewrite every flawed report of the pack; (rewritten tasks, (task, why) not rewritten)."""
    done, failed = [], []
    for task in task_dirs(pack):
        if not report_flaws(task):
            continue
        targets = sorted(p.relative_to(task / "environment").as_posix() for p in (task / "environment").rglob("*.py"))
        why = rewrite_report(task, targets[0], verifier) if len(targets) == 1 else "the program has several .py files"
        if why is None and report_flaws(task):
            why = "the rewritten report is still flawed"
        (failed.append((task.name, why)) if why else done.append(task.name))
        log(f"{task.name}: {'rewritten' if why is None else 'NOT rewritten: ' + why}")
    return done, failed
