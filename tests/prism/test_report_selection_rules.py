"""`testhelix report` shows which selection rule chose each submitted suite, per run label."""

from __future__ import annotations

import json

import pytest

from testhelix.commands.cli import main
from testhelix.store.runstore import RunStore


def test_selection_rule_distribution(tmp_path, capsys):
    store = RunStore(tmp_path)
    rules = {"t1": "witness-support", "t2": "merged", "t3": "fallback", "t4": "none", "t5": "fallback"}
    for task, rule in rules.items():
        store.record_task_outcomes("sim:m/C", task, [{"program_id": "reference", "role": "reference", "label": "valid",
                                                      "status": "pass", "reason": None}])
        store.record_task_result({"run_label": "sim:m/C", "task_id": task, "submitted": rule != "none",
                                  "detail": json.dumps({"submission": rule, "simulated": True})})
    store.close()
    with pytest.raises(SystemExit) as exit_info:
        main(["report", str(tmp_path)])
    assert exit_info.value.code == 0
    printed = capsys.readouterr().out
    assert "## Selection rules" in printed
    assert "| sim:m/C | 1 | 1 | 2 | 0 | 0 | 1 | 4/5 |" in printed
    assert "| sim:m/C | 1 | 1 | 2 | 0 | 0 | 1 | 4/5 |" in (tmp_path / "report.md").read_text()
    main_json = ["report", str(tmp_path), "--json"]
    with pytest.raises(SystemExit):
        main(main_json)
    data = json.loads(capsys.readouterr().out)
    assert data["selection_rules"]["sim:m/C"] == {"witness-support": 1, "merged": 1, "fallback": 2, "none": 1}
