"""Running TestHelix over a split: every (model, configuration) on every task, each submitted suite
judged on the hidden panel by TestPrism, everything stored; finished tasks are never redone.

Labels are `<model>/<config>` (e.g. `sim:strong/C`; a compatible server is named without its URL,
so a restarted server on another port resumes the same run). A task's row in `task_results` is
written last, after its outcomes, so a task whose row exists is complete and a resumed run skips it.

When the provider prevents an evaluation (a `ModelError` after the SDK's retries), the task gets no
result row and no outcomes: `record_incomplete` stores the cause, `EvaluationIncomplete` is raised
to the caller, and a resumed run tries the task again. Authentication and configuration errors are
raised as they are: they stop the whole job.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testhelix.agent.budget import Budget
from testhelix.digest import tree_sha256
from testhelix.errors import EvaluationIncomplete
from testhelix.helix.config import RunConfig
from testhelix.helix.context import HelixContext
from testhelix.helix.pipeline import run_task
from testhelix.llm.base import ModelError
from testhelix.llm.registry import create_model, model_label
from testhelix.prism.coverage import MISSING, CoverageMeter
from testhelix.prism.evaluation import evaluate_task, no_submission, reference_only
from testhelix.prism.task import Task
from testhelix.skills import load_library
from testhelix.store import RunStore
from testhelix.strategy.model import Strategy, check_run_compatibility

ModelFactory = Callable[[str, Task, int], Any]


def default_model_factory(name: str, task: Task, seed: int):
    return create_model(name, task=task, seed=seed)


@dataclass
class HelixRunner:
    store: RunStore
    executor: Any
    work_root: Path
    model_factory: ModelFactory = default_model_factory
    coverage: bool = True
    panel: bool = True                 # False: single-reference mode (initial + reference only)
    call_timeout_s: float | None = None  # upper bound on one model call (the deadline bounds it anyway)

    def __post_init__(self) -> None:
        self.library = load_library()
        self.meter = CoverageMeter(self.executor)

    def run_label(self, model: str, config: RunConfig) -> str:
        return f"{model_label(model)}/{config.name}"

    def done(self, label: str, task_id: str) -> bool:
        _, rows = self.store.query("SELECT 1 FROM task_results WHERE run_label = ? AND task_id = ?", [label, task_id])
        return bool(rows)

    def run_one(self, task: Task, strategy: Strategy, config: RunConfig, model_name: str, label: str,
                record: bool = True) -> dict:
        """Run the pipeline on one task and judge its submission; store it unless `record` is off."""
        check_run_compatibility(strategy, config.challenge_steps)
        started = time.monotonic()
        budget = Budget(config.token_cap, run_label=label, task_id=task.id, sink=self.store,
                        call_timeout_s=self.call_timeout_s)
        work = self.work_root / _safe(label) / task.id
        ctx = HelixContext(task=task, strategy=strategy, config=config,
                           model=self.model_factory(model_name, task, config.seed), budget=budget,
                           executor=self.executor, work_dir=work, library=self.library)
        budget.deadline = ctx.deadline
        try:
            result = run_task(ctx)
        except ModelError as err:
            if err.fatal:
                raise
            self.record_incomplete(label, task, err, budget, record)
        suite = result.submission.suite_dir
        if suite is None:
            rows, scores = no_submission(task)  # an error on every program: it stays in every denominator
        else:
            judged = evaluate_task(self.executor, task, suite) if self.panel else reference_only(self.executor, task, suite)
            rows, scores = judged["_rows"], {k: judged[k] for k in ("F", "A", "R", "S")}
        cov = self.meter.measure(task, suite) if self.coverage else MISSING
        detail = {"submission": result.submission.rule, "pair": result.submission.pair,
                  "support": result.submission.support, "pairs": list(result.pairs), "events": list(result.events),
                  "budget": {"cap": budget.cap_tokens, "used": budget.used, "refused": budget.refused},
                  "elided": _elided(work), "simulated": model_name.startswith("sim:")}
        row = {"run_label": label, "task_id": task.id, "submitted": suite is not None,
               "suite_digest": tree_sha256(suite) if suite is not None else None, **scores,
               "delta_c": cov.delta_c, "entry_coverage": cov.entry, "coverage_status": cov.status,
               "tokens": budget.used, "calls": budget.calls, "wall_s": round(time.monotonic() - started, 3),
               "detail": json.dumps(detail, default=str)}
        if record:
            with self.store.transaction():
                self.store.record_task(task.id, task.source, task.context, task.difficulty, task.reference.sha256)
                self.store.record_task_outcomes(label, task.id, rows)
                self.store.record_task_result(row)
        return {"task": task.id, **scores, "rule": result.submission.rule, "detail": detail, "row": row}

    def record_incomplete(self, label: str, task: Task, err: ModelError, budget: Budget, record: bool = True):
        """The named step for "evaluation incomplete": store the cause (no metric row), then raise."""
        if record:
            self.store.record_incomplete(label, task.id, err.cause, str(err), budget.used, budget.calls)
        raise EvaluationIncomplete(task.id, err.cause, str(err)) from err

    def run(self, tasks: Sequence[Task], plans: Sequence[tuple[str, RunConfig, Strategy]],
            on_task: Callable[[str, dict | None], None] = lambda label, r: None) -> None:
        for model_name, config, strategy in plans:
            label = self.run_label(model_name, config)
            self.store.record_run(label, "helix", {"model": model_name, "config": config.name, "tasks": len(tasks),
                                                   "strategy_hash": strategy.content_hash(),
                                                   "pairs": config.pairs, "token_cap": config.token_cap})
            for task in tasks:
                if self.done(label, task.id):
                    on_task(label, None)
                    continue
                try:
                    result = self.run_one(task, strategy, config, model_name, label)
                except EvaluationIncomplete as inc:
                    on_task(label, {"task": task.id, "incomplete": inc.cause, "error": inc.detail})
                    continue
                on_task(label, {k: v for k, v in result.items() if k not in ("detail", "row")})


def _elided(work: Path) -> int:
    """Observations trimmed from the context in this task's sessions (from the saved trajectories)."""
    total = 0
    for path in work.glob("pair*/trajectory-*.json"):
        try:
            total += sum(int(step.get("elided") or 0) for step in json.loads(path.read_text()).get("steps", []))
        except (OSError, ValueError):
            continue
    return total


def _safe(label: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", label)
