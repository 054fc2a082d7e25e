"""Run pytest on a suite under coverage.py and print the program's line data (the untrusted side).

This runs where the suite runs: in the fork server's test process (`run_under_coverage`, no new
interpreter: pytest and coverage are already imported), or, for another executor, as
`python -m testhelix.execution.coverage_run` in a workspace (program at the root, suite in suite/).
After pytest it prints one JSON report between the BEGIN/END markers:

    {"files": {"<program-relative path>": {"statements": [...], "missing": [...]}}}

The host side (coverage.py in this package) parses the last such block defensively: the suite runs
in the same process and could print or forge one, so coverage is a diagnostic, never a gate.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

import coverage
import pytest

BEGIN = "=====TESTHELIX-COVERAGE-BEGIN====="
END = "=====TESTHELIX-COVERAGE-END====="


def line_report(cov: coverage.Coverage, workspace: str, suite: str) -> dict:
    files: dict[str, Any] = {}
    for path in sorted(cov.get_data().measured_files()):
        real = os.path.realpath(path)
        if not real.startswith(workspace + os.sep) or real.startswith(suite + os.sep):
            continue  # outside the program, or the suite itself
        try:
            _, statements, _, missing, _ = cov.analysis2(path)
        except Exception:  # noqa: BLE001 - a file coverage cannot analyse is simply not reported
            continue
        files[os.path.relpath(real, workspace)] = {"statements": statements, "missing": missing}
    return {"files": files}


def run_under_coverage(args: Sequence[str], suite_subdir: str, plugins: Sequence[Any] = ()) -> int:
    """pytest.main(args) with line coverage of the workspace (the cwd); prints the report after."""
    workspace = os.path.realpath(os.getcwd())
    suite = os.path.join(workspace, suite_subdir)
    cov = coverage.Coverage(data_file=None, config_file=False, include=[os.path.join(workspace, "*")],
                            omit=[os.path.join(suite, "*")])
    cov.start()
    try:
        rc = pytest.main(list(args), plugins=list(plugins))
    finally:
        cov.stop()
    try:
        report = line_report(cov, workspace, suite)
    except Exception as exc:  # noqa: BLE001 - reported as a failed collection on the host
        report = {"error": f"coverage analysis failed: {type(exc).__name__}"}
    sys.stdout.write(f"\n{BEGIN}\n{json.dumps(report)}\n{END}\n")
    sys.stdout.flush()
    return int(rc)


def main() -> None:
    from testhelix.execution.outcome import Limits, pytest_args

    suite_subdir = sys.argv[1] if len(sys.argv) > 1 else "suite"
    sys.exit(run_under_coverage([*pytest_args(Limits()), suite_subdir], suite_subdir))


if __name__ == "__main__":
    main()
