"""Running TestHelix over a split: every (model, configuration) on every task, each submitted suite
judged on the hidden panel by TestPrism, everything stored; finished tasks are never redone.

Labels are `<model>/<config>` (e.g. `sim:strong/C`; a compatible server is named without its URL,
so a restarted server on another port resumes the same run). A task's row in `task_results` is
written last, after its outcomes, so a task whose row exists is complete and a resumed run skips it.

Up to `tasks_in_flight` tasks run at once through the work backend the runner is built with
(testhelix/parallel/build.py builds both from a RunSetup; testhelix/parallel/): `evaluate_one` judges
a task without writing any result, and the driver thread records each result as it arrives
(`record`), so a run killed at any point keeps every finished task. A local thread writes a task's
model-call ledger rows in one go when the task ends (`TaskLedger`) and cached executions as they
happen (through the store's lock); both come back with the result from a remote worker (`absorb`).
With `concurrent_pairs` the pairs of a task
run concurrently too (`HelixContext.concurrent`); results are the same either way.

Every evaluation ends as a typed result (testhelix/helix/results.py): `Finished`, or, when the
provider prevents it (a `ModelError` after the SDK's retries), `Incomplete`: the driver stores its
cause (`record_incomplete`: no result row, no outcomes) and a resumed run tries the task again. Authentication and
configuration errors are raised as they are: they stop the whole job.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from testhelix.agent.budget import Budget, LedgerSink
from testhelix.core.digest import tree_sha256
from testhelix.core.errors import EvaluationIncomplete, UserError
from testhelix.execution.environments import executor_for
from testhelix.helix.config import RunConfig
from testhelix.helix.context import HelixContext
from testhelix.helix.detail import BudgetUse, HelixEvent, SubmissionDetail
from testhelix.helix.jobs import Backend, ProgressSink, TaskJob
from testhelix.helix.pipeline import run_task
from testhelix.helix.results import Finished, Incomplete, TaskResult, Usage, WorkerRecords
from testhelix.llm.base import ChatModel, ModelError
from testhelix.llm.modelref import ModelRef
from testhelix.llm.registry import create_model
from testhelix.prism.coverage import MISSING, CoverageMeter
from testhelix.prism.evaluation import evaluate_task, no_submission, record_panel_order, reference_only
from testhelix.prism.judgement import TaskMetrics
from testhelix.store.runs import task_finished
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Strategy
from testhelix.strategy.skills import load_library
from testhelix.tasks.task import Task, load_task

if TYPE_CHECKING:
    from testhelix.execution.executor import Executor

ModelFactory = Callable[[ModelRef, Task, int], ChatModel]


def default_model_factory(ref: ModelRef, task: Task, seed: int) -> ChatModel:
    return create_model(ref, task=task, seed=seed)


def evaluation_seed(seed: int, label: str) -> int:
    """The model's seed for one evaluation: the run's seed and the run label, so two evaluations
    (two strategies, a gate's two arms, two configurations) sample separately and a resumed one
    samples as before. Hosted models ignore it; a simulated model reads it only for `noise=P`."""
    return int(hashlib.sha256(f"{seed}\0{label}".encode()).hexdigest()[:12], 16)


@dataclass
class HelixRunner:
    store: RunStore | None  # None on a Ray worker: results go back to the driver, which alone writes
    executor: Executor
    work_root: Path
    model_factory: ModelFactory = default_model_factory
    coverage: bool = True
    panel: bool = True                 # False: single-reference mode (initial + reference only)
    call_timeout_s: float | None = None  # upper bound on one model call (the deadline bounds it anyway)
    concurrent_pairs: bool = False     # a task's pairs (and reviews) at once (RunSetup: pairs_in_parallel)
    backend: Backend | None = None     # a testhelix.parallel backend (testhelix/parallel/build.py); None: one task at a time
    progress: ProgressSink | None = None  # the live display (parallel/progress.py), or None

    def __post_init__(self) -> None:
        self.library = load_library()
        self.promotion: dict | None = None  # configuration E's promotion status (testhelix/helix/promotion.py)
        self.meter = CoverageMeter(self.executor)
        self.tasks: dict[str, Task] = {}
        self._digests: dict[str, str] = {}

    def require_store(self) -> RunStore:
        if self.store is None:
            raise RuntimeError("this HelixRunner has no store (a worker's runner); it only evaluates jobs")
        return self.store

    def run_label(self, model: ModelRef, config: RunConfig) -> str:
        return f"{model.label}/{config.name}"

    def done(self, label: str, task_id: str) -> bool:
        return task_finished(self.require_store(), label, task_id)

    def run_one(self, task: Task, strategy: Strategy, config: RunConfig, model: ModelRef, label: str,
                record: bool = True) -> Finished:
        """Run the pipeline on one task and judge its submission; store it unless `record` is off.
        An evaluation the provider prevented raises `EvaluationIncomplete` (after storing its cause)."""
        result = self.evaluate_one(task, strategy, config, model, label)
        match result:
            case Incomplete():
                if record:
                    self.record_incomplete(result)
                raise EvaluationIncomplete(task.id, result.cause, result.error)
            case Finished():
                if record:
                    self.record(task, result)
                return result

    def evaluate_one(self, task: Task, strategy: Strategy, config: RunConfig, model: ModelRef, label: str,
                     sink: LedgerSink | None = None) -> TaskResult:
        """Pipeline + judgement of one task; writes no result (model calls go to `sink`, default the
        store, written when the task ends: `TaskLedger`). A provider failure gives `Incomplete`
        (with its cause) instead of `Finished`. `config` is the one the strategy runs under, checked
        where they met (config.strategy_run_config)."""
        if sink is not None:
            return self._evaluate_one(task, strategy, config, model, label, sink)
        ledger = TaskLedger(self.require_store())
        try:
            return self._evaluate_one(task, strategy, config, model, label, ledger)
        finally:
            ledger.flush()     # whatever ended the task: every call it made is in the ledger

    def _evaluate_one(self, task: Task, strategy: Strategy, config: RunConfig, model: ModelRef, label: str,
                      sink: LedgerSink) -> TaskResult:
        started = time.monotonic()
        budget = Budget(config.token_cap, run_label=label, task_id=task.id,
                        sink=_Tee(sink, self.progress.call if self.progress else None),
                        call_timeout_s=self.call_timeout_s)
        work = self.work_root / _safe(label) / task.id
        # A task evaluation always starts from nothing: what an interrupted attempt left here (a
        # suite half written, a repaired copy, a copy a full disk cut short) is never reused, so a
        # resumed run evaluates the task exactly as an uninterrupted one does.
        shutil.rmtree(work, ignore_errors=True)
        ctx = HelixContext(task=task, strategy=strategy, config=config,
                           model=self.model_factory(model, task, evaluation_seed(config.seed, label)), budget=budget,
                           executor=executor_for(self.executor, task), work_dir=work, library=self.library,
                           concurrent=self.concurrent_pairs)
        budget.deadline = ctx.deadline
        try:
            result = run_task(ctx)
        except ModelError as err:
            if err.fatal:
                raise
            return Incomplete(task_id=task.id, run_label=label, cause=err.cause, error=str(err),
                              usage=Usage(tokens=budget.used, calls=budget.calls))
        suite = result.submission.suite_dir
        if suite is None:
            judged = no_submission(task)  # an error on every program: it stays in every denominator
        else:
            judged = evaluate_task(self.executor, task, suite) if self.panel else reference_only(self.executor, task, suite)
        cov = self.meter.measure(task, suite) if self.coverage else MISSING
        detail = SubmissionDetail(
            submission=result.submission.rule, pair=result.submission.pair, support=result.submission.support,
            pairs=list(result.pairs), events=[HelixEvent.model_validate(e) for e in result.events],
            budget=BudgetUse(cap=budget.cap_tokens, used=budget.used, refused=budget.refused),
            elided=_elided(work), simulated=model.simulated or budget.simulated_calls > 0)
        return Finished(task_id=task.id, run_label=label, metrics=TaskMetrics(judged.indicators, cov),
                        submitted=suite is not None, suite_digest=judged.suite_digest, rule=result.submission.rule,
                        detail=detail, outcomes=judged.outcomes, panel_order=judged.panel_order,
                        usage=Usage(tokens=budget.used, calls=budget.calls),
                        wall_s=round(time.monotonic() - started, 3))

    def record(self, task: Task, result: Finished) -> None:
        """Store one finished task (driver thread): its outcomes, then its result row, in one transaction."""
        store = self.require_store()
        with store.transaction():
            store.record_task(task.id, task.source, task.context, task.difficulty, task.reference.sha256)
            store.record_task_outcomes(result.run_label, task.id, result.outcome_rows())
            record_panel_order(store, result.run_label, task.id, result.panel_order)
            store.record_task_result(result.row())

    def absorb(self, result: TaskResult) -> TaskResult:
        """Store what a remote worker could not (its model-call ledger rows and fresh executions) and
        return the result without them, so they are stored once. Called for every result on the
        driver thread (`evaluate_jobs`)."""
        records = result.records
        if not records.ledger and not records.executions:
            return result
        store = self.require_store()
        for row in records.ledger:
            store.record_model_call(row)
            if self.progress is not None:
                self.progress.call(row)
        for key, row in records.executions:
            store.put_execution(key, row)
        return replace(result, records=WorkerRecords())

    # --- many tasks -------------------------------------------------------------------------
    def job(self, task: Task, strategy: Strategy, config: RunConfig, model: ModelRef, label: str) -> TaskJob:
        self.tasks.setdefault(task.id, task)
        digest = ""
        if self.backend is not None and self.backend.remote:     # only a job that leaves this process needs the digest
            digest = self._digests.get(task.id) or self._digests.setdefault(task.id, tree_sha256(task.root))
        return TaskJob(task.id, str(task.root), digest, strategy, config, model, label)

    def evaluate_job(self, job: TaskJob, sink: LedgerSink | None = None) -> TaskResult:
        """A job on this process: the task by id when known here, else from its path, digest-checked."""
        task = self.tasks.get(job.task_id)
        if task is None:
            task = load_task(Path(job.task_path))
            if job.task_digest and tree_sha256(task.root) != job.task_digest:
                raise UserError(f"{job.task_path}: task {job.task_id} differs from the driver's copy (digest mismatch)")
            self.tasks[job.task_id] = task
        return self.evaluate_one(task, job.strategy, job.config, job.model, job.label, sink)

    def evaluate_jobs(self, jobs: Sequence[TaskJob]) -> Iterator[tuple[TaskJob, TaskResult]]:
        """Results in completion order, handed to the calling (driver) thread, each after what a
        remote worker sent with it is stored (`absorb`)."""
        progress = self.progress
        if progress is not None:
            progress.add_total(len(jobs))
            if self.backend is not None:
                self.backend.on_start = progress.started
        for job, result in self._results(jobs):
            result = self.absorb(result)        # a remote worker's ledger rows: the calls were made
            if progress is not None:
                progress.finished(result)
            yield job, result

    def _results(self, jobs: Sequence[TaskJob]) -> Iterator[tuple[TaskJob, TaskResult]]:
        """The backend's results; without one, the jobs one after another here (the reference order)."""
        if self.backend is not None:
            yield from self.backend.run(jobs, self.evaluate_job)
            return
        for job in jobs:
            if self.progress is not None:
                self.progress.started(job)
            yield job, self.evaluate_job(job)

    def record_incomplete(self, result: Incomplete) -> None:
        """The named step for "evaluation incomplete": store the cause (no metric row, no outcomes)."""
        self.require_store().record_incomplete(result.run_label, result.task_id, result.cause, result.error,
                                               result.usage.tokens, result.usage.calls)

    def run(self, tasks: Sequence[Task], plans: Sequence[tuple[ModelRef, RunConfig, Strategy]],
            on_task: Callable[[str, TaskResult | None], None] = lambda label, r: None) -> None:
        jobs = []
        for model, config, strategy in plans:   # each config already the strategy's (strategy_run_config)
            label = self.run_label(model, config)
            meta = {"model": model.given, "config": config.name, "tasks": len(tasks),
                    "strategy_hash": strategy.content_hash(), "pairs": config.pairs, "token_cap": config.token_cap}
            if config.name == "E":  # was its strategy promoted, and by which gate (testhelix/helix/promotion.py)
                meta["promotion"] = self.promotion
            self.require_store().record_run(label, "helix", meta)
            for task in tasks:
                if self.done(label, task.id):
                    on_task(label, None)
                else:
                    jobs.append(self.job(task, strategy, config, model, label))
        for job, result in self.evaluate_jobs(jobs):
            match result:
                case Incomplete():
                    self.record_incomplete(result)
                case Finished():
                    self.record(self.tasks[job.task_id], result)
            on_task(job.label, result)


class TaskLedger:
    """One task's model-call rows, kept in memory and written to the store in one go when the task
    ends (`flush`, also after an error), or every `FLUSH_ROWS` rows: one multi-row INSERT instead
    of one INSERT per call under the store's lock (about 10 ms each in DuckDB, while every other
    thread of the run waits for the lock). The ledger stays exact; a crash loses at most the rows
    of the tasks it interrupted, whose results are not stored either, so a resumed run redoes them
    (crash-safe at task granularity). The live display still sees each row as it happens (`_Tee`)."""

    FLUSH_ROWS = 500

    def __init__(self, store: RunStore):
        self.store = store
        self._rows: list[dict] = []
        self._lock = threading.Lock()

    def record_model_call(self, row: dict) -> None:
        with self._lock:
            self._rows.append(dict(row))
            full = len(self._rows) >= self.FLUSH_ROWS
        if full:
            self.flush()

    def flush(self) -> None:
        with self._lock:
            rows, self._rows = self._rows, []
        if rows:
            self.store.record_model_calls(rows)


class _Tee:
    """A LedgerSink that forwards each row and shows it to a watcher (the progress display)."""

    def __init__(self, inner: LedgerSink | None, watch: Callable[[dict], None] | None):
        self.inner, self.watch = inner, watch

    def record_model_call(self, row: dict) -> None:
        if self.inner is not None:
            self.inner.record_model_call(row)
        if self.watch is not None:
            self.watch(row)


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
