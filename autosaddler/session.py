"""Wiring a search or a gate to a pack, a split file, the execution model and the run store."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from autosaddler.config import SearchConfig
from autosaddler.evaluator import HelixStrategyEvaluator
from autosaddler.store import spent_splits
from testhelix.commands.run_options import RunOptions
from testhelix.core.bundled_data import recorded_pack
from testhelix.core.errors import UserError
from testhelix.helix.config import get_config
from testhelix.llm.modelref import ModelRef
from testhelix.run.setup import RunSetup
from testhelix.store.runstore import RunStore
from testhelix.tasks.splits import SplitFile, load_checked_split_file
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
    spent = spent_splits(store, pack_name)
    for name in names:
        if name in spent:
            raise UserError(f"split {name!r} of {pack_name} was spent by release gate {spent[name]} in this run; "
                            "release outcomes may not feed further search")


@contextmanager
def helix_evaluator(store: RunStore, run_dir: Path, tasks: dict[str, Task], model: ModelRef, cfg: SearchConfig,
                    scope: str, setup: RunSetup) -> Iterator[HelixStrategyEvaluator]:
    """The strategy evaluator of a search or gate: a runner and backend built from `setup`
    (testhelix/parallel/build.py, as `testhelix run` builds its own)."""
    from testhelix.parallel.build import task_runner

    helix = get_config(cfg.helix_config, token_cap=cfg.per_task_token_cap, seed=cfg.seed,
                       agent_time_limit_s=cfg.agent_time_limit_s)
    with task_runner(setup, store, Path(run_dir) / "work", coverage=False, panel=False) as runner:
        yield HelixStrategyEvaluator(runner, tasks, model, helix, scope)


def search_setup(options: RunOptions, model: ModelRef, cfg: SearchConfig) -> RunSetup:
    """A search's or gate's RunSetup: the shared options, with the settings' `workers` as the
    default number of execution slots."""
    return options.setup([model], execution_slots=cfg.workers)
