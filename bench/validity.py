"""Benchmark: does search plus release gate find what is there, and only that? A null study and
planted-effect studies of AutoSaddler's whole pipeline, in the configuration the README demo's gate
uses, on simulated models with explicit sampling noise.

What runs. The demo's pipeline code and settings (`--preset demo`, whatever it holds: TestHelix
configuration C, its minibatches, rounds and development tasks; the gate's settings as `autosaddler gate
--preset demo` loads them, seed 42, its two arms labelled as the gate labels them), with the
execution model `sim:weak?noise=P&seed=R` (each evaluation re-draws a share P of the simulated
decisions; replicate R is another simulated agent) and the optimizer `sim:strong`
(autosaddler/sim_optimizer.py). Each pipeline replicate runs the real search (propose, screen on
the minibatch, develop), freezes its best node by the freeze rule (`EvolutionDAG.best`) and decides
the gate with the gate's own `decide` on the 69 release tasks. The worlds (bench/validity_fixture.py):

- *null*: every strategy is played as the initial strategy under its own run label, so no strategy
  has any effect and every promotion is a false promotion;
- *planted* (a DECLARED TEST FIXTURE, used nowhere else): the null world plus one effect on a share
  S of each split's tasks (S = 0.05, 0.10, 0.20: 3, 7, 14 of the 69 release tasks, 4.3, 10.1 and
  20.3 points, spread round robin over the katas): a planted task succeeds exactly when the
  simulated agent's `check` cue reaches its prompt, and fails otherwise with a trace showing that
  no suite failed on the initial program.

What is replicated. `--replicates` (default 10) pipeline replicates R = 0..9, each running the null
world and every planted share (model seed R, search seed 1000 + R). `--null-gates` (default 60)
null gates in all: one after each null search (its frozen strategy, played as the initial one),
the others gates of the initial strategy against itself on fresh model seeds (R = 10..59) with no
search before them. That is no loss: in the null world the gate never sees the search's
evaluations (fresh labels, another split), so the only thing a search changes about a null gate
is its challenger's label; each gate is an independent draw of the gate under the null.

What is shared (only what is identical by construction): one executor for the whole study, so its
in-memory outcome cache (a suite run on a program, by digests) serves every replicate; within a
replicate, every real evaluation of a (run label, task) pair, because every world plays the initial
strategy under the same labels with the same model and seed -- so the worlds of one replicate
share the root's development and minibatch evaluations, the gate's baseline arm (the initial
strategy under `gate/baseline/...`), and any child two worlds both propose. The gates of the
study are not recorded in any release ledger.

Concurrency (results do not depend on it: every evaluation's model seed comes from its run label,
every world of a replicate runs in one thread, and rows are sorted before the summary): `--units`
units at once (a replicate, its worlds in turn, or a null gate), each with `--jobs` tasks in
flight, on one executor whose fork servers are sized for all of them.

Runtime (measured on a loaded 2-core machine; the quiet-machine figure is still to be measured). One
configuration-C task evaluation runs about 35 sandboxed suite executions, and they dominate its
cost: of 3.3 CPU s per evaluation (load 9-13) the driver process took 0.4, the fork servers and
their jobs the rest. The simulated agent writes different suites under different noise draws, so
the outcome cache serves almost nothing across evaluations (a second arm of 12 tasks ran 419 of
428 executions fresh). The default study plays about 11,600 to 13,700 evaluations (50 null gates
of 138, and 10 replicates of about 400 to 660), so at 2.5 CPU s per evaluation it needs about 8 to
10 CPU hours: at least 4 hours on two fully busy cores, not 30 minutes. No study that keeps 60
independent null gates and 10 whole-pipeline replicates per planted size fits: 50 independent null
gates alone are 6,900 evaluations, and 10 planted
replicates per size at least about 3,000 more.

Output: one JSON row per unit (lines starting with `{`, re-read by `--summarize`), progress lines
with elapsed time, evaluations played and CPU seconds (this process and its fork servers: CPU time
changes much less with load than wall time), then exact (Clopper-Pearson) 95% intervals for the
false-promotion rate beside the gate's exact size at the measured noise discordance, and for each
planted share the rate of each stage (proposed, screened in, developed, frozen, promoted) beside
the gate's exact power; the release-split size needed for power 0.8; a plot; and last

    false_promotions=A/N planted_promotions=B/M analytic_power=X      (B, M, X: the 10-point share)

    python bench/validity.py [--replicates 10] [--null-gates 60] [--noise 0.3] [--jobs 3] [--units 2]
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autosaddler.config import SearchConfig, load_config  # noqa: E402
from autosaddler.dag import Node  # noqa: E402
from autosaddler.edits import describe  # noqa: E402
from autosaddler.evaluator import HelixStrategyEvaluator  # noqa: E402
from autosaddler.gate import PairedOutcome, decide  # noqa: E402
from autosaddler.optimizer import ModelOptimizer  # noqa: E402
from autosaddler.search import Search  # noqa: E402
from autosaddler.session import PackSplits, load_pack_splits, search_setup  # noqa: E402
from bench.validity_fixture import Plant, StudyEvaluator, cue_reaches  # noqa: E402
from bench.validity_report import summarize  # noqa: E402
from testhelix.agent.budget import Budget  # noqa: E402
from testhelix.commands.run_options import RunOptions  # noqa: E402
from testhelix.core.bundled_data import bundled_pack  # noqa: E402
from testhelix.execution.seam import Executor  # noqa: E402
from testhelix.helix.config import get_config  # noqa: E402
from testhelix.llm.modelref import ModelRef  # noqa: E402
from testhelix.llm.registry import model_ref  # noqa: E402
from testhelix.parallel.build import build_runner, make_backend  # noqa: E402
from testhelix.run.setup import RunSetup  # noqa: E402
from testhelix.store.runstore import RunStore  # noqa: E402
from testhelix.strategy.model import Strategy, initial_strategy  # noqa: E402
from testhelix.tasks.splits import spread_by_context  # noqa: E402
from testhelix.tasks.task import Task  # noqa: E402

SHARES = (0.05, 0.10, 0.20)
SPLITS = ("proposal", "development", "release", "test")
OPTIMIZER_MODEL = "sim:strong"
SEARCH_SEED = 1000
TICK = os.sysconf("SC_CLK_TCK")


def tree_cpu() -> float:
    """CPU seconds of this process, its reaped children and every live descendant (with what
    each has reaped): the fork servers, their zygotes and keepers."""
    t = os.times()
    total = t.user + t.system + t.children_user + t.children_system
    stack, seen = [os.getpid()], set()
    while stack:
        pid = stack.pop()
        try:
            threads = list(Path(f"/proc/{pid}/task").iterdir())
        except OSError:
            continue
        for thread in threads:
            try:
                kids = [int(k) for k in (thread / "children").read_text().split()]
            except OSError:
                continue
            for kid in kids:
                if kid in seen:
                    continue
                seen.add(kid)
                stack.append(kid)
                try:
                    fields = Path(f"/proc/{kid}/stat").read_text().rsplit(")", 1)[1].split()
                except OSError:
                    continue
                total += sum(int(f) for f in fields[11:15]) / TICK
    return total


@contextmanager
def real_evaluator(store: RunStore, run_dir: Path, tasks: dict[str, Task], model: ModelRef, cfg: SearchConfig,
                   scope: str, setup: RunSetup, executor: Executor) -> Iterator[HelixStrategyEvaluator]:
    """autosaddler.session.helix_evaluator, except that the study's one executor (and with it its
    outcome cache) serves every run instead of one executor per run."""
    helix = get_config(cfg.helix_config, token_cap=cfg.per_task_token_cap, seed=cfg.seed,
                       agent_time_limit_s=cfg.agent_time_limit_s)
    backend = make_backend(setup)
    try:
        runner = build_runner(setup, store, executor, Path(run_dir) / "work", coverage=False, panel=False,
                              backend=backend)
        yield HelixStrategyEvaluator(runner, tasks, model, helix, "gate" if scope == "gate" else "search")
    finally:
        backend.close()


def node_line(node: Node) -> str:
    minibatch = (f", minibatch {sum(node.parent_outcomes.values())}->{sum(node.child_outcomes.values())}"
                 if node.child_outcomes else "")
    dev = "" if node.dev_score is None else f", development {100 * node.dev_score:.1f}%"
    return f"{node.node_id} {node.status}{minibatch}{dev}{'' if node.edit is None else ': ' + describe(node.edit)}"


class Study:
    def __init__(self, splits: PackSplits, noise: float, jobs: int, work: Path, executor: Executor) -> None:
        self.splits, self.noise, self.jobs, self.work, self.executor = splits, noise, jobs, work, executor
        self.gate_cfg = load_config("demo")          # what `autosaddler gate --preset demo` loads
        self.release = splits.ids("release")
        ids = splits.ids("development")
        tasks = splits.tasks
        self.development = spread_by_context(ids, {i: tasks[i].context for i in ids},
                                             {i: i.rsplit("-", 1)[0] for i in ids})
        self.played_evals = 0
        self._count = threading.Lock()
        self.started = time.monotonic()

    def count_played(self, n: int) -> None:
        with self._count:
            self.played_evals += n

    def progress(self, text: str) -> None:
        print(f"[{time.monotonic() - self.started:7.0f} s] {text}", flush=True)

    def model(self, r: int) -> ModelRef:
        return model_ref(f"sim:weak?noise={self.noise:g}&seed={r}")

    def gate(self, store: RunStore, run: Path, r: int, challenger: Strategy, plant: Plant | None,
             played: dict) -> dict:
        model = self.model(r)
        setup = search_setup(RunOptions(jobs=self.jobs), model, self.gate_cfg)
        with real_evaluator(store, run, self.splits.tasks, model, self.gate_cfg, "gate", setup, self.executor) as inner:
            study = StudyEvaluator(inner, plant, played)
            before = len(played)
            self.progress(f"replicate {r}: gate on {len(self.release)} release tasks, challenger "
                          f"{challenger.content_hash()[:12]} against the initial strategy")
            c = study.evaluate(challenger, self.release, study.label(challenger, "challenger"))
            b = study.evaluate(initial_strategy(), self.release, study.label(initial_strategy(), "baseline"))
            self.count_played(len(played) - before)
        result = decide([PairedOutcome(t, c[t].success, b[t].success) for t in self.release])
        planted = plant.tasks if plant else frozenset()
        other = [t for t in self.release if t not in planted]
        return {"challenger": challenger.content_hash()[:12],
                "promoted": result.promoted, "wins": result.wins, "losses": result.losses, "p_value": result.p_value,
                "n": result.n, "planted_release": len(planted & set(self.release)),
                "noise_tasks": len(other), "noise_discordant": sum(c[t].success != b[t].success for t in other)}

    def null_gate(self, r: int) -> dict:
        """A gate of the initial strategy against itself on model seed r, no search before it."""
        run = self.work / f"gate-{r:02d}"
        store = RunStore(run, command="bench/validity.py")
        try:
            row = self.gate(store, run, r, initial_strategy(), None, {})
        finally:
            store.close()
        return {"world": "null", "replicate": r, "search": False, "frozen_is_root": True, **row}

    def pipeline(self, r: int, plant: Plant | None, played: dict) -> dict:
        """One whole pipeline: search, freeze, gate (in one run folder, as the demo runs them)."""
        world = "null" if plant is None else f"planted-{plant.share:.2f}"
        cfg = load_config("demo", overrides={"seed": SEARCH_SEED + r})
        model = self.model(r)
        run = self.work / f"r{r:02d}-{world}"
        store = RunStore(run, command="bench/validity.py")
        try:
            options = RunOptions(jobs=self.jobs)
            setup = search_setup(options, model, cfg)
            timeouts = cfg.session_timeouts()
            settings = options.models([OPTIMIZER_MODEL])
            optimizer = ModelOptimizer({s: settings.create_optimizer_model(model_ref(OPTIMIZER_MODEL), seed=cfg.seed, timeout_s=t)
                                        for s, t in timeouts.items()},
                                       Budget(5_000_000, label="optimizer", run_label="optimizer", sink=store),
                                       timeouts=timeouts)
            with real_evaluator(store, run, self.splits.tasks, model, cfg, "search", setup, self.executor) as inner:
                before = len(played)
                dag = Search(cfg, store, StudyEvaluator(inner, plant, played), optimizer, self.splits.ids("proposal"),
                             self.development, known_task_ids=list(self.splits.tasks),
                             on_step=lambda node: self.progress(f"{world} replicate {r}: {node_line(node)}")
                             ).run(initial_strategy())
                self.count_played(len(played) - before)
            best = dag.best()
            challenger = Strategy.model_validate(best.strategy)
            gate = self.gate(store, run, r, challenger, plant, played)
        finally:
            store.close()
        root_dev = dag.node("n000").dev_score or 0.0
        carrying = [n for n in dag.nodes() if n.node_id != "n000" and n.status != "rejected"
                    and self.carries(Strategy.model_validate(n.strategy), plant)]
        return {"world": world, "replicate": r, "search": True, "nodes": len(dag.nodes()) - 1,
                "developed_nodes": sum(n.status == "developed" for n in dag.nodes()),
                "frozen": best.node_id, "frozen_is_root": best.node_id == "n000",
                "proposed": bool(carrying), "screened_in": any(n.status == "developed" for n in carrying),
                "developed": any(n.dev_score is not None and n.dev_score > root_dev for n in carrying),
                "frozen_plant": self.carries(challenger, plant),
                "promoted_plant": gate["promoted"] and self.carries(challenger, plant), **gate}

    def carries(self, strategy: Strategy, plant: Plant | None) -> bool:
        """The planted cue reaches at least one planted release task (in the null world: the cue
        reaches a release task at all, so the rows say the same thing in every world)."""
        tasks = [t for t in self.release if plant is None or t in plant.tasks]
        return any(cue_reaches(strategy, self.splits.tasks[t]) for t in tasks)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicates", type=int, default=10, help="pipeline replicates per world (default 10)")
    ap.add_argument("--null-gates", type=int, default=60, help="null gates in all (default 60, at least --replicates)")
    ap.add_argument("--shares", default=",".join(f"{s:.2f}" for s in SHARES),
                    help="planted shares of each split, comma separated (default 0.05,0.10,0.20)")
    ap.add_argument("--noise", type=float, default=0.3)
    ap.add_argument("--jobs", type=int, default=3, help="tasks in flight per evaluation (default 3)")
    ap.add_argument("--units", type=int, default=2,
                    help="units in flight: replicates (each its worlds in turn) and null gates (default 2)")
    ap.add_argument("--png", type=Path, default=ROOT / "docs" / "validity-power.png")
    ap.add_argument("--work", type=Path, help="Keep the run folders here (default: a temporary folder).")
    ap.add_argument("--summarize", type=Path, help="Only summarise the JSON rows (one per line) a study printed.")
    args = ap.parse_args()
    if args.summarize:
        summarize([json.loads(line) for line in args.summarize.read_text().splitlines() if line.startswith("{")],
                  args.noise, args.png, None)
        return
    try:
        shares = [float(s) for s in args.shares.split(",") if s.strip()]
    except ValueError:
        sys.exit(f"--shares: not a comma-separated list of numbers: {args.shares!r}")
    if (args.replicates < 1 or args.null_gates < args.replicates or not all(0 < s < 1 for s in shares)
            or args.jobs < 1 or args.units < 1):
        sys.exit("--replicates, --jobs and --units must be >= 1, --null-gates >= --replicates, every share in (0, 1)")
    started, cpu0 = time.monotonic(), tree_cpu()
    splits = load_pack_splits(bundled_pack("katas"))
    plants = [Plant.over(share, [splits.ids(s) for s in SPLITS]) for share in shares]
    units = args.replicates * (1 + len(plants)) + args.null_gates - args.replicates
    rows: list[dict] = []
    print(f"study: {args.replicates} pipeline replicates x {1 + len(plants)} worlds (null, planted "
          f"{', '.join(f'{s:.2f}' for s in shares)}) + {args.null_gates - args.replicates} null gates without a "
          f"search = {units} units; model sim:weak?noise={args.noise:g}, configuration C (the demo preset), "
          f"--jobs {args.jobs} --units {args.units}; load average {os.getloadavg()[0]:.2f} at the start", flush=True)
    # one executor for every unit: its fork servers sized for all the tasks in flight at once
    setup = search_setup(RunOptions(jobs=args.jobs * args.units), model_ref("sim:weak"), load_config("demo"))
    with tempfile.TemporaryDirectory(prefix="validity-") as tmp, \
            setup.execution.create_executor(workers=setup.concurrency.fork_servers(), cache=None) as executor:
        study = Study(splits, args.noise, args.jobs, args.work or Path(tmp), executor)

        lock = threading.Lock()

        def report(row: dict) -> None:
            with lock:
                rows.append(row)
                print(json.dumps(row), flush=True)
                spent = time.monotonic() - started
                print(f"[{spent:7.0f} s] unit {len(rows)}/{units} done: {row['world']} replicate {row['replicate']}: "
                      f"gate {row['wins']}/{row['losses']} {'PROMOTED' if row['promoted'] else 'not promoted'}; "
                      f"{study.played_evals} task evaluations played, {tree_cpu() - cpu0:.0f} CPU s, load average "
                      f"{os.getloadavg()[0]:.2f}", flush=True)

        def replicate(r: int) -> None:
            played: dict = {}     # the replicate's real evaluations, shared by its worlds (one thread)
            for plant in [None, *plants]:
                report(study.pipeline(r, plant, played))

        groups = [functools.partial(replicate, r) for r in range(args.replicates)]
        groups += [functools.partial(lambda r: report(study.null_gate(r)), r)
                   for r in range(args.replicates, args.null_gates)]
        with ThreadPoolExecutor(args.units, thread_name_prefix="unit") as pool:
            for future in [pool.submit(group) for group in groups]:
                future.result()
        cpu = tree_cpu() - cpu0
    rows.sort(key=lambda row: (row["replicate"], row["world"] != "null", row["world"]))
    summarize(rows, args.noise, args.png, (time.monotonic() - started, cpu))


if __name__ == "__main__":
    main()
