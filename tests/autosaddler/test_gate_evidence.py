"""The gate's evidence beside its decision: cluster diagnostics, a same-strategy gate, and the demo
preset's run-scoped release ledger (a demo's look never blocks a user's later gate)."""

from __future__ import annotations

import json
from itertools import product

import pytest

from autosaddler.gate import PairedOutcome, decide
from autosaddler.gate_clusters import cluster_bootstrap, cluster_of, diagnose_clusters, sign_flip_p
from autosaddler.ledger import RUN_LEDGER, ReleaseLedger
from tests.autosaddler.test_release_ledger import Evaluator, challenger_file, gate, offline_gate

__all__ = ["offline_gate"]   # a fixture, used by name


def rows(spec: dict[str, list[tuple[int, int]]]) -> list[PairedOutcome]:
    return [PairedOutcome(f"katas-{kata}-m{i + 1:02d}", c, b) for kata, pairs in spec.items()
            for i, (c, b) in enumerate(pairs)]


def test_clusters_come_from_the_metadata_else_from_the_id():
    assert cluster_of("katas-lru_cache-m01", None)[0] == "lru_cache"
    assert cluster_of("katas-lru_cache-m01", "cache_kata")[0] == "cache_kata"
    assert cluster_of("humaneval-12", None)[0] == "humaneval-12"      # no pack-CLUSTER-mNN shape: its own cluster
    assert "metadata" in cluster_of("x-y-z", "k")[1] and "task id" in cluster_of("a-b-m01", None)[1]


def test_the_cluster_diagnostics_by_hand():
    outcomes = rows({"a": [(1, 0), (1, 0), (1, 1)], "b": [(1, 0), (0, 0)], "c": [(0, 1), (1, 0), (1, 0)],
                     "d": [(1, 1)]})
    diag = diagnose_clusters(outcomes, earlier_gates=2)
    assert [(r.cluster, r.tasks, r.wins, r.losses) for r in diag.rows] == [
        ("a", 3, 2, 0), ("b", 2, 1, 0), ("c", 3, 2, 1), ("d", 1, 0, 0)]
    # three clusters differ (+2, +1, +1; d is 0): the sum 4 is reached only with every sign positive
    totals = [sum(s * d for s, d in zip(signs, (2, 1, 1))) for signs in product((1, -1), repeat=3)]
    assert diag.sign_flip_p == pytest.approx(sum(t >= 4 for t in totals) / 8) == pytest.approx(1 / 8)
    assert "all 8 sign patterns" in diag.sign_flip_patterns
    lo, hi = diag.ci95
    assert lo <= (5 - 1) / 9 <= hi and diag.ci95 == cluster_bootstrap(diag.rows)      # seeded
    assert diag.earlier_gates == 2 and json.loads(json.dumps(diag.to_json()))["rows"][0]["cluster"] == "a"
    assert sign_flip_p([0, 0]) == (None, "no cluster differs")
    many = sign_flip_p([1] * 20)
    assert many[0] == pytest.approx(1 / 10_000) and "seeded random" in many[1]
    # the decision is untouched: the task-level exact test still decides
    assert decide(outcomes).wins == 5 and decide(outcomes).losses == 1


def test_a_gate_from_recorded_outcomes_prints_the_labelled_diagnostics(tmp_path, capsys):
    from autosaddler.cli import main

    f = tmp_path / "o.csv"
    f.write_text("task,challenger,baseline\n" + "".join(
        f"{o.task},{o.challenger},{o.baseline}\n" for o in rows({"a": [(1, 0)] * 3, "b": [(0, 1), (1, 1)]})))
    with pytest.raises(SystemExit) as done:
        main(["gate", "--outcomes", str(f)])
    out = " ".join(capsys.readouterr().out.split())
    assert done.value.code == 0
    assert "diagnostics (do not decide" in out and "cluster sign-flip test, one-sided p = 0.5000" in out
    assert "a +3 -0 of 3" in out and "b +0 -1 of 2" in out and "95% cluster bootstrap CI" in out


class NeverEvaluates(Evaluator):
    def evaluate(self, strategy, ids, label=None):
        raise AssertionError("a same-strategy gate with a deterministic model evaluates nothing")


def test_a_same_strategy_gate_with_a_deterministic_model_decides_without_evaluating(tmp_path, capsys, offline_gate,
                                                                                  monkeypatch):
    from contextlib import contextmanager

    import autosaddler.commands.gate as gate_cmd

    @contextmanager
    def never(*args, **kwargs):
        yield NeverEvaluates()

    monkeypatch.setattr(gate_cmd, "helix_evaluator", never)
    same = challenger_file(tmp_path, steps=12)               # the initial strategy, frozen
    code, out, err = gate(tmp_path, capsys, "same", same)
    assert code == 0, err
    assert "NOT PROMOTED" in out and "decided without evaluating" in out
    assert "no discordant task is possible" in " ".join(out.split())
    assert "not spent" in (tmp_path / "same" / "gate_report.md").read_text()
    assert ReleaseLedger().entries() == []                   # nothing looked at, nothing recorded


def test_a_same_strategy_gate_with_a_noisy_model_says_why_it_evaluates(tmp_path, capsys, offline_gate):
    same = challenger_file(tmp_path, steps=12)
    code, out, err = gate(tmp_path, capsys, "noisy", same, "--model", "sim:strong?noise=0.3")
    assert code == 0, err
    said = " ".join((out + err).split())
    assert "samples its decisions (noise=0.3)" in said and "any discordant task is noise" in said
    assert "Same strategy." in (tmp_path / "noisy" / "gate_report.md").read_text()
    assert len(ReleaseLedger().entries()) == 1


def test_the_demo_presets_look_does_not_block_a_users_later_gate(tmp_path, capsys, offline_gate):
    """The README's sequence (a demo-preset gate) then a user's gate of another frozen strategy on the
    same pack and split, same data folder: both succeed; the user's gate keeps the machine-wide guard."""
    code, out, err = gate(tmp_path, capsys, "demo", challenger_file(tmp_path, 20), "--preset", "demo")
    assert code == 0, err
    assert "this run folder's own ledger" in " ".join(out.split())
    assert len(ReleaseLedger(tmp_path / "demo" / RUN_LEDGER).entries()) == 1 and ReleaseLedger().entries() == []
    code, out, err = gate(tmp_path, capsys, "mine", challenger_file(tmp_path, 16))
    assert code == 0, err
    assert "(machine-wide)" in " ".join(out.split()) and len(ReleaseLedger().entries()) == 1
    code, out, err = gate(tmp_path, capsys, "again", challenger_file(tmp_path, 24))
    assert code == 2 and "already spent" in err                # the user's own second look is refused
    # the demo's look is in its run folder only: the user's gate counts the machine-wide looks
    assert "earlier gates on tasks of this pack in the release ledger: 0" in (tmp_path / "mine" / "gate_report.md").read_text()
