"""bench/validity.py's test fixtures and the gate's exact power: the planted effect is off by
default and has exactly its declared effect; the power and size sums are exact."""

from __future__ import annotations

from math import comb
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binom

from autosaddler.gate import PairedOutcome, decide
from autosaddler.traces import PublicTrace, TaskEval
from bench.validity_fixture import (
    Plant,
    StudyEvaluator,
    cue_reaches,
    gate_power,
    gate_size,
    kata_of,
    planted_tasks,
    wins_needed,
)
from testhelix.strategy.model import Strategy, initial_strategy
from testhelix.tasks.task import load_pack

PACK = Path(__file__).resolve().parents[1] / "fixtures" / "tasks" / "pack"
CHECK = "Verify that the suite fails on the initial program and passes on the repair."


def test_power_without_noise_is_one_iff_five_tasks_flip():
    for flipped in range(0, 12):
        assert gate_power(69, flipped, 0.0, 0.0) == (1.0 if flipped >= 5 else 0.0)


def _enumerated(n, flipped, p_win, p_loss, alpha=0.05):
    total, rest = 0.0, n - flipped
    for w in range(rest + 1):
        for lost in range(rest - w + 1):
            p = comb(rest, w) * comb(rest - w, lost) * p_win ** w * p_loss ** lost * (1 - p_win - p_loss) ** (rest - w - lost)
            wins = w + flipped
            if wins > lost and binom.sf(wins - 1, wins + lost, 0.5) <= alpha:
                total += p
    return total


@pytest.mark.parametrize("args", [(20, 0, 0.2, 0.2), (20, 3, 0.2, 0.2), (30, 7, 0.1, 0.25), (25, 2, 0.3, 0.1)])
def test_power_is_the_multinomial_sum(args):
    assert gate_power(*args) == pytest.approx(_enumerated(*args), abs=1e-12)


def test_size_stays_below_alpha_and_matches_the_known_value():
    assert gate_size(69, 0.394) == pytest.approx(0.0345, abs=5e-4)
    assert all(gate_size(n, d) <= 0.05 for n in (10, 40, 69, 150) for d in (0.1, 0.4, 0.9))


def _gate(wins, losses):
    return decide([PairedOutcome(f"w{i}", 1, 0) for i in range(wins)]
                  + [PairedOutcome(f"l{i}", 0, 1) for i in range(losses)]).promoted


def test_wins_needed_is_the_gates_boundary():
    for d in range(1, 60):
        need = int(wins_needed(np.array(d)))
        if need > d:    # no split of d discordant tasks promotes
            assert not _gate(d, 0)
            continue
        assert _gate(need, d - need) and not _gate(need - 1, d - need + 1)


def test_planted_tasks_are_the_declared_share_spread_over_katas():
    ids = [f"kata{k}-m{i:02d}" for k in range(7) for i in range(10)]
    for share, count in ((0.05, 4), (0.10, 7), (0.20, 14)):
        chosen = planted_tasks(ids, share)
        assert len(chosen) == count and chosen == planted_tasks(list(reversed(ids)), share)
        assert len({kata_of(t) for t in chosen}) >= min(count, 3)


def _trace(success):
    return PublicTrace(context="general", success=success, exit="done", steps=3, elided=0, failed_initial=True,
                       passed_repair=bool(success), review="approve", submission="only-qualified",
                       instruction_excerpt="")


class FakeInner:
    """What the real evaluator returns: every task fixed by (label, task); records what it played."""

    def __init__(self, tasks):
        self.tasks, self.runner, self.played = tasks, None, []

    def label(self, strategy, arm=""):
        return f"search/{arm + '/' if arm else ''}{strategy.content_hash()[:12]}"

    def evaluate_each(self, strategy, task_ids, label=None):
        for t in task_ids:
            self.played.append((strategy.content_hash(), label, t))
            yield t, TaskEval(success=int(len(label + t) % 2), trace=_trace(int(len(label + t) % 2)))


def _study(plant):
    tasks = {t.id: t for t in load_pack(PACK)}
    inner = FakeInner(tasks)
    return StudyEvaluator(inner, plant, {}), inner, sorted(tasks)  # type: ignore[arg-type]


def test_off_by_default_every_strategy_is_played_as_the_initial_one():
    study, inner, ids = _study(None)
    edited = Strategy.model_validate({**initial_strategy().model_dump(mode="json"), "guidance": CHECK, "agentSteps": 20})
    out = study.evaluate(edited, ids)
    expected = dict(FakeInner(inner.tasks).evaluate_each(initial_strategy(), ids, study.label(edited)))
    assert out == expected
    assert {h for h, _, _ in inner.played} == {initial_strategy().content_hash()}
    assert study.evaluate(edited, ids) == out and len(inner.played) == len(ids)   # played once, then shared


def test_the_plant_flips_exactly_its_tasks_with_the_cue():
    study, _, ids = _study(None)
    planted_id = ids[0]
    plant = Plant(0.5, frozenset({planted_id}))
    with_cue = Strategy.model_validate({**initial_strategy().model_dump(mode="json"), "guidance": CHECK})
    task = study.inner.tasks[planted_id]
    assert cue_reaches(with_cue, task) and not cue_reaches(initial_strategy(), task)
    for strategy, solved in ((with_cue, 1), (initial_strategy(), 0)):
        null, _, _ = _study(None)
        planted, _, _ = _study(plant)
        label = f"gate/x/{strategy.content_hash()[:12]}"
        a, b = null.evaluate(strategy, ids, label), planted.evaluate(strategy, ids, label)
        assert {t: a[t] for t in ids if t != planted_id} == {t: b[t] for t in ids if t != planted_id}
        trace = b[planted_id].trace
        assert b[planted_id].success == solved and trace is not None and trace.success == solved
        assert trace.failed_initial == bool(solved)
