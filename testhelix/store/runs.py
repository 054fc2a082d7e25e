"""Typed reads of a run's own records (runs, task results and outcomes) that the reports, the view
and the pipeline ask for: each returns values or frozen dataclasses, never a cursor."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from testhelix.core.errors import UserError
from testhelix.store.runstore import RunStore


@dataclass(frozen=True)
class RunRecord:
    """One row of `runs`: a run label, its kind and the settings it recorded (a JSON object; a
    value that is not one, or does not parse, reads as {})."""

    run_label: str
    kind: str | None
    config: dict[str, Any]


def _object(value: object) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


def run_records(store: RunStore, kind: str | None = None, label_prefix: str | None = None) -> list[RunRecord]:
    """The runs recorded, by label; only one kind, or only labels starting with `label_prefix`."""
    conditions, params = [], []
    if kind is not None:
        conditions.append("kind = ?")
        params.append(kind)
    if label_prefix is not None:
        conditions.append("starts_with(run_label, ?)")
        params.append(label_prefix)
    where = f"WHERE {' AND '.join(conditions)}" if conditions else ""
    _, rows = store.query(f"SELECT run_label, kind, config FROM runs {where} ORDER BY run_label", params)
    return [RunRecord(str(label), kind_, _object(config)) for label, kind_, config in rows]


def task_finished(store: RunStore, run_label: str, task_id: str) -> bool:
    """Has this run label a result for this task (resume skips it)?"""
    _, rows = store.query("SELECT 1 FROM task_results WHERE run_label = ? AND task_id = ?", [run_label, task_id])
    return bool(rows)


def judged_task_ids(store: RunStore) -> set[str]:
    """Every task any run label has a result or a judged outcome for."""
    _, rows = store.query("SELECT task_id FROM task_results UNION SELECT task_id FROM task_outcomes")
    return {str(row[0]) for row in rows}


def has_rows(store: RunStore, table: str) -> bool:
    """Does `table` exist and hold a row (False for a table this store lacks)?"""
    quoted = '"' + table.replace('"', '""') + '"'
    try:
        _, rows = store.query(f"SELECT 1 FROM {quoted} LIMIT 1")
    except UserError:
        return False
    return bool(rows)
