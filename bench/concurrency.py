"""Benchmark: one 25-task search minibatch under configuration C, sequential and concurrent.

A simulated model with a latency (`sim:weak?latency=1`: every call answers after ~1 s, with seeded
jitter) stands in for a real one, whose calls take seconds. The minibatch is the first one a search
would draw (the proposal split in its seeded order), evaluated as `autosaddler search` evaluates it
(the paper preset: configuration C, K = 3, single-reference scoring), three times in fresh run folders:

1. `--jobs 1`: one task after another, the pairs of a task one after another (the reference order);
2. `--jobs N` (default 16) on the local thread pool;
3. `--jobs N` on a local Ray cluster (skipped with --no-ray or when Ray is not installed).

Every run must give identical results (success and optimizer trace per task, model-call count);
the script stops with an error otherwise. Prints the wall times and ends with
`concurrency_speedup=X` and `ray_speedup=Y` (both against --jobs 1, measured in this run).

    python bench/concurrency.py [--tasks 25] [--model 'sim:weak?latency=1'] [--jobs 16] [--no-ray]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autosaddler.config import load_config  # noqa: E402
from autosaddler.session import (  # noqa: E402
    PackSplits,
    helix_evaluator,
    load_pack_splits,
    search_setup,
)
from testhelix.commands.run_options import RunOptions  # noqa: E402
from testhelix.llm.registry import model_ref  # noqa: E402
from testhelix.store.runstore import RunStore  # noqa: E402
from testhelix.strategy.model import initial_strategy  # noqa: E402


def minibatch(splits: PackSplits, size: int, seed: int) -> list[str]:
    order = sorted(splits.ids("proposal"))
    random.Random(seed).shuffle(order)       # the order a search draws its minibatches in
    return order[:size]


def evaluate(root: Path, name: str, splits: PackSplits, ids: list[str], model: str, jobs: int,
             backend: str) -> tuple[float, dict]:
    run = root / name
    cfg = load_config("paper")
    store = RunStore(run)
    started = time.monotonic()
    try:
        ref = model_ref(model)      # the bench's edge: --model resolved once
        setup = search_setup(RunOptions(jobs=jobs, backend=backend), ref, cfg)
        with helix_evaluator(store, run, splits.tasks, ref, cfg, "bench", setup) as ev:
            out = ev.evaluate(initial_strategy(), ids)
        wall = time.monotonic() - started
        _, rows = store.query("SELECT count(*) FROM model_calls")
    finally:
        store.close()
    summary = {"results": {t: {"success": o.success, "trace": o.trace.model_dump() if o.trace else None}
                           for t, o in sorted(out.items())},
               "model_calls": rows[0][0]}
    print(f"{name:>10}: {wall:8.1f} s  successes {sum(o.success for o in out.values())}/{len(ids)}  "
          f"model calls {rows[0][0]}", flush=True)
    return wall, summary


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pack", type=Path, default=None, help="Task pack folder (default: the bundled katas pack).")
    ap.add_argument("--tasks", type=int, default=25)
    ap.add_argument("--model", default="sim:weak?latency=1")
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--no-ray", action="store_true")
    args = ap.parse_args()
    from testhelix.core.bundled_data import bundled_pack

    splits = load_pack_splits(args.pack or bundled_pack("katas", log=print))
    ids = minibatch(splits, args.tasks, load_config("paper").seed)
    root = Path(tempfile.mkdtemp(prefix="bench-concurrency-"))
    print(f"{len(ids)} proposal tasks, configuration C (paper preset), model {args.model} "
          "(a simulated test double with latency)", flush=True)
    try:
        runs = {f"jobs{args.jobs}": evaluate(root, f"jobs{args.jobs}", splits, ids, args.model, args.jobs, "local")}
        ray_ok = not args.no_ray
        if ray_ok:
            try:
                import ray  # noqa: F401
            except ImportError:
                print("ray: not installed (pip install -e '.[ray]'); skipped", flush=True)
                ray_ok = False
        if ray_ok:
            runs[f"ray{args.jobs}"] = evaluate(root, f"ray{args.jobs}", splits, ids, args.model, args.jobs, "ray")
        runs["jobs1"] = evaluate(root, "jobs1", splits, ids, args.model, 1, "local")
        base_wall, base = runs["jobs1"]
        for name, (_, summary) in runs.items():
            if summary != base:
                diff = [t for t in base["results"] if base["results"][t] != summary["results"].get(t)]
                sys.exit(f"results differ between jobs1 and {name}: tasks {diff[:5]}, model calls "
                         f"{base['model_calls']} vs {summary['model_calls']}")
        print(f"identical results across {', '.join(runs)} "
              f"({len(json.dumps(base['results']))} bytes of per-task results compared)")
        print(f"concurrency_speedup={base_wall / runs[f'jobs{args.jobs}'][0]:.2f}")
        if f"ray{args.jobs}" in runs:
            print(f"ray_speedup={base_wall / runs[f'ray{args.jobs}'][0]:.2f}")
        else:
            print("ray_speedup=n/a (Ray not run)")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
