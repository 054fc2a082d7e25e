"""Judging one submitted suite on a task: outcomes on the initial program, the reference and every
panel candidate, and the task indicators F, A, R, S.

`reference_only` is the single-reference mode used by strategy search: only the initial program and
the reference run, which is all F needs.

The answer is a `Judgement` (testhelix/prism/judgement.py). The panel runs in an order shuffled
with a secret token drawn per evaluation on the host (`secrets`); neither the task id nor the suite,
both known to the suite, predicts it, and nothing a job can observe varies with its position (see
the README, "How suites are executed"). The token and the order are returned as the judgement's
`panel_order` and stored in `panel_orders` for audit. A suite whose
shape breaks a limit (execution/shape.py) is an `error` on every program, with the reason. A task
without a submitted suite is judged too: an `error` on every program (`no_submission`), so it stays
in every denominator without credit.
"""

from __future__ import annotations

import math
import random
import secrets
from pathlib import Path
from typing import TYPE_CHECKING

from testhelix.core.digest import tree_sha256
from testhelix.execution.environments import executor_for
from testhelix.execution.outcome import Limits, Outcome
from testhelix.execution.shape import suite_problem
from testhelix.prism.judgement import Judgement, PanelOrder, ProgramOutcome
from testhelix.prism.metrics import task_indicators
from testhelix.tasks.task import Task, panel_programs

if TYPE_CHECKING:
    from testhelix.execution.protocols import Executor
    from testhelix.store.runstore import RunStore

PanelProgram = tuple[str, str, str, Path]  # (program id, role, label, tree): tasks.task.panel_programs

MAX_TEST_WALL_S = 180.0  # the test execution limit: min(180 s, the task's test timeout)
PANEL_TRACEBACK = "line"  # panel outputs are kept but read by no agent: the cheap traceback style


def task_limits(task: Task) -> Limits:
    wall = min(MAX_TEST_WALL_S, task.verifier_timeout_s)
    return Limits(wall_s=wall, cpu_s=max(1, math.ceil(wall)), traceback=PANEL_TRACEBACK)


def _judgement(task: Task, programs: list, outcomes: list[Outcome], order: PanelOrder | None,
               suite_digest: str | None) -> Judgement:
    rows = tuple(ProgramOutcome(pid, role, label, o.status, o.reason)
                 for (pid, role, label, _), o in zip(programs, outcomes))
    return _judged(task, rows, order, suite_digest)


def _judged(task: Task, rows: tuple[ProgramOutcome, ...], order: PanelOrder | None,
            suite_digest: str | None) -> Judgement:
    by_id = {o.program_id: o for o in rows}     # one outcome per program id, the last one kept
    ind = task_indicators({pid: (o.role, o.status) for pid, o in by_id.items()})
    return Judgement(task_id=task.id, indicators=ind, outcomes=tuple(by_id.values()), panel_order=order,
                     suite_digest=suite_digest)


def _run_shuffled(executor: Executor, task: Task, suite: Path, programs: list[PanelProgram]) -> tuple[list[Outcome], PanelOrder]:
    """Outcomes in `programs` order, executed in an order drawn from a fresh secret; with the
    audit record (the token, the program ids as run)."""
    token = secrets.token_hex(16)
    order = list(range(len(programs)))
    random.Random(token).shuffle(order)
    # A task with pinned requirements runs in its own environment's pool (environments.py).
    ran = executor_for(executor, task).run_many([(suite, programs[i][-1]) for i in order], task_limits(task))
    outcomes: list[Outcome | None] = [None] * len(programs)
    for i, outcome in zip(order, ran):
        outcomes[i] = outcome
    return outcomes, PanelOrder(token, tuple(programs[i][0] for i in order))  # type: ignore[return-value]


def evaluate_task(executor: Executor, task: Task, suite: Path) -> Judgement:
    """Outcomes on the initial program, the reference and every candidate, with F, A, R, S, and
    the suite's digest (None for a refused suite)."""
    return _judge(executor, task, suite, panel_programs(task))


def reference_only(executor: Executor, task: Task, suite: Path) -> Judgement:
    return _judge(executor, task, suite, [p for p in panel_programs(task) if p[1] in ("initial", "reference")])


def _judge(executor: Executor, task: Task, suite: Path, programs: list[PanelProgram]) -> Judgement:
    problem = suite_problem(Path(suite)) if Path(suite).is_dir() else None
    if problem is not None:  # an error on every program of this task; nothing of the suite is read
        refusal = Outcome(status="error", reason=f"suite refused: {problem}", tests_run=None, duration_s=0.0,
                          output="")
        return _judgement(task, programs, [refusal] * len(programs), None, None)
    outcomes, order = _run_shuffled(executor, task, suite, programs)
    return _judgement(task, programs, outcomes, order, tree_sha256(suite) if Path(suite).is_dir() else None)


def record_panel_order(store: RunStore, run_label: str, task_id: str, order: PanelOrder | None) -> None:
    """Keep an evaluation's secret order (its judgement's `panel_order`) in the store's panel_orders."""
    if order is not None:
        store.upsert("panel_orders", {"run_label": run_label, "task_id": task_id, "token": order.token,
                                      "run_order": list(order.run_order)})


NO_SUBMISSION = "missing entry: no suite submitted"


def no_submission(task: Task) -> Judgement:
    """The judgement of a task without a submitted suite: an error on every program, so F=0, S=0,
    and A and R 0 wherever the panel has such candidates (it stays in every denominator)."""
    rows = tuple(ProgramOutcome(pid, role, label, "error", NO_SUBMISSION) for pid, role, label, _ in panel_programs(task))
    return _judged(task, rows, None, None)
