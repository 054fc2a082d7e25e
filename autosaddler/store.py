"""AutoSaddler's queries of its own run-store tables (autosaddler/schema.py): the search DAG, the
search's evaluations and the splits a release gate spent. The search, the gate, the commands and
the views call these; none of them writes SQL.

Rows read back from the DAG tables are returned as stored (column -> value, JSON columns as their
text): `EvolutionDAG.load` validates each one and names a damaged or tampered row.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the package registers its schema on import: keep that free of DuckDB's import
    from testhelix.store.runstore import RunStore


# --- the search DAG -----------------------------------------------------------------------------
def record_node(store: RunStore, row: dict[str, Any], parent_id: str | None,
                sessions: dict[str, dict[str, Any]]) -> None:
    """One node's row (JSON columns already as text), its edge from `parent_id` and its
    optimizer sessions' usage (session -> optimizer_sessions columns), in the caller's transaction."""
    store.upsert("dag_nodes", row)
    if parent_id is not None:
        store.upsert("dag_edges", {"parent_id": parent_id, "child_id": row["node_id"]})
    for session, usage in sessions.items():
        store.upsert("optimizer_sessions", {"node_id": row["node_id"], "session": session, **usage})


def node_rows(store: RunStore) -> list[dict[str, Any]]:
    """Every stored node's row, by iteration and node id."""
    cols, rows = store.query("SELECT * FROM dag_nodes ORDER BY iteration, node_id")
    return [dict(zip(cols, r)) for r in rows]


def edge_rows(store: RunStore) -> list[tuple[str, str]]:
    """Every stored (parent id, child id)."""
    _, rows = store.query("SELECT parent_id, child_id FROM dag_edges")
    return [(parent, child) for parent, child in rows]


def parent_strategy(store: RunStore, node_id: str) -> dict | None:
    """The strategy JSON of a node's parent, or None (the root, or an unknown node)."""
    _, rows = store.query("SELECT n.strategy FROM dag_edges e JOIN dag_nodes n ON n.node_id = e.parent_id "
                          "WHERE e.child_id = ?", [node_id])
    if not rows:
        return None
    value = rows[0][0]
    return json.loads(value) if isinstance(value, str) else value


# --- the search's evaluations -------------------------------------------------------------------
def get_search_eval(store: RunStore, strategy_hash: str, task_id: str) -> dict[str, Any] | None:
    """The stored evaluation of one strategy on one task, or None."""
    cols, rows = store.query("SELECT * FROM search_evals WHERE strategy_hash = ? AND task_id = ?",
                             [strategy_hash, task_id])
    return dict(zip(cols, rows[0])) if rows else None


def put_search_eval(store: RunStore, strategy_hash: str, task_id: str, split: str, success: int,
                    trace: dict[str, Any]) -> None:
    store.upsert("search_evals", {"strategy_hash": strategy_hash, "task_id": task_id, "split": split,
                                  "success": success, "trace": trace, "attempt_id": store.attempt_id})


@dataclass(frozen=True)
class TaskSuccess:
    task_id: str
    success: int


def development_successes(store: RunStore, strategy_hash: str) -> list[TaskSuccess]:
    """A strategy's stored development evaluations, by task id."""
    _, rows = store.query("SELECT task_id, success FROM search_evals WHERE strategy_hash = ? AND split = "
                          "'development' ORDER BY task_id", [strategy_hash])
    return [TaskSuccess(str(task), int(ok)) for task, ok in rows]


# --- spent release splits -----------------------------------------------------------------------
def spent_splits(store: RunStore, pack: str) -> dict[str, str]:
    """split -> the release gate that spent it, for one pack."""
    _, rows = store.query("SELECT split, gate_id FROM spent_splits WHERE pack = ?", [pack])
    return {str(split): str(gate_id) for split, gate_id in rows}


def record_spent_split(store: RunStore, pack: str, split: str, gate_id: str) -> None:
    store.upsert("spent_splits", {"pack": pack, "split": split, "gate_id": gate_id})
