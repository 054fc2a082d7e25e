"""Bug reports for bug-reproduction tasks, derived from one failing check of the verifier.

The verifier's trusted tests run on the faulty initial program once more with pytest's short
tracebacks; the first failing test's section gives the check's source lines (its inputs and the
expected value) and pytest's explanation (`E` lines: the observed value). The report quotes those,
never a test path or name, and is refused when it quotes a line of the reference that the faulty
program does not have (the fix), like the kata builder's `leaked_fix`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# pytest's section header for one failing test: "____ test_name ____" (optionally "Class.test_name").
_SECTION = re.compile(r"^_{3,} (\S+?) _{3,}$")
_LOCATION = re.compile(r"^\S+\.py:\d+: in \S+$|^\S+\.py:\d+: \w+$")
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


def report_text(lines: list[str]) -> str | None:
    """The report for one failing section: the check (source lines) and what happened (E lines)."""
    check = [_clip(line.strip()) for line in lines if line.startswith("    ") and not line.startswith("E")]
    observed = [_clip(line[1:].strip()) for line in lines if line.startswith("E")]
    check = [c for c in check if c and not _LOCATION.match(c)][-_MAX_LINES:]
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
        text = report_text(lines)
        if text is None:
            continue
        leak = leaked_line(text, reference_source.splitlines(), initial_source.splitlines())
        if leak is None:
            return text, "ok"
        why = f"every report quotes the fix (e.g. {leak!r})"
    return None, why
