"""AutoSaddler's tables in the run store, registered with TestHelix's named migrations
(testhelix/migrations.py) when `autosaddler` is imported.

The search's first tables (dag_nodes, dag_edges, search_state, gate_results, search_evals,
spent_splits) were created by TestHelix's first two migrations, before packages owned their
migrations, and stay there (see testhelix/migrations.py). Every later AutoSaddler table is declared
here; a new one is appended as `autosaddler:<what it does>`.
"""

from __future__ import annotations

from testhelix import migrations

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
