"""Bug reports for bug-reproduction tasks, derived from one failing check of the verifier.

The verifier's trusted tests run on the faulty initial program once more with pytest's short
tracebacks; the first failing test's section gives the check's source lines (its inputs and the
expected value) and pytest's explanation (`E` lines: the observed value). The report quotes those,
never a test path or name, and is refused when it quotes a line of the reference that the faulty
program does not have (the fix), like the kata builder's `leaked_fix`.

Only the frames of the test files are quoted: a traceback that goes on into the program shows the
faulty line itself, which would point at the bug, and pytest's position marks (`^^^^` under the
failing expression, on Python 3.11+) are layout, not code; both are left out, and so is any check
line that is also a line of the faulty program.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# pytest's section header for one failing test: "____ test_name ____" (optionally "Class.test_name").
_SECTION = re.compile(r"^_{3,} (\S+?) _{3,}$")
_LOCATION = re.compile(r"^(\S+\.py):\d+: (?:in \S+|\w+)$")
_MARKS = re.compile(r"^[\s^~+-]*[\^~][\s^~+-]*$")   # pytest/Python position marks under an expression
_MAX_LINES, _MAX_CHARS = 14, 240


def failing_sections(output: str) -> list[tuple[str, list[str]]]:
    """(test name, lines) for each failing test section of pytest output with --tb=short."""
    sections: list[tuple[str, list[str]]] = []
    current: list[str] | None = None
    for line in output.splitlines():
        header = _SECTION.match(line.strip())
        if header:
            current = []
            sections.append((header.group(1), current))
        elif line.startswith("=") and current is not None:
            current = None       # "==== short test summary info ====" and the like end a section
        elif current is not None:
            current.append(line)
    return sections


def _clip(line: str) -> str:
    return line if len(line) <= _MAX_CHARS else line[:_MAX_CHARS] + " ..."


def _is_test_file(path: str) -> bool:
    name = path.replace("\\", "/").rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py"


def check_lines(lines: list[str], program_lines: Iterable[str] = ()) -> list[str]:
    """The source lines of a section's test-file frames, without position marks or program lines."""
    program = {line.strip() for line in program_lines if len(line.strip()) >= 10}
    keep, in_test = [], True     # a section without location lines is the test's own frame
    for line in lines:
        where = _LOCATION.match(line.strip())
        if where:
            in_test = _is_test_file(where.group(1))
            continue
        code = line.strip()
        if not line.startswith("    ") or not code or not in_test or _MARKS.match(code) or code in program:
            continue
        keep.append(_clip(code))
    return keep[-_MAX_LINES:]


def report_text(lines: list[str], program_lines: Iterable[str] = ()) -> str | None:
    """The report for one failing section: the check (source lines of the test frames) and what
    happened (E lines)."""
    check = check_lines(lines, program_lines)
    observed = [_clip(line[1:].strip()) for line in lines if line.startswith("E")]
    observed = [o for o in observed if o][:_MAX_LINES]
    if not observed:
        return None
    parts = ["A user checked the program with the following code (inputs and the expected result):", "",
             "```python", *(check or ["(the check's code was not shown)"]), "```", "",
             "and it failed like this (what the program did instead):", "", "```", *observed, "```"]
    return "\n".join(parts) + "\n"


def leaked_line(report: str, reference_lines: Iterable[str], initial_lines: Iterable[str]) -> str | None:
    """A line of the reference, absent from the faulty program, that the report quotes (the fix)."""
    initial = {line.strip() for line in initial_lines}
    for line in reference_lines:
        code = line.strip()
        # Very short fragments ("x", "return n") turn up in honest reports; only lines with some body count.
        if len(code) >= 10 and code not in initial and code in report:
            return code
    return None


def bug_report(output: str, reference_source: str, initial_source: str) -> tuple[str | None, str]:
    """(report, why) from pytest output of the trusted tests on the initial program: the first failing
    check whose report neither is empty nor gives the fix away; None and the reason otherwise."""
    sections = failing_sections(output)
    if not sections:
        return None, "no failing check in the verifier's output"
    why = "no failing check could be described"
    for _name, lines in sections:
        text = report_text(lines, initial_source.splitlines())
        if text is None:
            continue
        leak = leaked_line(text, reference_source.splitlines(), initial_source.splitlines())
        if leak is None:
            return text, "ok"
        why = f"every report quotes the fix (e.g. {leak!r})"
    return None, why
