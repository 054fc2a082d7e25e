"""A small strategy search in its own process, for the fault-injection tests.

The real Search, RunStore, DAG and ModelOptimizer (with the simulated optimizer model, a test
double) run against a deterministic evaluator that needs no execution; every evaluation records one
simulated model call like the real evaluator does. `FAULT=name:N` makes the N-th call of `name`
kill this process with SIGKILL (no clean-up of any kind runs), e.g. `put_state:3` dies inside the
third DAG commit; `name:N:PATH` pauses there instead until the file PATH exists.

    python search_worker.py run RUN_DIR [FAULT]

Errors go through the same entry point as the real commands (one line, exit 2).
"""

from __future__ import annotations

import hashlib
import os
import signal
import sys
import time
from pathlib import Path

import click

from autosaddler import store as search_store
from autosaddler.config import load_config
from autosaddler.optimizer import ModelOptimizer
from autosaddler.search import Search
from autosaddler.traces import PublicTrace, TaskEval
from testhelix.agent.budget import Budget
from testhelix.commands.plumbing import entry_point
from testhelix.helix.results import Usage
from testhelix.llm.registry import create_optimizer_model, model_ref
from testhelix.store import migrations
from testhelix.store import runstore as store_module
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Strategy

PROPOSAL = [f"p{i:03d}" for i in range(24)]
DEV = [f"d{i:03d}" for i in range(6)]
CONFIG = {"train_minibatch_size": 4, "completed_train_iterations": 3, "max_candidate_proposals": 5,
          "development_limit": None, "workers": 1}
META = {"pack": "worker-pack", "model": "sim:strong", "optimizer_model": "sim:strong", "preset": "demo",
        "config": load_config("demo", overrides=CONFIG).model_dump(), "split_file": None}


class SimEvaluator:
    """Success from a hash of (task, strategy); one simulated ledger row per evaluation."""

    def __init__(self, store: RunStore):
        self.store = store

    def evaluate(self, strategy, task_ids):
        out = {}
        for t in task_ids:
            h = int(hashlib.sha256(f"{t}/{strategy.content_hash()}".encode()).hexdigest(), 16) % 100
            skill = strategy.agentSteps * 3 + 15 * len(strategy.lessons) + (10 if strategy.guidance else 0)
            self.store.record_model_call({"run_label": f"search/{strategy.content_hash()[:12]}", "task_id": t,
                                          "role": "generation", "model": "sim:worker", "input_tokens": 100,
                                          "output_tokens": 10, "status": "ok", "simulated": True})
            success = int(h < skill)
            trace = PublicTrace(context="kata", success=success, exit="done", steps=3, elided=0,
                                failed_initial=bool(success), passed_repair=bool(success), review="approve",
                                submission="only-qualified" if success else "none", instruction_excerpt="")
            out[t] = TaskEval(success=success, trace=trace, usage=Usage(tokens=110, calls=1))
        return out


def install_fault(spec: str) -> None:
    name, _, rest = spec.partition(":")
    nth, _, wait = rest.partition(":")
    targets = {"put_state": (RunStore, "put_state"), "upsert": (RunStore, "upsert"),
               "put_search_eval": (search_store, "put_search_eval"), "publish_snapshot": (RunStore, "publish_snapshot"),
               "record_model_call": (RunStore, "record_model_call"), "diagnose": (ModelOptimizer, "diagnose"),
               "evaluate": (SimEvaluator, "evaluate"), "migration": (migrations, "apply"),
               "link": (store_module.os, "link"), "close": (RunStore, "close")}
    owner, attr = targets[name]
    original = getattr(owner, attr)
    count = {"n": 0}

    def dying(*args, **kwargs):
        count["n"] += 1
        if count["n"] == int(nth):
            if wait:  # pause here (holding the store) until the test creates the file `wait`
                Path(wait + ".ready").touch()
                while not Path(wait).exists():
                    time.sleep(0.05)
            else:
                os.kill(os.getpid(), signal.SIGKILL)
        return original(*args, **kwargs)

    setattr(owner, attr, dying)


@click.group()
def cli() -> None:
    """The fault-injection search worker."""


@cli.command("run")
@click.argument("run_dir")
@click.argument("fault", required=False)
def run(run_dir: str, fault: str | None = None) -> None:
    if fault:
        install_fault(fault)
    store = RunStore(Path(run_dir), command="search_worker")
    store.put_state("meta", META)
    cfg = load_config("demo", overrides=CONFIG)
    optimizer = ModelOptimizer(create_optimizer_model(model_ref("sim:strong"), seed=cfg.seed),
                               Budget(5_000_000, label="optimizer", run_label="optimizer", sink=store))
    search = Search(cfg, store, SimEvaluator(store), optimizer, PROPOSAL, DEV)
    search.run(Strategy())
    store.close()


if __name__ == "__main__":
    entry_point(cli)(sys.argv[1:])
