"""Diagnostic: where the wall time of one concurrent minibatch evaluation goes.

Runs the same minibatch as bench/concurrency.py (configuration C, paper preset) once, with the given
--jobs, and records a timeline without changing behaviour (wrappers around existing methods):
per task its start and end; per model call its simulated wait; per execution the time spent waiting
for an idle fork server and the time the server took; store writes (and waits for the store lock);
the process's own CPU time. Prints a summary and writes the raw events as JSON lines.

    python bench/timeline.py --jobs 16 --out timeline.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import tempfile
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from autosaddler.config import load_config  # noqa: E402
from autosaddler.session import helix_evaluator, load_pack_splits, search_setup  # noqa: E402
from bench.concurrency import minibatch  # noqa: E402
from testhelix.commands.run_options import RunOptions  # noqa: E402
from testhelix.core.bundled_data import bundled_pack  # noqa: E402
from testhelix.llm.registry import model_ref  # noqa: E402
from testhelix.store.runstore import RunStore  # noqa: E402
from testhelix.strategy.model import initial_strategy  # noqa: E402

EVENTS: list[dict] = []
SERVER_CPU: dict[str, float] = {}
_lock = threading.Lock()
T0 = time.monotonic()


def _task() -> str:
    name = threading.current_thread().name
    return getattr(_local, "task", None) or name


_local = threading.local()


def emit(kind: str, start: float, end: float, **extra: Any) -> None:
    with _lock:
        EVENTS.append({"kind": kind, "start": round(start - T0, 4), "end": round(end - T0, 4),
                       "thread": threading.current_thread().name, **extra})


def wrap(cls: Any, name: str, kind: str, extra: Callable[..., dict] = lambda *a, **k: {}) -> None:
    original = getattr(cls, name)

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        start = time.monotonic()
        try:
            return original(*args, **kwargs)
        finally:
            emit(kind, start, time.monotonic(), **extra(*args, **kwargs))
    setattr(cls, name, wrapper)


def instrument() -> None:
    from testhelix.execution import executor as ex
    from testhelix.helix.runner import HelixRunner
    from testhelix.llm.sim.latency import LatencyModel
    from testhelix.store.runstore import RunStore as RS

    original_eval = HelixRunner.evaluate_job

    def evaluate_job(self: Any, job: Any, sink: Any = None) -> Any:
        _local.task = job.task_id
        start = time.monotonic()
        try:
            return original_eval(self, job, sink)
        finally:
            emit("task", start, time.monotonic(), task=job.task_id)
    setattr(HelixRunner, "evaluate_job", evaluate_job)  # noqa: B010 - a wrapper in place of the method

    original_sleep = LatencyModel.complete

    def complete(self: Any, request: Any) -> Any:
        start = time.monotonic()
        delay = self.delay_for(request)
        time.sleep(delay)
        mid = time.monotonic()
        out = self.inner.complete(request)
        emit("model_sleep", start, mid, task=threading.current_thread().name)
        emit("model_inner_cpu", mid, time.monotonic(), task=threading.current_thread().name)
        return out
    setattr(LatencyModel, "complete", complete)  # noqa: B010
    _ = original_sleep

    original_close = ex.ForkServerExecutor.close

    def close(self: Any) -> None:
        # the fork servers' and their jobs' CPU time (utime, stime, cutime, cstime), read before they stop
        tick = os.sysconf("SC_CLK_TCK")
        for pool, handles in ((f"executor{len(SERVER_CPU)}", self._handles),):
            total = 0.0
            for h in handles:
                if h.proc is not None:
                    try:
                        fields = Path(f"/proc/{h.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
                        total += sum(int(x) for x in fields[11:15]) / tick
                    except OSError:
                        pass
            SERVER_CPU[pool] = SERVER_CPU.get(pool, 0.0) + total
        return original_close(self)
    setattr(ex.ForkServerExecutor, "close", close)  # noqa: B010
    wrap(ex._ServerHandle, "call", "server_call")
    wrap(ex.ForkServerExecutor, "_execute", "execute")          # includes waiting for an idle server
    wrap(ex.ForkServerExecutor, "run_many", "run_many", lambda self, jobs, *a, **k: {"n": len(jobs)})
    wrap(ex.TreeCache if hasattr(ex, "TreeCache") else object, "ensure", "trees_ensure")
    for name in ("record_model_call", "put_execution", "get_execution", "record_task_result"):
        if hasattr(RS, name):
            wrap(RS, name, "store_" + name)


def summarise(wall: float, cpu: tuple[float, float]) -> None:
    by: defaultdict[str, list[float]] = defaultdict(list)
    for e in EVENTS:
        by[e["kind"]].append(e["end"] - e["start"])
    print(f"wall {wall:.1f} s; driver process CPU user {cpu[0]:.1f} s sys {cpu[1]:.1f} s")
    for kind, durs in sorted(by.items()):
        print(f"  {kind:>28}: n={len(durs):6d} total={sum(durs):9.1f} s  mean={sum(durs)/len(durs):7.3f} s  "
              f"max={max(durs):7.2f} s")
    calls = [e for e in EVENTS if e["kind"] == "server_call"]
    execs = [e for e in EVENTS if e["kind"] == "execute"]
    waits = sum(e["end"] - e["start"] for e in execs) - sum(e["end"] - e["start"] for e in calls)
    print(f"  waiting for an idle fork server (execute - server_call): {waits:.1f} s summed over threads")
    tasks = sorted((e for e in EVENTS if e["kind"] == "task"), key=lambda e: e["start"])
    for e in tasks:
        print(f"    task {e['task']:<40} {e['start']:7.1f} -> {e['end']:7.1f}  ({e['end'] - e['start']:6.1f} s)")
    # busy servers over time: how much of the wall time were 0/1/2 servers busy?
    points = sorted([(e["start"], 1) for e in calls] + [(e["end"], -1) for e in calls])
    busy, last = 0, 0.0
    hist: defaultdict[int, float] = defaultdict(float)
    for t, d in points:
        hist[busy] += t - last
        busy, last = busy + d, t
    hist[busy] += wall - last
    print("  fork servers busy (seconds of wall time at each count): "
          + ", ".join(f"{k}: {v:.1f}" for k, v in sorted(hist.items())))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--pack", type=Path, default=None)  # default: the bundled pack
    ap.add_argument("--tasks", type=int, default=25)
    ap.add_argument("--model", default="sim:weak?latency=1")
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--out", type=Path, default=Path("timeline.jsonl"))
    args = ap.parse_args()
    instrument()
    splits = load_pack_splits(args.pack or bundled_pack("katas"))
    ids = minibatch(splits, args.tasks, load_config("paper").seed)
    root = Path(tempfile.mkdtemp(prefix="bench-timeline-"))
    try:
        store = RunStore(root / "run")
        before = os.times()
        started = time.monotonic()
        global T0
        T0 = started
        cfg = load_config("paper")
        model = model_ref(args.model)   # the bench's edge: --model resolved once
        setup = search_setup(RunOptions(jobs=args.jobs), model, cfg)
        with helix_evaluator(store, root / "run", splits.tasks, model, cfg, "bench", setup) as ev:
            out = ev.evaluate(initial_strategy(), ids)
        wall = time.monotonic() - started
        after = os.times()
        store.close()
        print(f"successes {sum(o.success for o in out.values())}/{len(ids)}")
        summarise(wall, (after.user - before.user, after.system - before.system))
        ch = resource.getrusage(resource.RUSAGE_CHILDREN)
        print(f"  reaped children CPU (helpers, not the live fork servers): user {ch.ru_utime:.1f} s sys {ch.ru_stime:.1f} s")
        print(f"  fork servers + their jobs CPU: {SERVER_CPU}")
        with args.out.open("w") as f:
            for e in EVENTS:
                f.write(json.dumps(e) + "\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
