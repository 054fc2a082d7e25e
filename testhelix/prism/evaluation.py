"""Judging one submitted suite on a task: outcomes on the initial program, the reference and every
panel candidate, and the task indicators F, A, R, S.

`reference_only` is the single-reference mode used by strategy search: only the initial program and
the reference run, which is all F needs.

The panel runs in an order shuffled with a secret token drawn per evaluation on the host
(`secrets`); neither the task id nor the suite, both known to the suite, predicts it, and nothing
a job can observe varies with its position (see the README, "How suites are executed"). The token
and the order are returned as `_panel_order` and stored in `panel_orders` for audit. A suite whose
shape breaks a limit (execution/shape.py) is an `error` on every program, with the reason. A task
without a submitted suite is judged too: an `error` on every program (`no_submission`), so it stays
in every denominator without credit.
"""

from __future__ import annotations

import math
import random
import secrets
from pathlib import Path

from testhelix.digest import tree_sha256
from testhelix.execution.environments import executor_for
from testhelix.execution.outcome import Limits, Outcome
from testhelix.execution.shape import suite_problem
from testhelix.prism.metrics import task_indicators
from testhelix.tasks.task import Task, panel_programs

MAX_TEST_WALL_S = 180.0  # the test execution limit: min(180 s, the task's test timeout)
PANEL_TRACEBACK = "line"  # panel outputs are kept but read by no agent: the cheap traceback style


def task_limits(task: Task) -> Limits:
    wall = min(MAX_TEST_WALL_S, task.verifier_timeout_s)
    return Limits(wall_s=wall, cpu_s=max(1, math.ceil(wall)), traceback=PANEL_TRACEBACK)


def _score(task: Task, programs: list, outcomes: list[Outcome], order: dict | None) -> dict:
    by_id = {pid: (role, label, o) for (pid, role, label, _), o in zip(programs, outcomes)}
    ind = task_indicators({pid: (role, o.status) for pid, (role, _, o) in by_id.items()})
    return {"task": task.id,
            "outcomes": {pid: {"outcome": o.status, "reason": o.reason} for pid, (_, _, o) in by_id.items()},
            "F": int(ind.F), "A": ind.A, "R": ind.R, "S": int(ind.S), "_panel_order": order,
            "_rows": [{"program_id": pid, "role": role, "label": label, "status": o.status, "reason": o.reason}
                      for pid, (role, label, o) in by_id.items()]}


def _run_shuffled(executor, task: Task, suite: Path, programs: list) -> tuple[list[Outcome], dict]:
    """Outcomes in `programs` order, executed in an order drawn from a fresh secret; with the
    audit record {"token", "run_order": program ids as run}."""
    token = secrets.token_hex(16)
    order = list(range(len(programs)))
    random.Random(token).shuffle(order)
    # A task with pinned requirements runs in its own environment's pool (environments.py).
    ran = executor_for(executor, task).run_many([(suite, programs[i][-1]) for i in order], task_limits(task))
    outcomes: list[Outcome | None] = [None] * len(programs)
    for i, outcome in zip(order, ran):
        outcomes[i] = outcome
    return outcomes, {"token": token, "run_order": [programs[i][0] for i in order]}  # type: ignore[return-value]


def evaluate_task(executor, task: Task, suite: Path) -> dict:
    """Outcomes on the initial program, the reference and every candidate, with F, A, R, S, and
    `_suite_digest` (None for a refused suite)."""
    return _judge(executor, task, suite, panel_programs(task))


def reference_only(executor, task: Task, suite: Path) -> dict:
    return _judge(executor, task, suite, [p for p in panel_programs(task) if p[1] in ("initial", "reference")])


def _judge(executor, task: Task, suite: Path, programs: list) -> dict:
    problem = suite_problem(Path(suite)) if Path(suite).is_dir() else None
    if problem is not None:  # an error on every program of this task; nothing of the suite is read
        refusal = Outcome(status="error", reason=f"suite refused: {problem}", tests_run=None, duration_s=0.0,
                          output="")
        return {**_score(task, programs, [refusal] * len(programs), None), "_suite_digest": None}
    judged = _score(task, programs, *_run_shuffled(executor, task, suite, programs))
    return {**judged, "_suite_digest": tree_sha256(suite) if Path(suite).is_dir() else None}


def record_panel_order(store, run_label: str, task_id: str, order: dict | None) -> None:
    """Keep an evaluation's secret order (its `_panel_order`) in the store's panel_orders, for audit."""
    if order:
        store.upsert("panel_orders", {"run_label": run_label, "task_id": task_id, "token": order["token"],
                                      "run_order": order["run_order"]})


NO_SUBMISSION = "missing entry: no suite submitted"


def missing_rows(task: Task) -> list[dict]:
    """The outcome rows of a task without a submitted suite: an error on every program."""
    return [{"program_id": pid, "role": role, "label": label, "status": "error", "reason": NO_SUBMISSION}
            for pid, role, label, _ in panel_programs(task)]


def no_submission(task: Task) -> tuple[list[dict], dict]:
    """(rows, scores) of a task without a submitted suite; the scores follow from the rows
    (F=0, S=0, A and R 0 wherever the panel has such candidates)."""
    rows = missing_rows(task)
    ind = task_indicators({r["program_id"]: (r["role"], r["status"]) for r in rows})
    return rows, {"F": int(ind.F), "A": ind.A, "R": ind.R, "S": int(ind.S)}
