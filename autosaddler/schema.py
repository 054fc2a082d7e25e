"""AutoSaddler's tables in the run store, registered with TestHelix's named migrations
(testhelix/migrations.py) when `autosaddler` is imported.

The search's first tables (dag_nodes, dag_edges, search_state, gate_results, search_evals,
spent_splits) were created by TestHelix's first two migrations, before packages owned their
migrations, and stay there (see testhelix/migrations.py). Every later AutoSaddler table is declared
here; a new one is appended as `autosaddler:<what it does>`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from testhelix import migrations

if TYPE_CHECKING:  # importing autosaddler registers these migrations: keep that free of DuckDB's import
    from testhelix.store import RunStore

MIGRATIONS = (
    # Optimizer sessions of each search step: selection, diagnosis, reflection, each with its own
    # deadline, tokens, cost (NULL when unknown) and elapsed time. Its name predates the
    # `owner:name` convention and is kept as stores recorded it.
    ("optimizer-sessions", """
    CREATE TABLE optimizer_sessions (
        node_id TEXT, session TEXT, calls INTEGER, input_tokens BIGINT, output_tokens BIGINT, tokens BIGINT,
        cost_usd DOUBLE, failures INTEGER, timeouts INTEGER, elapsed_s DOUBLE, timeout_s DOUBLE,
        PRIMARY KEY (node_id, session));
    """),
)

migrations.register("autosaddler", MIGRATIONS)


def get_search_eval(store: RunStore, strategy_hash: str, task_id: str) -> dict[str, Any] | None:
    """The stored evaluation of one strategy on one task, or None."""
    cols, rows = store.query("SELECT * FROM search_evals WHERE strategy_hash = ? AND task_id = ?",
                             [strategy_hash, task_id])
    return dict(zip(cols, rows[0])) if rows else None


def put_search_eval(store: RunStore, strategy_hash: str, task_id: str, split: str, success: int,
                    trace: dict[str, Any]) -> None:
    store.upsert("search_evals", {"strategy_hash": strategy_hash, "task_id": task_id, "split": split,
                                  "success": success, "trace": trace, "attempt_id": store.attempt_id})
