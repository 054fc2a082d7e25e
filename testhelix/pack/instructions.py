"""The public and Harbor-facing text files of a built kata task: instruction.md, task.toml and
solution/solve.sh. Everything here is a pure function of the kata and the defect, so a build is
byte-for-byte reproducible.
"""

from __future__ import annotations

import re

from testhelix.pack.kata import Kata, Mutation
from testhelix.tasks.model import Agent, Environment, Metadata, TaskToml, Verifier, dump_task_toml

AGENT_TIMEOUT_S = 600
VERIFIER_TIMEOUT_S = 60


def instruction(kata: Kata, defect: Mutation) -> str:
    """Spec plus bug report. The report says what was called, what was expected and what
    happened; the builder refuses a report that quotes a fix (see `leaked_fix`)."""
    pkg = kata.package
    spec = _demote_headings(kata.spec.strip())
    report = defect.report.strip()
    return (
        f"# {kata.title}\n\n"
        f"The working folder holds the Python package `{pkg}`. Its intended behaviour is specified below, "
        f"followed by a bug report from a user.\n\n"
        f"Write a pytest test suite (files named `test_*.py`) that reproduces the reported bug: it must "
        f"FAIL on the current program and PASS on any correct repair of it. A correct repair may be written "
        f"differently from what you expect, so test the specified public behaviour, not incidental details "
        f"of the current implementation. The tests run with the working folder on `PYTHONPATH` "
        f"(`import {pkg}` works). Do not change the program itself.\n\n"
        f"## Specification\n\n{spec}\n\n"
        f"## Bug report\n\n{report}\n"
    )


def _demote_headings(markdown: str) -> str:
    """Push every Markdown heading two levels down so the spec nests under '## Specification'
    (lines inside ``` fences are code, not headings)."""
    out, fenced = [], False
    for line in markdown.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#{1,4}\s", line):
            line = "##" + line
        out.append(line)
    return "\n".join(out)


def leaked_fix(defect: Mutation) -> str | None:
    """A line of repaired code (the reference's original text or a listed fix) that the bug report
    quotes as code (inside `...` or a ``` block); a report must never give the fix. Prose such as
    "should return False" is no leak, and neither are lines the initial program itself contains
    (the agent reads them anyway)."""
    quoted = "\n".join(re.findall(r"```.*?```|`[^`]+`", defect.report, flags=re.S))
    initial_lines = {line.strip() for line in defect.replace.splitlines()}
    for repaired in (defect.find, *defect.fixes):
        for line in repaired.splitlines():
            code = line.strip()
            # Short fragments ("x", "n + 1") occur in honest reports; only a line with some
            # structure counts.
            if len(code) >= 12 and code not in initial_lines and code in quoted:
                return code
    return None


def task_toml(task_id: str, kata: Kata) -> str:
    doc = TaskToml(metadata=Metadata(id=task_id, source="katas", context=kata.context, difficulty=kata.difficulty,
                                     kata=kata.id),
                   agent=Agent(timeout_sec=AGENT_TIMEOUT_S), verifier=Verifier(timeout_sec=VERIFIER_TIMEOUT_S),
                   environment=Environment(python=">=3.11", packages=[kata.package]))
    return dump_task_toml(doc)


def solve_sh(kata: Kata) -> str:
    """Harbor's oracle step: replace the working program by the reference repair. The target
    folder is the first argument (default: the current folder)."""
    top_level = sorted(p.name for p in kata.reference_dir.iterdir() if p.name != "__pycache__")
    names = " ".join(top_level)
    return (
        "#!/bin/sh\n"
        "# Copy the reference repair (solution/program) over the working program.\n"
        "set -eu\n"
        'here="$(cd "$(dirname "$0")" && pwd)"\n'
        'target="${1:-.}"\n'
        f"for name in {names}; do\n"
        '  rm -rf "$target/$name"\n'
        '  cp -R "$here/program/$name" "$target/$name"\n'
        "done\n"
    )
