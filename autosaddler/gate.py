"""The release gate (docs/design.md §7): promote a frozen challenger over the initial strategy only on
evidence from a separate release split.

Decision: promoted iff the paired difference in successes is positive and the one-sided exact
McNemar p-value is at most 0.05. With w challenger-only and l baseline-only successes, p is the
upper binomial tail P(X >= w) for X ~ Binomial(w + l, 1/2); no discordant pairs gives no p and no
promotion. Intervals are paired percentile bootstraps of the difference in Reference Acceptance
Rate: each of the 10,000 resamples draws tasks with replacement and keeps a task's two outcomes
together.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy.stats import binom

from testhelix.core.errors import UserError
from testhelix.llm.modelref import ModelRef

ALPHA = 0.05
BOOTSTRAP_RESAMPLES = 10_000
BOOTSTRAP_SEED = 42


@dataclass(frozen=True)
class PairedOutcome:
    task: str
    challenger: int
    baseline: int


@dataclass(frozen=True)
class GateResult:
    promoted: bool
    p_value: float | None
    wins: int
    losses: int
    challenger_successes: int
    baseline_successes: int
    n: int
    difference: float
    ci95: tuple[float, float]
    ci99: tuple[float, float]

    def to_json(self) -> dict:
        d = asdict(self)
        d["ci95"], d["ci99"] = list(self.ci95), list(self.ci99)
        return d


def mcnemar_one_sided(wins: int, losses: int) -> float | None:
    """Exact one-sided McNemar p-value, or None without discordant pairs."""
    n = wins + losses
    if n == 0:
        return None
    return float(binom.sf(wins - 1, n, 0.5))


def paired_bootstrap(diffs: np.ndarray, resamples: int = BOOTSTRAP_RESAMPLES,
                     seed: int = BOOTSTRAP_SEED) -> dict[float, tuple[float, float]]:
    """Percentile intervals (95% and 99%) of the mean per-task difference."""
    rng = np.random.default_rng(seed)
    n = len(diffs)
    idx = rng.integers(0, n, size=(resamples, n))
    means = diffs[idx].mean(axis=1)
    out = {}
    for level in (0.95, 0.99):
        lo, hi = np.percentile(means, [100 * (1 - level) / 2, 100 * (1 + level) / 2])
        out[level] = (float(lo), float(hi))
    return out


def decide(outcomes: list[PairedOutcome]) -> GateResult:
    if not outcomes:
        raise UserError("the gate needs at least one paired task outcome")
    c = np.array([o.challenger for o in outcomes], dtype=float)
    b = np.array([o.baseline for o in outcomes], dtype=float)
    wins = int(((c == 1) & (b == 0)).sum())
    losses = int(((c == 0) & (b == 1)).sum())
    p = mcnemar_one_sided(wins, losses)
    difference = float(c.mean() - b.mean())
    intervals = paired_bootstrap(c - b)
    promoted = difference > 0 and p is not None and p <= ALPHA
    return GateResult(promoted=promoted, p_value=p, wins=wins, losses=losses,
                      challenger_successes=int(c.sum()), baseline_successes=int(b.sum()), n=len(outcomes),
                      difference=difference, ci95=intervals[0.95], ci99=intervals[0.99])


def read_outcomes_csv(path: Path) -> list[PairedOutcome]:
    """Columns task, challenger, baseline (0/1) under one header line; task ids unique and
    printable; every bad cell is named by line and column."""
    from testhelix.core.readers import read_csv

    path = Path(path)
    # skipinitialspace: spreadsheet exports may put spaces after the commas (the reader strips
    # header names and accepts a byte-order mark).
    _, table = read_csv(path, required=("task", "challenger", "baseline"), skipinitialspace=True)
    rows, problems, seen = [], [], set()
    for line, row in table:
        values = {}
        for col in ("challenger", "baseline"):
            raw = (row[col] or "").strip()
            if raw not in ("0", "1"):
                hint = " (a second header line?)" if raw == col else ""
                problems.append((f"line {line}, column {col}", f"must be 0 or 1, got {raw!r}{hint}"))
            values[col] = raw == "1"
        task = (row["task"] or "").strip()
        if not task:
            problems.append((f"line {line}, column task", "is empty"))
        elif not task.isprintable():
            problems.append((f"line {line}, column task", f"task id {task!r} holds a control character"))
        elif task in seen:
            problems.append((f"line {line}, column task", f"task {task!r} appears twice"))
        seen.add(task)
        rows.append(PairedOutcome(task, int(values["challenger"]), int(values["baseline"])))
    if problems:
        raise UserError(f"{path}: {len(problems)} bad cell(s)", problems)
    return rows


def render(result: GateResult) -> str:
    pct = lambda x: f"{100 * x:.1f}%"  # noqa: E731
    p = "n/a (no discordant pairs)" if result.p_value is None else f"{result.p_value:.6f}"
    return "\n".join([
        f"tasks: {result.n}",
        f"challenger successes: {result.challenger_successes} ({pct(result.challenger_successes / result.n)})",
        f"baseline successes:   {result.baseline_successes} ({pct(result.baseline_successes / result.n)})",
        f"discordant: challenger-only {result.wins}, baseline-only {result.losses}",
        f"difference: {100 * result.difference:+.1f} points",
        f"one-sided exact McNemar p = {p}",
        f"95% paired bootstrap CI: [{100 * result.ci95[0]:+.1f}, {100 * result.ci95[1]:+.1f}] points",
        f"99% paired bootstrap CI: [{100 * result.ci99[0]:+.1f}, {100 * result.ci99[1]:+.1f}] points",
        f"decision: {'PROMOTED' if result.promoted else 'NOT PROMOTED (the initial strategy stays)'}",
    ])


def same_strategy_verdict(model: ModelRef, n: int, digest: str) -> tuple[bool, str]:
    """For a challenger with the baseline's hash: (whether the gate must evaluate, why). A simulated
    model without noise is deterministic (common random numbers: the same strategy makes the same
    decisions on every task), so both arms would succeed on the same tasks and no discordant task is
    possible; any other model samples, so two arms of one strategy can differ by chance."""
    from testhelix.llm.sim.options import SimOptions

    options = model.info.options      # parsed once, when the command resolved --model
    noise = options.noise if isinstance(options, SimOptions) else None
    same = f"The challenger is the baseline strategy itself (same hash {digest[:12]})"
    if noise == 0:
        return False, (f"{same} and {model} is deterministic (a simulated model without noise), so both arms would "
                       f"succeed on exactly the same of the {n} release tasks: no discordant task is possible, and "
                       "without one there is no evidence either way. Decided without evaluating: NOT PROMOTED, the "
                       "initial strategy stays. Nothing was run, the release split is not spent and the release "
                       "ledger records nothing.")
    sampling = f"samples its decisions (noise={noise:g})" if noise is not None else "is a real model and samples its answers"
    return True, (f"{same}, but {model} {sampling}: each arm is its own sample, so tasks can differ by chance alone. "
                  f"The gate evaluates both arms; any discordant task is noise, and a promotion would be a false "
                  f"positive (the test keeps that at most {ALPHA} of the time).")


def wins_needed(discordant: int, alpha: float = ALPHA) -> int | None:
    """The fewest challenger-only tasks out of `discordant` that give p <= alpha (None: none do)."""
    return next((w for w in range(discordant + 1) if float(binom.sf(w - 1, discordant, 0.5)) <= alpha), None)


def explain(result: GateResult, same_strategy: bool = False) -> str:
    """One plain paragraph: why the decision came out as it did (`same_strategy`: the challenger
    is the baseline itself, e.g. a search that froze its root)."""
    w, lo, n = result.wins, result.losses, result.n
    both = f"{result.challenger_successes} vs {result.baseline_successes} of {n} tasks"
    if same_strategy:
        return (f"Why: the challenger is the baseline strategy itself (same hash): the search froze its root, because "
                f"no child beat it on the development split. Both arms succeeded on the same tasks ({both}); with no "
                "discordant task there is no evidence either way, and the initial strategy stays. `autosaddler view` "
                "shows each proposal and why it was screened out.")
    if w + lo == 0:
        return (f"Why: the two strategies succeeded on exactly the same tasks ({both}), so not one task tells them "
                "apart. Without a discordant task there is no evidence either way, and the initial strategy stays. "
                "This is what an edit that changes nothing the release tasks react to looks like (with simulated "
                "models: no cue reached these tasks; README, 'What the simulated models react to').")
    if result.promoted:
        return (f"Why: the challenger solved {w} task(s) the initial strategy did not and lost {lo} ({both}); "
                f"under no difference, {w} or more of {w + lo} discordant tasks has probability "
                f"p = {result.p_value:.6f} <= {ALPHA}, so it is promoted.")
    if w <= lo:
        return (f"Why: the challenger did not do better ({w} task(s) only it solved, {lo} only the initial strategy "
                f"solved; {both}); promotion needs a positive difference, so the initial strategy stays.")
    need = wins_needed(w + lo)
    return (f"Why: the challenger won more discordant tasks ({w} vs {lo}; {both}), but p = {result.p_value:.6f} > "
            f"{ALPHA}: with {w + lo} discordant tasks, promotion needs "
            + (f"at least {need} of them" if need is not None else "more of them than there are")
            + ". The difference may be real but is too small for this many release tasks; the initial strategy stays.")
