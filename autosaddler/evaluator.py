"""Evaluating a strategy for the search and the gate: TestHelix on each task with the execution
model, scored in single-reference mode (F_i: the submitted suite fails the initial program and
passes the reference). The trace handed to the optimizer holds public information only.

Only a `Finished` evaluation becomes a score (`TaskEval.of`); an `Incomplete` one (the provider
prevented it) is stored as such and raised as `EvaluationIncomplete`, so the search and the gate
never rank on it (testhelix/helix/results.py)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence

from autosaddler.traces import PublicTrace, TaskEval
from testhelix.core.errors import EvaluationIncomplete
from testhelix.helix.config import RunConfig, strategy_run_config
from testhelix.helix.results import Finished, Incomplete
from testhelix.helix.runner import HelixRunner
from testhelix.llm.modelref import ModelRef
from testhelix.strategy.model import Strategy
from testhelix.tasks.task import Task

EXCERPT_CHARS = 400


class HelixStrategyEvaluator:
    def __init__(self, runner: HelixRunner, tasks: dict[str, Task], model: ModelRef, config: RunConfig, scope: str):
        self.runner = runner
        self.tasks = tasks
        self.model = model
        self.config = config
        self.scope = scope              # ledger label prefix, e.g. "search" or "gate"

    def evaluate(self, strategy: Strategy, task_ids: Sequence[str], label: str | None = None) -> dict[str, TaskEval]:
        out = dict(self.evaluate_each(strategy, task_ids, label))
        return {t: out[t] for t in task_ids}

    def evaluate_each(self, strategy: Strategy, task_ids: Sequence[str],
                      label: str | None = None) -> Iterator[tuple[str, TaskEval]]:
        """Up to the runner's `jobs` tasks at once; each (task id, evaluation) as soon as it finishes.
        The run label (default `<scope>/<hash>`) names the evaluation, and with it the sampling seed
        of a model that samples (bench/validity.py plays one strategy under another's label)."""
        label = label or self.label(strategy)
        config = strategy_run_config(self.config, strategy)   # checked once per evaluation, not per task
        jobs = [self.runner.job(self.tasks[t], strategy, config, self.model, label) for t in task_ids]
        for job, result in self.runner.evaluate_jobs(jobs):   # a remote worker's records already stored
            match result:
                case Incomplete(cause=cause, error=error):
                    inc = EvaluationIncomplete(job.task_id, cause, error)
                    self.record_incomplete(strategy, job.task_id, inc)
                    raise inc
                case Finished():
                    yield job.task_id, TaskEval.of(result, public_trace(self.tasks[job.task_id], result))

    def label(self, strategy: Strategy, arm: str = "") -> str:
        """`<scope>/<hash>`, or `<scope>/<arm>/<hash>` for one arm of a comparison (the gate's
        challenger and baseline are two evaluations even when they are the same strategy)."""
        return f"{self.scope}/{arm + '/' if arm else ''}{strategy.content_hash()[:12]}"

    def record_incomplete(self, strategy: Strategy, task_id: str, inc: EvaluationIncomplete) -> None:
        """The named step for an evaluation the provider prevented: stored (as `search:<hash>`, so
        `testhelix report` and the DAG count it until the evaluation finishes), never scored."""
        if self.scope == "search":
            label = f"search:{strategy.content_hash()}"
            self.runner.require_store().record_incomplete(label, task_id, inc.cause, inc.detail, 0, 0)


def public_trace(task: Task, result: Finished) -> PublicTrace:
    """What the optimizer may see of one attempt (no ids, no hidden material, no panel outcomes)."""
    detail = result.detail
    pairs = detail.pairs
    exits = Counter(session_exit for p in pairs for session_exit in p.sessions)
    return PublicTrace(
        context=task.context,
        success=int(result.metrics.success),
        exit=exits.most_common(1)[0][0] if exits else "none",
        steps=sum(len(p.sessions) for p in pairs),
        elided=detail.elided,
        failed_initial=any(p.initial and all(s == "fail" for s in p.initial) for p in pairs),
        passed_repair=any(p.repair and all(s == "pass" for s in p.repair) for p in pairs),
        review="revise" if any(p.approved is False for p in pairs) else "approve",
        submission=detail.submission,
        instruction_excerpt=task.instruction[:EXCERPT_CHARS],
    )
