"""Judging one submitted suite on a task: outcomes on the initial program, the reference and every
panel candidate, and the task indicators F, A, R, S (DESIGN §5).

`reference_only` is the single-reference mode used by strategy search: only the initial program and
the reference run, which is all F needs.
"""

from __future__ import annotations

import math
from pathlib import Path

from testhelix.prism.metrics import task_indicators
from testhelix.prism.outcome import Limits, Outcome
from testhelix.prism.task import Task, panel_programs

MAX_TEST_WALL_S = 180.0  # DESIGN §4: test execution limit min(180 s, the task's test timeout)
PANEL_TRACEBACK = "line"  # panel outputs are kept but read by no agent: the cheap traceback style


def task_limits(task: Task) -> Limits:
    wall = min(MAX_TEST_WALL_S, task.verifier_timeout_s)
    return Limits(wall_s=wall, cpu_s=max(1, math.ceil(wall)), traceback=PANEL_TRACEBACK)


def _score(task: Task, programs: list, outcomes: list[Outcome]) -> dict:
    by_id = {pid: (role, label, o) for (pid, role, label, _), o in zip(programs, outcomes)}
    ind = task_indicators({pid: (role, o.status) for pid, (role, _, o) in by_id.items()})
    return {"task": task.id,
            "outcomes": {pid: {"outcome": o.status, "reason": o.reason} for pid, (_, _, o) in by_id.items()},
            "F": int(ind.F), "A": ind.A, "R": ind.R, "S": int(ind.S),
            "_rows": [{"program_id": pid, "role": role, "label": label, "status": o.status, "reason": o.reason}
                      for pid, (role, label, o) in by_id.items()]}


def evaluate_task(executor, task: Task, suite: Path) -> dict:
    """Outcomes on the initial program, the reference and every candidate, with F, A, R, S."""
    programs = panel_programs(task)
    return _score(task, programs, executor.run_many([(suite, tree) for *_, tree in programs], task_limits(task)))


def reference_only(executor, task: Task, suite: Path) -> dict:
    programs = [p for p in panel_programs(task) if p[1] in ("initial", "reference")]
    return _score(task, programs, executor.run_many([(suite, tree) for *_, tree in programs], task_limits(task)))


def missing_rows(task: Task) -> list[dict]:
    return [{"program_id": pid, "role": role, "label": label, "status": "missing", "reason": "no suite submitted"}
            for pid, role, label, _ in panel_programs(task)]
