"""Bug reports of built packs: the flaw check, and every bundled pack's reports free of position
marks and of lines of the faulty program."""

from __future__ import annotations

from pathlib import Path

import pytest

from testhelix.core.bundled_data import bundled_packs, extract_archive
from testhelix.core.paths import tasks_dir
from testhelix.pack.create import RunResult
from testhelix.pack.reports import report_flaws, rewrite_report

CARET_OUTPUT = ("F\n____ test_check_01 ____\nsuite/test_program.py:4: in test_check_01\n"
                "    assert double(2) == 4\n           ^^^^^^^^^\nprogram.py:2: in double\n"
                "    return undefined_name * 2\n           ^^^^^^^^^^^^^^\nE   NameError: name 'undefined_name' is "
                "not defined\n==== short test summary info ====\n")


def _task(root: Path, report: str) -> Path:
    task = root / "t1"
    for sub in ("environment", "tests", "solution/program"):
        (task / sub).mkdir(parents=True)
    (task / "environment" / "program.py").write_text("def double(x):\n    return undefined_name * 2\n")
    (task / "solution" / "program" / "program.py").write_text("def double(x):\n    return x * 2\n")
    (task / "tests" / "test_program.py").write_text("from program import double\n\n\ndef test_check_01():\n"
                                                     "    assert double(2) == 4\n")
    (task / "instruction.md").write_text("# t1\n\n## Bug report\n\n" + report)
    return task


def test_the_check_finds_position_marks_and_program_lines_and_a_rewrite_removes_them(tmp_path):
    flawed = ("A user checked:\n\n```python\nassert double(2) == 4\n^^^^^^^^^\nreturn undefined_name * 2\n```\n\n"
              "and it failed:\n\n```\nNameError\n```\n")
    task = _task(tmp_path, flawed)
    assert {f.kind for f in report_flaws(task)} == {"position marks", "program line"}

    def verifier(tests, programs, traceback):
        assert traceback == "short" and programs == [task / "environment"]
        return [RunResult("fail", None, CARET_OUTPUT)]

    assert rewrite_report(task, "program.py", verifier) is None
    text = (task / "instruction.md").read_text()
    assert report_flaws(task) == [] and "assert double(2) == 4" in text and "NameError" in text
    assert text.startswith("# t1\n\n## Bug report\n\n")


@pytest.mark.parametrize("name", sorted(n for n, p in bundled_packs().items() if not p.members))
def test_no_bundled_bug_report_holds_a_caret_line_or_a_line_of_the_faulty_program(name, tmp_path):
    pack = bundled_packs()[name]
    extract_archive(tasks_dir() / pack.archive, tmp_path)
    tasks = [p for p in tmp_path.iterdir() if (p / "instruction.md").is_file()]
    assert len(tasks) == pack.tasks
    assert [f for t in tasks for f in report_flaws(t)] == []
