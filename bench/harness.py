"""Benchmark: the same panel executions three ways, in one run.

1. naive: one sequential `python -m pytest` subprocess per execution (no sandbox, no reuse);
2. the project's executor (fork servers, one per core, sandboxed), cold cache;
3. the executor again with the warm outcome cache.

Executions: every (suite, program) pair of the panels of the first tasks of a pack, where the
suites are the task's trusted tests (and, for the fixture pack, its fixture suites), taking tasks
until there are --min-executions of them; a small pack is repeated in variants with distinct
digests, so nothing is served from the cache in pass 2. Uses the bundled katas pack (unpacked on
first use) unless --pack names another. Both the naive baseline and the executor run pytest with the
same arguments (pytest_args), with the panel evaluation's traceback style. Prints the three
times, the two ratios, and ends with `executor_speedup=X cache_speedup=Y naive_start_s=Z`.

The naive ratio measures this machine's start-up of `python -m pytest` as much as the executor
(it was 28x on a machine where that start took 1.15 s, 10-12x where it took 0.3-0.4 s), so the
start-up time (`python -m pytest --version`, the mean of five) is printed beside it. The
executor's cost against the floor no sandbox can beat is bench/job_cpu.py's.

    python bench/harness.py [--pack DIR] [--min-executions 200] [--workers N] [--fresh-programs]
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from testhelix.core.digest import tree_sha256  # noqa: E402
from testhelix.execution.executor import ForkServerExecutor  # noqa: E402
from testhelix.execution.outcome import Limits, pytest_args  # noqa: E402
from testhelix.execution.protocols import Executor  # noqa: E402
from testhelix.execution.seam import create_executor  # noqa: E402
from testhelix.prism.evaluation import PANEL_TRACEBACK  # noqa: E402
from testhelix.tasks.task import Task, load_pack, panel_programs  # noqa: E402


def _suite_sources(task: Task) -> list[dict[str, str]]:
    """Suites for a task: its trusted tests, plus fixture suites when the pack is the fixture pack."""
    out = []
    tests = {p.name: p.read_text() for p in sorted(task.trusted_tests_dir.glob("test_*.py"))}
    if tests:
        out.append(tests)
    fixture_suites = ROOT / "tests" / "fixtures" / "tasks" / "suites"
    for set_dir in sorted(fixture_suites.glob("*")):
        d = set_dir / task.id
        if d.is_dir():
            out.append({p.name: p.read_text() for p in sorted(d.glob("*.py"))})
    return out


def build_jobs(pack: Path, work: Path, minimum: int, fresh_programs: bool = False) -> list[tuple[Path, Path]]:
    """Panel executions of the first tasks of the pack (by id) until there are `minimum` of them;
    a pack too small for that is repeated with suite variants (distinct digests). With
    `fresh_programs`, a task is skipped when one of its programs was already taken (tasks of one
    kata share most of their panel), so that no program is ever run twice."""
    tasks, chosen, count = load_pack(pack), [], 0
    seen: set[str] = set()
    for task in tasks:
        if count >= minimum:
            break
        digests = {tree_sha256(tree) for *_, tree in panel_programs(task)}
        if fresh_programs and digests & seen:
            continue
        seen |= digests
        chosen.append(task)
        count += len(_suite_sources(task)) * len(panel_programs(task))
    if count == 0:
        raise SystemExit(f"{pack}: no suites to run")
    variants = max(1, -(-minimum // count))
    jobs = []
    for v in range(variants):
        for task in chosen:
            for i, files in enumerate(_suite_sources(task)):
                suite = work / f"v{v}" / task.id / f"s{i}"
                suite.mkdir(parents=True)
                for name, text in files.items():
                    # Tasks of one kata share their trusted tests: the header keeps every pair distinct.
                    (suite / name).write_text(f"# variant {v} of {task.id}\n{text}")
                jobs += [(suite, tree) for *_, tree in panel_programs(task)]
    return jobs


def naive(jobs: list[tuple[Path, Path]], limits: Limits) -> tuple[float, list[str]]:
    statuses = []
    started = time.perf_counter()
    for suite, program in jobs:
        with tempfile.TemporaryDirectory() as ws:
            shutil.copytree(program, ws, dirs_exist_ok=True)
            shutil.copytree(suite, Path(ws) / "suite")
            env = {**os.environ, "PYTHONPATH": ws, "PYTHONDONTWRITEBYTECODE": "1"}
            try:
                rc = subprocess.run([sys.executable, "-m", "pytest", *pytest_args(limits), "suite"],
                                    cwd=ws, env=env, capture_output=True, timeout=limits.wall_s).returncode
            except subprocess.TimeoutExpired:
                rc = None
        # The seed's conventions: the runner's exit status, except no tests collected (5) and the
        # harness's own timeout, which are errors.
        statuses.append("error" if rc in (None, 5) else "pass" if rc == 0 else "fail")
    return time.perf_counter() - started, statuses


def naive_start_s(runs: int = 5) -> float:
    """Mean wall time of a `python -m pytest` that runs nothing: what every naive execution pays."""
    started = time.perf_counter()
    for _ in range(runs):
        subprocess.run([sys.executable, "-m", "pytest", "--version"], capture_output=True, check=True)
    return (time.perf_counter() - started) / runs


def sandbox_kind(executor: Executor) -> str:
    return executor.sandbox.kind if isinstance(executor, ForkServerExecutor) else type(executor).__name__


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--pack", type=Path)
    ap.add_argument("--min-executions", type=int, default=200)
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--fresh-programs", action="store_true",
                    help="never run a program twice (no reuse of compiled programs across executions)")
    args = ap.parse_args()
    pack = args.pack
    if pack is None:
        from testhelix.core.bundled_data import bundled_pack

        pack = bundled_pack("katas", log=print)
    limits = Limits(wall_s=60, cpu_s=60, traceback=PANEL_TRACEBACK)  # as the panel evaluation runs them
    with tempfile.TemporaryDirectory(prefix="prism-bench-") as tmp:
        jobs = build_jobs(pack, Path(tmp), args.min_executions, args.fresh_programs)
        print(f"pack {pack} — {len(jobs)} executions")
        t_naive, naive_status = naive(jobs, limits)
        print(f"naive sequential pytest subprocesses: {t_naive:8.2f} s")
        with create_executor("forkserver", workers=args.workers) as ex:  # the pool behind the outcome cache
            ex.run(*jobs[0], limits)  # start the fork servers outside the timed region
            ex.memory = type(ex.memory)()  # ... and forget that one outcome
            started = time.perf_counter()
            cold = ex.run_many(jobs, limits)
            t_exec = time.perf_counter() - started
            print(f"executor ({ex.workers} workers, {sandbox_kind(ex.inner)} sandbox): {t_exec:8.2f} s "
                  f"({ex.executions - 1} executions)")
            if ex.executions - 1 != len(jobs):  # identical pairs would run once: not a fair comparison
                raise SystemExit(f"bench error: only {ex.executions - 1} of {len(jobs)} pairs are distinct")
            started = time.perf_counter()
            warm = ex.run_many(jobs, limits)
            t_warm = time.perf_counter() - started
            print(f"executor, warm cache:                  {t_warm:8.4f} s")
        agree = sum(a == b.status for a, b in zip(naive_status, cold))
        print(f"naive and executor agree on {agree}/{len(jobs)} outcomes; warm cache hits "
              f"{sum(o.cached for o in warm)}/{len(jobs)}")
        start_s = naive_start_s()
        print(f"naive start-up (python -m pytest --version): {start_s:.3f} s per execution; "
              f"load average {os.getloadavg()[0]:.2f}")
        print(f"executor_speedup={t_naive / t_exec:.1f} cache_speedup={t_naive / t_warm:.1f} naive_start_s={start_s:.3f}")


if __name__ == "__main__":
    main()
