"""The runner's per-task ledger buffer and the store's multi-row write: the same rows as one
INSERT per call, written when the task ends (also after an error)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testhelix.helix.runner import TaskLedger
from testhelix.store.runstore import RunStore


def _row(i: int, **extra: object) -> dict:
    return {"run_label": "m/C", "task_id": f"t{i % 3}", "role": "agent", "pair": i % 2, "round": 0, "model": "sim:weak",
            "input_tokens": 10 + i, "output_tokens": i, "status": "ok", "simulated": True, "charged_tokens": 10 + 2 * i,
            **extra}


def _ledger(store: RunStore) -> list[tuple]:
    _, rows = store.query("SELECT run_label, task_id, role, pair, input_tokens, output_tokens, charged_tokens, error, "
                          "attempt_id FROM model_calls ORDER BY input_tokens")
    return rows


def test_multi_row_write_equals_one_insert_per_row(tmp_path: Path) -> None:
    rows = [_row(i) for i in range(450)] + [_row(1000, error="boom")]      # two column sets, chunks of 200
    one, many = RunStore(tmp_path / "one"), RunStore(tmp_path / "many")
    try:
        for row in rows:
            one.record_model_call(row)
        many.record_model_calls(rows)
        a, b = _ledger(one), _ledger(many)
        assert len(b) == len(rows)
        assert [r[:-1] for r in a] == [r[:-1] for r in b]
        assert {r[-1] for r in b} == {many.attempt_id}                      # the attempt is filled in
        _, ids = many.query("SELECT count(DISTINCT id) FROM model_calls")
        assert ids[0][0] == len(rows)
    finally:
        one.close()
        many.close()


def test_task_ledger_writes_when_flushed_and_when_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = RunStore(tmp_path / "run")
    try:
        ledger = TaskLedger(store)
        for i in range(5):
            ledger.record_model_call(_row(i))
        assert _ledger(store) == []                       # buffered until the task ends
        ledger.flush()
        assert len(_ledger(store)) == 5
        ledger.flush()                                    # nothing new: nothing written twice
        assert len(_ledger(store)) == 5
        monkeypatch.setattr(TaskLedger, "FLUSH_ROWS", 3)
        full = TaskLedger(store)
        for i in range(10, 13):
            full.record_model_call(_row(i))
        assert len(_ledger(store)) == 8                   # a long task does not hold its rows forever
    finally:
        store.close()


def test_evaluate_one_flushes_the_task_rows_even_when_the_pipeline_raises(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from testhelix.helix import runner as runner_module

    store = RunStore(tmp_path / "run")
    try:
        runner = runner_module.HelixRunner.__new__(runner_module.HelixRunner)
        runner.store = store

        def failing(self: object, task: object, strategy: object, config: object, model: object, label: object,
                    sink: TaskLedger) -> object:
            sink.record_model_call(_row(1))
            sink.record_model_call(_row(2))
            raise RuntimeError("the pipeline broke")

        monkeypatch.setattr(runner_module.HelixRunner, "_evaluate_one", failing)
        with pytest.raises(RuntimeError):
            runner.evaluate_one(None, None, None, "sim:weak", "m/C")  # type: ignore[arg-type]
        assert len(_ledger(store)) == 2
    finally:
        store.close()
