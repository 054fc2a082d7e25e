"""Benchmark: the local model (llama.cpp on CPU) -- tokens per second, seconds per agent step,
seconds per task at --jobs 1 and --jobs 2.

1. Raw generation: one fixed prompt, greedy, no grammar, `--gen-tokens` tokens; prompt and
   generation speed from the runtime's own token counts.
2. Tasks: `testhelix run --pack katas --split test --limit N --config A --model MODEL` in a fresh run
   folder, once with --jobs 1 and once with --jobs 2 (same seed: the per-task outcomes must be equal,
   the script stops with an error otherwise). Seconds per agent step = wall time / model calls of
   the run (its ledger); seconds per task = wall time / tasks. Ends with `jobs2_speedup=X`
   (--jobs 1 wall / --jobs 2 wall, measured in this process).

    python bench/local_model.py [--model local:smollm2-135m] [--tasks 2] [--gen-tokens 128]

Needs the `local` extra. Timings depend on the machine's load: quote `uptime` with them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def generation_speed(model: str, tokens: int) -> tuple[float, float]:
    """(prompt tokens per second, generated tokens per second) for one greedy completion."""
    from testhelix.llm.local import _llama, context_window, model_path
    path = model_path(model.partition(":")[2])
    llama = _llama(path, context_window(path))
    prompt = "Write a pytest test module for a function chunk(items, size) that splits a list. " * 8
    n_prompt = len(llama.tokenize(prompt.encode()))
    llama.reset()
    start = time.perf_counter()
    llama.eval(llama.tokenize(prompt.encode()))
    prompt_s = time.perf_counter() - start
    llama.reset()
    start = time.perf_counter()
    out = llama.create_completion(prompt=prompt, max_tokens=tokens, temperature=0.0, top_k=1)
    total_s = time.perf_counter() - start
    generated = out["usage"]["completion_tokens"]
    return n_prompt / prompt_s, generated / max(1e-9, total_s - prompt_s)


def run_tasks(model: str, tasks: int, jobs: int, root: Path) -> tuple[float, int, dict]:
    """(wall seconds, model calls, per-task outcome) for one `testhelix run` at --jobs."""
    run = root / f"jobs{jobs}"
    cmd = [str(Path(sys.executable).with_name("testhelix")), "run", "--pack", "katas", "--split", "test", "--limit", str(tasks),
           "--config", "A", "--model", model, "--run", str(run), "--jobs", str(jobs), "--json"]
    start = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=os.environ.copy())
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"testhelix run --jobs {jobs} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    from testhelix.store.runstore import RunStore
    store = RunStore(run)
    try:
        calls = len(store.model_calls())
    finally:
        store.close()
    return wall, calls, outcomes(json.loads(done.stdout))


def outcomes(result: dict) -> dict:
    """task id -> what the run recorded for it (configuration A's per-task result)."""
    tasks = result.get("tasks") or result.get("results") or result
    return json.loads(json.dumps(tasks, sort_keys=True, default=str))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default="local:smollm2-135m")
    ap.add_argument("--tasks", type=int, default=2)
    ap.add_argument("--gen-tokens", type=int, default=128)
    args = ap.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")
    prompt_tps, gen_tps = generation_speed(args.model, args.gen_tokens)
    print(f"prompt_tokens_per_s={prompt_tps:.1f} generated_tokens_per_s={gen_tps:.1f} (one thread, greedy)")
    with tempfile.TemporaryDirectory(prefix="local-bench-") as tmp:
        walls = {}
        seen = {}
        for jobs in (1, 2):
            wall, calls, result = run_tasks(args.model, args.tasks, jobs, Path(tmp))
            walls[jobs], seen[jobs] = wall, result
            print(f"jobs={jobs} tasks={args.tasks} wall_s={wall:.1f} s_per_task={wall / args.tasks:.1f} "
                  f"model_calls={calls} s_per_agent_step={wall / max(1, calls):.2f}")
        if seen[1] != seen[2]:
            sys.exit("the per-task results differ between --jobs 1 and --jobs 2")
    print(f"jobs2_speedup={walls[1] / walls[2]:.2f}")


if __name__ == "__main__":
    main()
