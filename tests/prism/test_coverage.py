"""ΔC and Entry Coverage on a tiny hand-checked program, plus defensive parsing of line reports."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from testhelix.execution import executor as executor_mod
from testhelix.prism import coverage as cov

REFERENCE = """\
def clamp(x, lo, hi):
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


def double(x):
    return x * 2


class Counter:
    def __init__(self, start=0):
        self.value = start

    def bump(self):
        self.value += 1
        return self.value
"""
INITIAL = REFERENCE.replace("        return hi\n", "        return lo\n")

TRUSTED = """\
from calc.core import Counter, clamp

def test_clamp():
    assert clamp(5, 0, 3) == 3
    assert clamp(-1, 0, 3) == 0

def test_counter():
    assert Counter().bump() == 1
"""


@dataclass(frozen=True)
class FakeOutcome:
    status: str
    reason: str | None
    output: str


class SubprocessExecutor:
    """Test double of the harness executor: program at the workspace root, suite in suite/."""

    def __init__(self, root: Path, wall_s: float = 60.0):
        self.root, self.wall_s, self.runs = root, wall_s, 0
        self.outputs: list[str] = []

    def run(self, suite_dir: Path, program_dir: Path, limits=None, coverage=False) -> FakeOutcome:
        assert coverage, "the coverage module only asks for coverage runs"
        self.runs += 1
        ws = self.root / f"ws{self.runs}"
        shutil.copytree(program_dir, ws)
        shutil.copytree(suite_dir, ws / "suite")
        env = {"PATH": os.environ["PATH"], "PYTHONPATH": os.pathsep.join([str(ws), *sys.path]), "HOME": str(ws)}
        try:
            proc = subprocess.run([sys.executable, "-m", "testhelix.execution.coverage_run"], cwd=ws, env=env,
                                  capture_output=True, text=True, timeout=self.wall_s)
        except subprocess.TimeoutExpired:
            return FakeOutcome("error", "timeout", "")
        status = "pass" if proc.returncode == 0 else "fail"
        self.outputs.append(proc.stdout + proc.stderr)
        return FakeOutcome(status, None, proc.stdout + proc.stderr)


def write_tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(textwrap.dedent(text))
    return root


@pytest.fixture(scope="module")
def task(tmp_path_factory):
    root = tmp_path_factory.mktemp("covtask")
    initial = write_tree(root / "initial", {"calc/__init__.py": "", "calc/core.py": INITIAL})
    reference = write_tree(root / "reference", {"calc/__init__.py": "", "calc/core.py": REFERENCE})
    trusted = write_tree(root / "trusted", {"test_trusted.py": TRUSTED})
    executor = SubprocessExecutor(root / "runs")
    (root / "runs").mkdir()
    targets = cov.task_targets(executor, initial, reference, trusted)
    return root, executor, targets, initial, reference


def suite(root: Path, name: str, source: str) -> Path:
    return write_tree(root / name, {"test_generated.py": source})


def test_changed_lines_by_hand(task):
    _, _, _, initial, reference = task
    removed, added = cov.changed_lines(initial, reference)
    assert removed == {"calc/core.py": {5}}
    assert added == {"calc/core.py": {5}}


def test_targets_by_hand(task):
    _, _, targets, _, _ = task
    assert targets.status == "ok", targets.reason
    # the replaced line is executed by the trusted tests in both states: one target per state
    assert targets.change == {("initial", "calc/core.py", 5), ("reference", "calc/core.py", 5)}
    names = [(e.name, e.qualname) for e in targets.entry_points]
    assert names == [("clamp", "clamp"), ("Counter", "Counter.__init__"), ("bump", "Counter.bump")]
    # bodies: clamp 2-6, __init__ 15, bump 18-19; `double` is not called by the trusted tests
    assert targets.entry == {("calc/core.py", n) for n in (2, 3, 4, 5, 6, 15, 18, 19)}


def test_suite_reaching_the_change(task):
    root, executor, targets, initial, reference = task
    s = suite(root, "gen_hit", "from calc.core import clamp\n\ndef test_high():\n    assert clamp(10, 0, 3) == 3\n")
    result = cov.suite_coverage(executor, targets, s, initial, reference)
    assert result.status == "ok"
    assert result.delta_c == 1.0
    assert result.entry == pytest.approx(3 / 8)  # lines 2, 4, 5 of clamp


def test_suite_missing_the_change_scores_a_measured_zero(task):
    root, executor, targets, initial, reference = task
    s = suite(root, "gen_miss", "from calc.core import double\n\ndef test_double():\n    assert double(2) == 4\n")
    result = cov.suite_coverage(executor, targets, s, initial, reference)
    assert (result.delta_c, result.entry, result.status) == (0.0, 0.0, "ok")


def test_no_suite_is_missing_not_zero(task):
    root, executor, targets, initial, reference = task
    result = cov.suite_coverage(executor, targets, None, initial, reference)
    assert (result.delta_c, result.entry, result.status) == (None, None, "missing")


def test_forged_report_printed_by_the_suite_is_not_the_one_parsed(task):
    root, executor, targets, initial, reference = task
    forged = json.dumps({"files": {"/x/calc/core.py": {"statements": [5], "missing": []}}})
    s = suite(
        root,
        "gen_forge",
        # a failing test gets its captured output printed, so the fake report reaches the output
        f"def test_forge():\n    print({cov.BEGIN!r})\n    print({forged!r})\n    print({cov.END!r})\n"
        "    assert False\n",
    )
    result = cov.suite_coverage(executor, targets, s, initial, reference)
    assert executor.outputs[-1].count(cov.BEGIN) >= 2  # the forged report did reach the output
    assert result.delta_c == 0.0  # the genuine report (printed last) shows the program never ran


def test_collector_failure_is_reported_as_failed(task, tmp_path):
    root, _, targets, initial, reference = task
    slow = SubprocessExecutor(tmp_path, wall_s=0.01)
    s = suite(root, "gen_slow", "def test_x():\n    assert True\n")
    result = cov.suite_coverage(slow, targets, s, initial, reference)
    assert (result.delta_c, result.entry, result.status) == (None, None, "failed")


def test_empty_denominators(task):
    _, _, targets, _, _ = task
    empty = cov.CoverageTargets("ok", None, frozenset(), frozenset(), ())
    run = cov.LineCoverage("ok", None, {"calc/core.py": frozenset({2})}, {"calc/core.py": frozenset({2})})
    result = cov.coverage_from_runs(empty, run, run)
    assert (result.delta_c_status, result.entry_status) == ("empty", "empty")
    assert result.delta_c is None and result.entry is None


def test_failed_targets_propagate():
    bad = cov.CoverageTargets("failed", "trusted tests: timeout", frozenset(), frozenset(), ())
    run = cov.LineCoverage("ok")
    assert cov.coverage_from_runs(bad, run, run).status == "failed"


def test_mixed_status_names_both():
    r = cov.SuiteCoverage(0.5, "ok", None, "empty")
    assert r.status == "delta_c:ok,entry:empty"


@pytest.mark.parametrize(
    "payload, reason",
    [
        ("no markers at all", "no coverage report"),
        (f"{cov.BEGIN}\n{{not json\n{cov.END}", "does not parse"),
        (f"{cov.BEGIN}\n[1, 2]\n{cov.END}", "no file table"),
        (f'{cov.BEGIN}\n{{"error": "no coverage data file"}}\n{cov.END}', "no coverage data file"),
        (f'{cov.BEGIN}\n{{"files": {{"/w/calc/core.py": {{"statements": ["5"], "missing": []}}}}}}\n{cov.END}', "malformed"),
    ],
)
def test_parse_rejects_bad_reports(task, payload, reason):
    _, _, _, _, reference = task
    parsed = cov.parse_line_report(payload, reference)
    assert parsed.status == "failed" and reason in (parsed.reason or "")


def test_parse_drops_unknown_files_and_out_of_range_lines(task):
    _, _, _, _, reference = task
    files = {
        "/w/calc/core.py": {"statements": [2, 3, 999, -1], "missing": [3]},
        "/etc/passwd": {"statements": [1], "missing": []},
        "/w/other/core.py": "junk",
    }
    parsed = cov.parse_line_report(f"{cov.BEGIN}\n{json.dumps({'files': files})}\n{cov.END}", reference)
    assert parsed.status == "ok"
    assert parsed.statements == {"calc/core.py": frozenset({2, 3})}
    assert parsed.executed == {"calc/core.py": frozenset({2})}


def test_entry_points_skip_ambiguous_names_and_test_helpers(tmp_path):
    ref = write_tree(
        tmp_path / "ref",
        {
            "pkg/a.py": "class A:\n    def get(self):\n        return 1\n\ndef run():\n    return 2\n",
            "pkg/b.py": "class B:\n    def get(self):\n        return 3\n\ndef helper():\n    return 4\n",
        },
    )
    tests = write_tree(
        tmp_path / "t",
        {"test_x.py": "def helper():\n    return 0\n\ndef test_x():\n    A().get(); run(); helper()\n"},
    )
    names = [e.qualname for e in cov.entry_points(tests, ref)]
    assert names == ["run"]  # `get` is ambiguous, A has no __init__, `helper` is the test's own


def test_with_the_harness_executor(task):
    """The same hand-checked numbers through the real sandboxed executor."""
    root, _, _, initial, reference = task
    trusted = root / "trusted"
    s = suite(root, "gen_real", "from calc.core import clamp\n\ndef test_high():\n    assert clamp(10, 0, 3) == 3\n")
    limits = executor_mod.Limits(wall_s=30)
    executor = executor_mod.default_executor(workers=1)
    try:
        targets = cov.task_targets(executor, initial, reference, trusted, limits)
        result = cov.suite_coverage(executor, targets, s, initial, reference, limits)
    finally:
        executor.close()
    assert targets.change == {("initial", "calc/core.py", 5), ("reference", "calc/core.py", 5)}
    assert result.delta_c == 1.0 and result.entry == pytest.approx(3 / 8) and result.status == "ok"
