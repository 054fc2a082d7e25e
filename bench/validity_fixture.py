"""The test fixtures of bench/validity.py and the release gate's exact power. Nothing else in the
project uses them: not the demo, not the commands, not any result outside bench/validity.py.

`StudyEvaluator` wraps the real TestHelix strategy evaluator (autosaddler/evaluator.py) and plays
EVERY strategy as the initial strategy, under the strategy's own run label, so with its own
sampling noise (`sim:weak?noise=P`): no strategy text and no numeric field has any effect. That is
the *null* world. With a `Plant` it is the *planted* world, the null world plus one declared effect:

- the planted tasks: in each split, `round(share * size)` tasks, taken round robin over the split's
  katas in the order of a keyed digest of the task id (`planted_tasks`), so the effect is spread
  over as many katas as it has tasks (at least three for every share the study uses);
- on a planted task, a strategy whose prompt carries the simulated agent's `check` cue
  (testhelix/llm/sim/cues.py: verify, run the suite, both programs, passes on the repair, fails on
  the initial), in the task's generation or repair session as the real prompt builder assembles
  it (guidance, retrieved lessons, routed skills), SUCCEEDS, and its public trace shows a suite
  that failed on the initial program and passed its repair;
- on a planted task, any other strategy FAILS, and its public trace shows that no suite failed on
  the initial program (the symptom a competent optimizer can diagnose from the traces);
- every other task, and every strategy in the null world, keeps exactly what the real pipeline
  produced for the initial strategy under that label.

So a strategy carrying the cue beats one without it by exactly the planted tasks (on the release
split: 3, 7 or 14 of 69 tasks for shares 0.05, 0.10, 0.20), and by nothing else. The plant is
signposted in the traces on purpose: the study asks whether search plus gate find an effect the
traces point to; an effect no trace hints at would measure only blind luck.

`gate_power` is the gate's exact probability of promotion (docs/design.md §7: positive difference
and one-sided exact McNemar p <= alpha), summed over the multinomial distribution of
challenger-only and baseline-only tasks.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.stats import binom

from autosaddler.evaluator import HelixStrategyEvaluator
from autosaddler.gate import ALPHA
from autosaddler.traces import TaskEval
from testhelix.agent.prompts import PublicTask, session_messages
from testhelix.llm.sim.cues import read_cues
from testhelix.strategy.model import Strategy, initial_strategy
from testhelix.strategy.skills import load_library
from testhelix.tasks.task import Task

PLANTED_CUE = "check"


def kata_of(task_id: str) -> str:
    return task_id.rsplit("-", 1)[0]


def _digest(task_id: str) -> str:
    return hashlib.sha256(f"planted:{task_id}".encode()).hexdigest()


def planted_tasks(split_ids: Sequence[str], share: float) -> set[str]:
    """`round(share * len(split_ids))` tasks of the split, round robin over its katas (each kata's
    tasks in digest order, katas in the digest order of their first task)."""
    by_kata: dict[str, list[str]] = {}
    for task_id in sorted(split_ids, key=_digest):
        by_kata.setdefault(kata_of(task_id), []).append(task_id)
    queues = list(by_kata.values())
    order: list[str] = []
    while any(queues):
        order += [q.pop(0) for q in queues if q]
    return set(order[: round(share * len(split_ids))])


@dataclass(frozen=True)
class Plant:
    """The planted effect: these tasks flip with the check cue (see the module docstring)."""

    share: float
    tasks: frozenset[str]

    @classmethod
    def over(cls, share: float, splits: Sequence[Sequence[str]]) -> Plant:
        return cls(share, frozenset().union(*(planted_tasks(ids, share) for ids in splits)))


@lru_cache(maxsize=1)
def _library() -> dict:
    return load_library()


def cue_reaches(strategy: Strategy, task: Task, cue: str = PLANTED_CUE) -> bool:
    """Whether the simulated agent would read `cue` in this task's generation or repair session."""
    public = PublicTask.of(task)
    return any(read_cues(tuple(session_messages(strategy, public, phase=phase, library=_library())), task.context)[cue]
               for phase in ("generation", "repair"))


def planted_eval(raw: TaskEval, solved: bool) -> TaskEval:
    """A planted task's evaluation: solved (a suite failed on the initial program and passed its
    repair) or not (no suite failed on the initial program); usage as the real evaluation used."""
    trace = raw.trace and raw.trace.model_copy(update={"success": int(solved), "failed_initial": solved,
                                                       "passed_repair": solved or raw.trace.passed_repair})
    return TaskEval(success=int(solved), trace=trace, usage=raw.usage)


class StudyEvaluator:
    """The null world (plant None) or the planted world over the real evaluator `inner`.
    `played` maps (label, task) to the real evaluation: worlds that share it (the same replicate:
    same model, seed and labels) play each (label, task) once."""

    def __init__(self, inner: HelixStrategyEvaluator, plant: Plant | None, played: dict[tuple[str, str], TaskEval]):
        self.inner, self.plant, self.played = inner, plant, played
        self.runner = inner.runner

    def label(self, strategy: Strategy, arm: str = "") -> str:
        return self.inner.label(strategy, arm)

    def evaluate(self, strategy: Strategy, task_ids: Sequence[str], label: str | None = None) -> dict[str, TaskEval]:
        out = dict(self.evaluate_each(strategy, task_ids, label))
        return {t: out[t] for t in task_ids}

    def evaluate_each(self, strategy: Strategy, task_ids: Sequence[str],
                      label: str | None = None) -> Iterator[tuple[str, TaskEval]]:
        label = label or self.inner.label(strategy)
        todo = [t for t in task_ids if (label, t) not in self.played]
        for task_id, ev in self.inner.evaluate_each(initial_strategy(), todo, label=label):
            self.played[label, task_id] = ev
        for task_id in task_ids:
            raw = self.played[label, task_id]
            if self.plant is not None and task_id in self.plant.tasks:
                raw = planted_eval(raw, cue_reaches(strategy, self.inner.tasks[task_id]))
            yield task_id, raw


def wins_needed(discordant: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """Per number of discordant tasks d: the fewest challenger-only tasks that promote (more than
    d/2, and P(Bin(d, 1/2) >= wins) <= alpha); d + 1 (never) where none do."""
    d = np.asarray(discordant)
    need = np.where(d > 0, binom.isf(alpha, np.maximum(d, 1), 0.5) + 1, 1).astype(int)
    need = np.maximum(need, d // 2 + 1)
    # isf is computed in floating point: step to the exact boundary
    need = np.where((need > 0) & (binom.sf(need - 2, d, 0.5) <= alpha), need - 1, need)
    need = np.where(binom.sf(need - 1, d, 0.5) > alpha, need + 1, need)
    return np.where(d > 0, np.minimum(need, d + 1), 1)


def gate_power(n: int, flipped: int, p_win: float, p_loss: float, alpha: float = ALPHA) -> float:
    """Exact probability that the gate promotes when `flipped` of `n` tasks are certain
    challenger-only successes and each other task is, independently, challenger-only with
    probability `p_win` and baseline-only with `p_loss`: the sum over the multinomial distribution
    of wins and losses of the outcomes that promote (wins > losses and P(Bin(d, 1/2) >= wins) <=
    alpha for d = wins + losses discordant tasks)."""
    rest = n - flipped
    if rest < 0 or flipped < 0 or p_win < 0 or p_loss < 0 or p_win + p_loss > 1:
        raise ValueError(f"gate_power: bad arguments n={n} flipped={flipped} p_win={p_win} p_loss={p_loss}")
    extra = np.arange(rest + 1)                  # discordant tasks among the n - flipped others
    discordance = p_win + p_loss
    p_extra = binom.pmf(extra, rest, discordance) if discordance > 0 else (extra == 0).astype(float)
    share_win = p_win / discordance if discordance > 0 else 0.0
    total = extra + flipped
    need = wins_needed(total, alpha)
    # P(flipped + Bin(extra, share_win) >= need); with no discordant task at all, no promotion
    p_promote = np.where(total > 0, binom.sf(need - flipped - 1, extra, share_win), 0.0)
    return float(np.sum(p_extra * p_promote))


def gate_size(n: int, discordance: float, alpha: float = ALPHA) -> float:
    """The gate's exact false-promotion rate for two exchangeable arms with this discordance."""
    return gate_power(n, 0, discordance / 2, discordance / 2, alpha)


def effect_power(n: int, effect: float, discordance: float, alpha: float = ALPHA) -> float:
    """Exact power at `n` tasks when each task is, independently, a planted win with probability
    `effect` and otherwise discordant by noise with probability `discordance` (split evenly)."""
    noise = (1 - effect) * discordance / 2
    return gate_power(n, 0, effect + noise, noise, alpha)


def tasks_for_power(effect: float, discordance: float, target: float = 0.8, limit: int = 5000) -> int | None:
    """The fewest release tasks from which the exact power stays at least `target` for the next
    20 sizes too (exact tests' power is a sawtooth in n), or None below `limit`."""
    run = 0
    for n in range(1, limit + 1):
        run = run + 1 if effect_power(n, effect, discordance) >= target else 0
        if run == 21:
            return n - 20
    return None
