"""Benchmark: does the search find what is there, and only that? A null-effect and a planted-effect
study of AutoSaddler's search plus release gate, on the simulated models with explicit noise.

Both profiles play the real TestHelix pipeline (configuration A) with `sim:weak?noise=P&seed=R`:
each evaluation samples its own share P of the simulated decisions (testhelix/llm/sim/draws.py),
so two evaluations of the same behaviour differ like two samples of a stochastic model.

- *null*: no strategy has any effect. Every strategy the search or the gate evaluates is played as
  the initial strategy, under its own run label (so with its own sampling noise; the gate labels
  its two arms apart, so even a challenger that is the root samples separately from the baseline).
  Whatever the search selects, the challenger and the baseline are exchangeable at the gate: every
  promotion is a false promotion, and their rate should stay within the gate's nominal alpha.
- *planted*: the null profile plus a TEST FIXTURE with a known effect: a strategy that holds the
  lesson `fail-first` (one of the simulated optimizer's own lessons, proposed when suites did not
  fail on the program as given) solves every task of a fixed half of the `stateful` tasks (chosen
  by a digest of the task id). Nothing else in the project knows this fixture; the demo and the
  README's results never use it. The study counts how often the search proposes the planted edit,
  screens it in (developed), freezes it, and the gate promotes it.

Each of `--replicates` (default 10) replicates R runs one seeded search (search seed 1000 + R,
model seed R) and one gate per profile on the release split of the bundled `katas` pack, with the
study preset below (small, so the whole study fits in 30 minutes on 2 cores with `--jobs 2` on a
quiet machine). Rates get exact (Clopper-Pearson) 95% intervals. The gate's power for the planted
effect at the release split's size is computed exactly (a sum over the multinomial distribution
of challenger-only and baseline-only tasks) from the fixture's effect, measured as the share of
release tasks it flips from the baseline's failure, and the noise discordance the null gates
measured; a PNG plots that power against the effect size. The gates here are a study of the
simulation: they are not recorded in the release ledger. Last line:

    false_promotions=F/N planted_promotions=P/N analytic_power=X

    python bench/validity.py [--replicates 10] [--noise 0.3] [--jobs 2] [--png docs/validity-power.png]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from scipy.stats import binom, binomtest  # noqa: E402

from autosaddler.config import load_config  # noqa: E402
from autosaddler.evaluator import HelixStrategyEvaluator  # noqa: E402
from autosaddler.gate import ALPHA, PairedOutcome, decide  # noqa: E402
from autosaddler.optimizer import ModelOptimizer  # noqa: E402
from autosaddler.search import Search  # noqa: E402
from autosaddler.session import (  # noqa: E402
    PackSplits,
    helix_evaluator,
    load_pack_splits,
    search_setup,
)
from autosaddler.traces import TaskEval  # noqa: E402
from testhelix.agent.budget import Budget  # noqa: E402
from testhelix.bundle import bundled_pack  # noqa: E402
from testhelix.llm.registry import create_optimizer_model  # noqa: E402
from testhelix.runoptions import RunOptions  # noqa: E402
from testhelix.splits import spread_by_context  # noqa: E402
from testhelix.store import RunStore  # noqa: E402
from testhelix.strategy.model import Strategy, initial_strategy  # noqa: E402

PLANTED_LESSON = "fail-first"
PLANTED_CONTEXT = "stateful"
PLANTED_SHARE = 0.5
STUDY_PRESET = {"helix_config": "A", "train_minibatch_size": 6, "completed_train_iterations": 3,
                "max_candidate_proposals": 4, "development_limit": 7}
STAGES = ("proposed", "screened_in", "frozen", "promoted")


def planted_task(task_id: str, context: str) -> bool:
    digest = int(hashlib.sha256(f"planted:{task_id}".encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return context == PLANTED_CONTEXT and digest < PLANTED_SHARE


def carries_plant(strategy: Strategy) -> bool:
    return any(lesson.id == PLANTED_LESSON for lesson in strategy.lessons)


class StudyEvaluator:
    """Plays every strategy as the initial one under the strategy's own label (the null profile),
    plus, for the planted profile, the fixture's effect on the planted tasks."""

    def __init__(self, inner: HelixStrategyEvaluator, contexts: dict[str, str], planted: bool,
                 played: dict | None = None) -> None:
        self.inner, self.contexts, self.planted = inner, contexts, planted
        self.runner = inner.runner
        # (label, task) -> what was played. One replicate's two profiles play every strategy as the
        # initial one under the same labels, seed and model, so each (label, task) identically: the
        # planted search replays the null one until a strategy carrying the plant comes up.
        self.played = played if played is not None else {}

    def evaluate(self, strategy: Strategy, task_ids: Sequence[str], label: str | None = None) -> dict[str, TaskEval]:
        out = dict(self.evaluate_each(strategy, task_ids, label))
        return {t: out[t] for t in task_ids}

    def evaluate_each(self, strategy: Strategy, task_ids: Sequence[str],
                      label: str | None = None) -> Iterator[tuple[str, TaskEval]]:
        lift = self.planted and carries_plant(strategy)
        label = label or self.inner.label(strategy)
        todo = [t for t in task_ids if (label, t) not in self.played]
        for task_id, ev in self.inner.evaluate_each(initial_strategy(), todo, label=label):
            self.played[label, task_id] = ev
        for task_id in task_ids:
            ev = self.played[label, task_id]
            if lift and planted_task(task_id, self.contexts[task_id]):
                ev = TaskEval(success=1, trace=ev.trace and ev.trace.model_copy(update={"success": 1}), usage=ev.usage)
            yield task_id, ev


def run_replicate(profile: str, r: int, noise: float, jobs: int, work: Path, splits: PackSplits,
                  played: dict) -> dict:
    cfg = load_config("demo", overrides={**STUDY_PRESET, "seed": 1000 + r})
    model = f"sim:weak?noise={noise}&seed={r}"
    contexts = {t: task.context for t, task in splits.tasks.items()}
    dev = spread_by_context(splits.ids("development"), contexts, {i: i.rsplit("-", 1)[0] for i in splits.tasks})
    run = work / f"{profile}-{r:02d}"
    store = RunStore(run, command="bench/validity.py")
    try:
        timeouts = cfg.session_timeouts()
        optimizer = ModelOptimizer({s: create_optimizer_model("sim:strong", seed=cfg.seed) for s in timeouts},
                                   Budget(5_000_000, label="optimizer", run_label="optimizer", sink=store),
                                   timeouts=timeouts)
        setup = search_setup(RunOptions(jobs=jobs), model, cfg)
        with helix_evaluator(store, run, splits.tasks, model, cfg, "search", setup) as inner:
            study = StudyEvaluator(inner, contexts, profile == "planted", played)
            dag = Search(cfg, store, study, optimizer, splits.ids("proposal"), dev,
                         known_task_ids=list(splits.tasks)).run(initial_strategy())
        best = dag.best()
        challenger = Strategy.model_validate(best.strategy)
        with helix_evaluator(store, run, splits.tasks, model, cfg, "gate", setup) as inner:
            study = StudyEvaluator(inner, contexts, profile == "planted", played)
            release = splits.ids("release")
            c = study.evaluate(challenger, release, inner.label(challenger, "challenger"))   # as the gate labels its arms
            b = study.evaluate(initial_strategy(), release, inner.label(initial_strategy(), "baseline"))
    finally:
        store.close()
    result = decide([PairedOutcome(t, c[t].success, b[t].success) for t in release])
    nodes = [n for n in dag.nodes() if n.node_id != "n000"]
    proposed = [n for n in nodes if PLANTED_LESSON in json.dumps(n.to_json()["edit"])]
    planted_release = [t for t in release if planted_task(t, contexts[t])]
    return {"profile": profile, "replicate": r, "promoted": result.promoted, "wins": result.wins,
            "losses": result.losses, "p_value": result.p_value, "frozen": best.node_id,
            "frozen_is_root": best.node_id == "n000", "n": result.n,
            "proposed": bool(proposed), "screened_in": any(n.status == "developed" for n in proposed),
            "frozen_plant": carries_plant(challenger), "promoted_plant": result.promoted and carries_plant(challenger),
            "planted_release": len(planted_release),
            "planted_baseline_failures": sum(1 - b[t].success for t in planted_release),
            "discordant_unplanted": sum(c[t].success != b[t].success for t in release if t not in planted_release)}


def mcnemar_power(n: int, p_win: float, p_loss: float, alpha: float = ALPHA) -> float:
    """Exact power of the gate (positive difference and one-sided exact McNemar p <= alpha) when
    each task is challenger-only with probability p_win and baseline-only with p_loss."""
    total = 0.0
    for d in range(1, n + 1):
        p_d = binom.pmf(d, n, p_win + p_loss)
        if p_d == 0 or p_win + p_loss == 0:
            continue
        need = next((w for w in range(d + 1) if binom.sf(w - 1, d, 0.5) <= alpha and w > d - w), None)
        if need is not None:
            total += p_d * binom.sf(need - 1, d, p_win / (p_win + p_loss))
    return float(total)


def interval(k: int, n: int) -> str:
    ci = binomtest(k, n).proportion_ci(method="exact")
    return f"{k}/{n} = {k / n:.2f} [{ci.low:.2f}, {ci.high:.2f}]"


def plot(path: Path, n: int, discordance: float, effect: float, observed: tuple[int, int]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    effects = [i / 100 for i in range(0, 31)]
    power = [mcnemar_power(n, discordance / 2 + e, discordance / 2) for e in effects]
    fig, ax = plt.subplots(figsize=(6.5, 4))
    ax.plot([100 * e for e in effects], power, label=f"exact gate power, n = {n}, noise discordance {discordance:.2f}")
    ax.axvline(100 * effect, color="#c44e52", ls="--", label=f"planted effect {100 * effect:.1f} points")
    k, reps = observed
    ci = binomtest(k, reps).proportion_ci(method="exact")
    ax.errorbar([100 * effect], [k / reps], yerr=[[k / reps - ci.low], [ci.high - k / reps]], fmt="o", color="black",
                capsize=4, label=f"observed planted promotions {k}/{reps} (95% CI)")
    ax.axhline(ALPHA, color="#999999", lw=0.8)
    ax.set_xlabel("effect: extra share of release tasks the challenger alone solves (points)")
    ax.set_ylabel("probability of promotion")
    ax.set_ylim(0, 1)
    ax.set_title("Release gate power (simulated models, test fixture)")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--replicates", type=int, default=10)
    ap.add_argument("--noise", type=float, default=0.3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--png", type=Path, default=ROOT / "docs" / "validity-power.png")
    ap.add_argument("--work", type=Path, help="Keep the run folders here (default: a temporary folder).")
    ap.add_argument("--summarize", type=Path, help="Only summarise the JSON rows (one per line) a study printed.")
    args = ap.parse_args()
    if args.summarize:
        rows = [json.loads(line) for line in args.summarize.read_text().splitlines() if line.startswith("{")]
        summarize(rows, args.noise, args.png, None)
        return
    started = time.monotonic()
    splits = load_pack_splits(bundled_pack("katas"))
    rows = []
    with tempfile.TemporaryDirectory(prefix="validity-") as tmp:
        work = args.work or Path(tmp)
        for r in range(args.replicates):
            played: dict = {}       # the replicate's evaluations, shared by its two profiles
            for profile in ("null", "planted"):
                row = run_replicate(profile, r, args.noise, args.jobs, work, splits, played)
                rows.append(row)
                print(json.dumps(row), flush=True)
    summarize(rows, args.noise, args.png, time.monotonic() - started)


def summarize(rows: list[dict], noise: float, png: Path, seconds: float | None) -> None:
    """The study's summary lines (and plot) from its per-replicate rows; `--summarize` re-reads
    rows an interrupted study printed (each profile's count is then the replicates it finished)."""
    null = [x for x in rows if x["profile"] == "null"]
    planted = [x for x in rows if x["profile"] == "planted"]
    n = rows[0]["n"]
    discordances = [x["discordant_unplanted"] / (n - x["planted_release"]) for x in rows
                    if x["discordant_unplanted"] is not None]
    discordance = sum(discordances) / len(discordances) if discordances else 0.0
    effect = sum(x["planted_baseline_failures"] for x in planted) / (n * len(planted)) if planted else 0.0
    share = rows[0]["planted_release"] / n
    power = mcnemar_power(n, effect + discordance / 2 * (1 - share), discordance / 2 * (1 - share))
    false_promotions = sum(x["promoted"] for x in null)
    print(f"study: {len(null)} null and {len(planted)} planted replicates, model sim:weak?noise={noise}, "
          f"configuration A, release split {n} tasks" + ("" if seconds is None else f", {seconds:.0f} s"))
    if null:
        print(f"null: false promotions {interval(false_promotions, len(null))} (nominal alpha {ALPHA}); "
              f"froze the root {sum(x['frozen_is_root'] for x in null)}/{len(null)}")
    for stage, key in zip(STAGES, ("proposed", "screened_in", "frozen_plant", "promoted_plant")):
        if planted:
            print(f"planted: {stage} {interval(sum(x[key] for x in planted), len(planted))}")
    print(f"planted effect: {effect:.3f} of release tasks ({share:.3f} planted); noise discordance "
          f"{discordance:.3f} (mean over {len(discordances)} gates, unplanted tasks); exact gate power {power:.2f}")
    promoted = sum(x["promoted_plant"] for x in planted)
    if planted:
        plot(png, n, discordance, effect, (promoted, len(planted)))
        print(f"plot: {png}")
    print(f"false_promotions={false_promotions}/{len(null)} planted_promotions={promoted}/{len(planted)} "
          f"analytic_power={power:.2f}")


if __name__ == "__main__":
    main()
