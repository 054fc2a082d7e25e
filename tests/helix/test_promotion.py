"""Configuration E records whether its strategy was promoted, and by which gate; the report says so."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from testhelix.commands.cli import main
from testhelix.core.errors import UserError
from testhelix.helix.promotion import describe, promotion_status
from testhelix.store.runstore import RunStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "prism"))
from tests.prism.test_report import PERFECT, record


def gate_folder(path: Path, rows: list[tuple[str, str, bool]]) -> Path:
    store = RunStore(path, command="autosaddler gate")
    for gate_id, challenger, promoted in rows:
        store.upsert("gate_results", {"gate_id": gate_id, "challenger_hash": challenger, "baseline_hash": "b",
                                      "split": "release", "model": "sim:strong", "n": 10, "wins": 4, "losses": 0,
                                      "challenger_successes": 8, "baseline_successes": 4, "p_value": 0.0625,
                                      "ci95": [0, 1], "ci99": [0, 1], "promoted": promoted})
    store.close()
    return path


def test_the_status_names_the_gate_or_says_it_was_not_promoted(tmp_path):
    gate = gate_folder(tmp_path / "gate", [("gate-1", "h-good", True), ("gate-2", "h-bad", False)])
    good = promotion_status("h-good", gate)
    assert good["status"] == "promoted" and good["gate_id"] == "gate-1" and "gate-1" in describe(good)
    bad = promotion_status("h-bad", gate)
    assert bad["status"] == "NOT promoted" and "NOT promoted by gate gate-2" in describe(bad)
    assert promotion_status("h-good", None)["status"] == "not checked"
    with pytest.raises(UserError, match="no gate there judged this strategy"):
        promotion_status("h-other", gate)
    with pytest.raises(UserError, match="no run store"):
        promotion_status("h-good", tmp_path / "empty")


def test_the_report_prints_configuration_e_status(tmp_path, capsys):
    store = RunStore(tmp_path / "run")
    store.record_run("sim:m/E", "helix", {"model": "sim:m", "config": "E", "tasks": 1,
                                          "promotion": promotion_status("h-good", gate_folder(
                                              tmp_path / "gate", [("gate-9", "h-good", True)]))})
    store.record_run("sim:m/C", "helix", {"model": "sim:m", "config": "C", "tasks": 1})
    record(store, "sim:m/E", "fx-clamp-m01", PERFECT)
    record(store, "sim:m/C", "fx-clamp-m01", PERFECT)
    store.close()
    with pytest.raises(SystemExit) as done:
        main(["report", str(tmp_path / "run")])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert "## Configuration E: was its strategy promoted?" in out
    assert "`sim:m/E`: promoted by gate gate-9 on split release" in out and "`sim:m/C`" not in out.split(
        "## Configuration E")[1].split("##")[0]


def test_promoted_by_is_refused_without_configuration_e(tmp_path, capsys):
    gate = gate_folder(tmp_path / "gate", [("gate-1", "h", True)])
    with pytest.raises(SystemExit) as done:
        main(["run", "--pack", "katas", "--split", "all", "--config", "C", "--model", "sim:strong",
              "--promoted-by", str(gate), "--run", str(tmp_path / "r"), "--limit", "1"])
    assert done.value.code == 2 and "--config E only" in capsys.readouterr().err
