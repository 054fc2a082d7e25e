"""`testhelix evaluate` on the fixture tasks: --task JSON, and a whole split into a run store."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from click.testing import CliRunner

from testhelix.commands.cli import cli, main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"
PACK = FIXTURES / "pack"


def _invoke(*args):
    return CliRunner().invoke(cli, ["evaluate", *map(str, args)], catch_exceptions=False)


def test_task_json_exact_shape():
    res = _invoke("--task", PACK / "fx-clamp-m01", "--suite", FIXTURES / "suites" / "good" / "fx-clamp-m01",
                  "--json", "--workers", "2")
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert set(data) == {"task", "outcomes", "F", "A", "R", "S"}
    assert data["task"] == "fx-clamp-m01"
    assert list(data["outcomes"])[:2] == ["initial", "reference"]
    assert data["outcomes"]["initial"] == {"outcome": "fail", "reason": "tests failed (exit code 1)"}
    assert data["outcomes"]["reference"] == {"outcome": "pass", "reason": None}
    assert (data["F"], data["A"], data["R"], data["S"]) == (1, 1.0, 1.0, 1)


def test_weak_suite_scores_low():
    res = _invoke("--task", PACK / "fx-stack-m02", "--suite", FIXTURES / "suites" / "weak" / "fx-stack-m02",
                  "--json", "--workers", "2")
    data = json.loads(res.output)
    assert (data["F"], data["A"], data["R"], data["S"]) == (0, 1.0, 0.0, 0)


def test_bad_input_exits_2(tmp_path, capsys):
    import pytest

    with pytest.raises(SystemExit) as exc:
        main(["evaluate", "--task", str(PACK / "fx-clamp-m01"), "--suite", str(tmp_path / "none")])
    assert exc.value.code == 2
    assert "suite folder does not exist" in capsys.readouterr().err


def test_split_into_run_store(tmp_path):
    from testhelix.store.runstore import RunStore

    suites = tmp_path / "suites"
    shutil.copytree(FIXTURES / "suites" / "good" / "fx-clamp-m01", suites / "fx-clamp-m01")  # stack: missing
    run = tmp_path / "run"
    res = _invoke("--pack", PACK, "--split", "all", "--suites", suites, "--run", run, "--json", "--workers", "2")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["tasks"] == 2 and summary["missing"] == 1
    assert summary["metrics"]["reference_acceptance"] == 0.5
    # the task without a suite stays in the VAR/IRR denominators with no credit
    assert summary["metrics"]["valid_tasks"] == 2 and summary["metrics"]["missing_tasks"] == 0
    store = RunStore(run, read_only=True)
    results = {r["task_id"]: r for r in store.task_results("evaluate")}
    assert results["fx-clamp-m01"]["S"] == 1 and results["fx-clamp-m01"]["submitted"]
    assert not results["fx-stack-m02"]["submitted"] and results["fx-stack-m02"]["F"] == 0
    statuses = {(r["task_id"], r["program_id"]): r["status"] for r in store.task_outcomes("evaluate")}
    assert statuses[("fx-stack-m02", "reference")] == "error"
    assert statuses[("fx-clamp-m01", "inv-nolo")] == "fail"
    store.close()


def test_split_file_names_the_tasks(tmp_path):
    split = tmp_path / "split.json"
    from testhelix.tasks.splits import make_splits, write_split_file

    sf = make_splits(PACK, {"proposal": 1, "development": 1, "release": 0, "test": 0}, 42, None)
    write_split_file(sf, split)
    res = _invoke("--pack", PACK, "--split", "development", "--split-file", split,
                  "--suites", FIXTURES / "suites" / "good", "--run", tmp_path / "run", "--json", "--workers", "1")
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["tasks"] == 1
