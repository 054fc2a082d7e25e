"""Incomplete evaluations in the store and in `testhelix report`: listed until they finish, never scored."""

from __future__ import annotations

from testhelix.commands.cli import main
from testhelix.commands.report import render_markdown
from testhelix.prism.report import collect
from testhelix.store.runstore import RunStore


def test_report_lists_unresolved_incomplete_evaluations(tmp_path, capsys):
    store = RunStore(tmp_path)
    store.record_incomplete("openai-compatible:sim/A", "t1", "server_error", "HTTP 503 after retries", 3280, 2)
    store.record_incomplete("openai-compatible:sim/A", "t2", "rate_limited", "HTTP 429 after retries", 0, 1)
    store.record_task_result({"run_label": "openai-compatible:sim/A", "task_id": "t2", "submitted": False,
                              "F": 0, "S": 0, "tokens": 10, "calls": 1})     # t2 finished on the rerun
    store.record_model_call({"run_label": "openai-compatible:sim/A", "task_id": "t1", "role": "generation",
                             "status": "error", "retries": 2, "input_tokens": 0, "output_tokens": 0})
    data = collect(store)
    store.close()
    pending = data["incomplete"]["evaluations"]
    assert [(p["task_id"], p["cause"], p["attempts"]) for p in pending] == [("t1", "server_error", 1)]
    text = render_markdown(data)
    assert "## Incomplete evaluations: 1 (not scored" in text and "| t1 | server_error | 1 |" in text
    assert "| openai-compatible:sim/A | 1 | 2 | 0 |" in text           # failed calls, SDK retries, anomalies


def test_report_of_a_run_with_only_incomplete_evaluations(tmp_path, capsys):
    store = RunStore(tmp_path)
    store.record_incomplete("sim:x/A", "t1", "overloaded", "HTTP 529", 0, 1)
    store.close()
    try:
        main(["report", str(tmp_path)])
    except SystemExit as done:
        assert done.code == 0
    assert "Incomplete evaluations: 1" in capsys.readouterr().out
