"""`testhelix errors`: the seeded sample of failed trajectories and two annotators' agreement."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

import pytest

from testhelix.commands.cli import main
from testhelix.commands.errors import SUBTYPES, agreement, cohen_kappa, read_labels, sample_failed
from testhelix.store.runstore import RunStore

FIXTURES = Path(__file__).parent.parent / "fixtures" / "annotations"


def result(label: str, task: str, s: int, sessions=("submitted",), pair=0) -> dict:
    detail = {"submission": "only-qualified", "pair": pair, "support": 0, "events": [],
              "pairs": [{"pair": 0, "direction": "", "sessions": list(sessions)}]}
    return {"run_label": label, "task_id": task, "submitted": pair is not None, "suite_digest": "", "F": s,
            "S": s, "detail": json.dumps(detail)}


def make_run(run_dir: Path) -> None:
    """sim:weak: configuration A solves 0 of 6, B 2 of 8 (so B is sampled: 6 failed, one of them ran
    out of agent time, one had its reference execution time out); sim:strong: A, 3 failed of 5."""
    store = RunStore(run_dir)
    try:
        for i in range(6):
            store.record_task_result(result("sim:weak/A", f"t{i}", 0))
        for i in range(8):
            sessions = ("deadline",) if i == 3 else ("submitted",)
            store.record_task_result(result("sim:weak/B", f"t{i}", int(i >= 6), sessions))
        store.record_task_outcomes("sim:weak/B", "t4", [
            {"program_id": "ref", "role": "reference", "label": "valid", "status": "error", "reason": "timeout after 60s"},
            {"program_id": "init", "role": "initial", "label": "invalid", "status": "fail", "reason": ""}])
        for i in range(5):
            store.record_task_result(result("sim:strong/A", f"t{i}", int(i < 2), pair=None if i == 4 else 0))
        suite = run_dir / "work" / "sim_weak_B" / "t0" / "pair0" / "suite"
        suite.mkdir(parents=True)
        (suite / "test_x.py").write_text("def test_x():\n    assert 1\n")
        (suite.parent / "trajectory-generation-r0.json").write_text("{}")
    finally:
        store.close()


def test_sample_draws_per_family_with_the_seed_and_sets_timeouts_aside(tmp_path):
    make_run(tmp_path)
    drawn = sample_failed([tmp_path], per_family=4, seed=42)
    assert drawn.by_family["sim:weak"] == {"configuration": "B", "failed": 6, "sampled": 4,
                                           "timeouts_excluded": drawn.by_family["sim:weak"]["timeouts_excluded"],
                                           "annotate": 4 - drawn.by_family["sim:weak"]["timeouts_excluded"]}
    # the draw is random.Random(42).sample over the failed results in (run, task) order
    expected = random.Random(42).sample([f"t{i}" for i in range(6)], 4)
    kept = [t for t in expected if t not in ("t3", "t4")]
    assert [r.task_id for r in drawn.rows if r.family == "sim:weak"] == kept
    assert drawn.by_family["sim:weak"]["timeouts_excluded"] == len(expected) - len(kept)
    assert drawn.by_family["sim:strong"]["failed"] == 3 and drawn.by_family["sim:strong"]["configuration"] == "A"
    rows = {r.trajectory_id: r for r in drawn.rows}
    if "sim:weak/B|t0" in rows:
        assert "def test_x" in rows["sim:weak/B|t0"].final_suite and rows["sim:weak/B|t0"].trajectory.endswith("t0")
    assert rows["sim:strong/A|t4"].final_suite == "(no suite submitted)"
    assert all(r.subtype == "" and r.notes == "" for r in drawn.rows)
    # a named configuration instead of the best one
    assert sample_failed([tmp_path], per_family=50, configuration="A").by_family["sim:weak"]["failed"] == 6


def test_sample_command_writes_a_sheet_and_refuses_bad_input(tmp_path, capsys):
    make_run(tmp_path / "run")
    for name in ("sheet.csv", "sheet.jsonl"):
        with pytest.raises(SystemExit) as done:
            main(["errors", "sample", str(tmp_path / "run"), "--out", str(tmp_path / name), "--per-family", "50"])
        assert done.value.code == 0
    out = capsys.readouterr().out
    assert "sim:weak (configuration B): 6 failed, 6 drawn with seed 42, 2 timeouts set aside, 4 to annotate" in out
    with open(tmp_path / "sheet.csv", newline="") as fh:
        sheet = list(csv.DictReader(fh))
    assert len(sheet) == 7 and {"trajectory", "task_id", "final_suite", "subtype", "notes"} <= set(sheet[0])
    assert [json.loads(line)["trajectory_id"] for line in (tmp_path / "sheet.jsonl").read_text().splitlines()] == \
        [r["trajectory_id"] for r in sheet]
    with pytest.raises(SystemExit) as done:
        main(["errors", "sample", str(tmp_path / "run"), "--out", str(tmp_path / "x.csv"), "--config", "Z"])
    assert done.value.code == 2 and "--config Z" in capsys.readouterr().err
    # an unlabelled sheet is refused naming the line
    with pytest.raises(SystemExit) as done:
        main(["errors", "agreement", str(tmp_path / "sheet.csv"), str(tmp_path / "sheet.csv")])
    err = capsys.readouterr().err
    assert done.value.code == 2 and "row 1 (ending on line 2): subtype ''" in err and "Traceback" not in err


def test_agreement_of_the_two_fixture_sheets(capsys):
    """Hand computation: subtypes agree on 7 of 10, chance 21/100, kappa = 0.49/0.79; parents agree on
    9 of 10 (coverage 3/3, faulty 5/6, execution 2/1), chance 41/100, kappa = 0.49/0.59."""
    first, second = read_labels(FIXTURES / "annotator_a.csv"), read_labels(FIXTURES / "annotator_b.jsonl")
    result = agreement(first, second)
    assert result["kappa_subtypes"] == pytest.approx(0.49 / 0.79)
    assert result["kappa_parents"] == pytest.approx(0.49 / 0.59)
    assert result["per_parent"]["faulty check"] == {"first": 5, "second": 6, "agreed": 5,
                                                    "kappa": pytest.approx((0.9 - 0.5) / 0.5)}
    assert result["per_subtype"]["missing_scenario"]["second"] == 1
    with pytest.raises(SystemExit) as done:
        main(["errors", "agreement", str(FIXTURES / "annotator_a.csv"), str(FIXTURES / "annotator_b.jsonl")])
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert "Cohen's kappa on the subtype labels: 0.620; on the parent categories: 0.831" in out
    assert ["faulty", "check", "5", "(50.0%)", "6", "(60.0%)", "5", "(50.0%)", "0.800"] in [
        line.split() for line in out.splitlines()]
    assert "3 subtype disagreement(s)" in out


def test_kappa_edge_cases():
    assert cohen_kappa(["a", "a"], ["a", "a"]) is None            # one label throughout: undefined
    assert cohen_kappa(["a", "b"], ["b", "a"]) == pytest.approx(-1.0)
    assert len(SUBTYPES) == 7 and {p for p, _ in SUBTYPES.values()} == {"coverage gap", "faulty check",
                                                                         "execution logic error"}
