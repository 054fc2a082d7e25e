"""Wiring a search or a gate to a pack, a split file, the execution model and the run store."""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from autosaddler.config import SearchConfig
from autosaddler.evaluator import HelixStrategyEvaluator
from testhelix.bundle import recorded_pack
from testhelix.errors import UserError
from testhelix.helix.config import get_config
from testhelix.helix.runner import HelixRunner
from testhelix.llm.registry import resolve
from testhelix.splits import SplitFile, load_checked_split_file
from testhelix.store import RunStore
from testhelix.tasks.task import Task, load_pack


@dataclass
class PackSplits:
    pack: Path
    tasks: dict[str, Task]
    split: SplitFile

    def ids(self, name: str) -> list[str]:
        return self.split.ids(name)


def load_pack_splits(pack: Path, split_file: Path | None = None) -> PackSplits:
    pack = recorded_pack(pack)      # a resumed run may name a bundled pack's cache folder that was cleared
    split = load_checked_split_file(
        pack, split_file, f"no split file for this pack (make one with `testhelix splits make --pack {pack}`)")
    return PackSplits(pack, {t.id: t for t in load_pack(pack)}, split)


def refuse_spent(store: RunStore, pack_name: str, *names: str) -> None:
    _, rows = store.query("SELECT split, gate_id FROM spent_splits WHERE pack = ?", [pack_name])
    spent = {r[0]: r[1] for r in rows}
    for name in names:
        if name in spent:
            raise UserError(f"split {name!r} of {pack_name} was spent by release gate {spent[name]} in this run; "
                            "release outcomes may not feed further search")


@contextmanager
def helix_evaluator(store: RunStore, run_dir: Path, tasks: dict[str, Task], model: str, cfg: SearchConfig,
                    scope: str, jobs: int | None = None, backend: str = "local", ray_address: str | None = None):
    """`jobs` tasks at once (default by model kind) on the local thread pool or a Ray cluster."""
    from testhelix.execution.cache import StoreOutcomeCache
    from testhelix.execution.seam import create_executor
    from testhelix.parallel import WorkerSettings, default_jobs, execution_servers, make_backend

    resolve(model)
    jobs = jobs or default_jobs([model])
    helix = get_config(cfg.helix_config, token_cap=cfg.per_task_token_cap, seed=cfg.seed,
                       agent_time_limit_s=cfg.agent_time_limit_s)
    # a local pool shared by `jobs` concurrent evaluations gets more servers than executions at once
    servers = execution_servers(cfg.workers, jobs) if backend == "local" else cfg.workers
    with create_executor(workers=servers, cache=StoreOutcomeCache(store)) as executor:
        runner = HelixRunner(store, executor, Path(run_dir) / "work", coverage=False, panel=False, jobs=jobs)
        settings = WorkerSettings(executor_workers=cfg.workers, coverage=False, panel=False,
                                  work_root=str(Path(run_dir).resolve() / "work"), concurrent_pairs=jobs > 1)
        runner.backend = make_backend(backend, jobs, runner.evaluate_job, settings, ray_address)
        try:
            yield HelixStrategyEvaluator(runner, tasks, model, helix, scope)
        finally:
            runner.backend.close()
