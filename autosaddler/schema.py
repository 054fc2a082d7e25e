"""AutoSaddler's part of the run store: its tables and its run kind (search), declared as
the `testhelix.store_schemas` entry point `autosaddler` (pyproject.toml) and registered with
TestHelix's named migrations (testhelix/store/migrations.py) by every process that opens a store. Its
queries of these tables are beside it, in autosaddler/store.py.

The search's first tables (dag_nodes, dag_edges, search_evals, spent_splits) were
created by TestHelix's first migrations ("1", "2"), before packages owned their migrations; a store
made then keeps them and `autosaddler:search-tables` only records its name there (CREATE TABLE IF
NOT EXISTS, columns as the later migrations left them). A later change is a new migration appended
here as `autosaddler:<what it does>`, never an edit of a released one.
"""

from __future__ import annotations

from testhelix.store import migrations
from testhelix.store.migrations import RunKind, StoreSchema

# finished_evaluations (testhelix/store/migrations.py) with the search's evaluations added: recorded as
# `search:<hash>` when the provider prevented one, their model calls labelled `<scope>/<hash12>`.
FINISHED_EVALUATIONS = f"""
    CREATE OR REPLACE VIEW finished_evaluations AS {migrations.CORE_FINISHED_EVALUATIONS}
    UNION ALL SELECT 'search:' || strategy_hash, task_id, attempt_id, left(strategy_hash, 12) FROM search_evals;
"""

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
    # The search DAG, the search's evaluations (one row per strategy x task, so a resumed search
    # never re-runs a finished task) and the splits a release gate spent. A store
    # made before this migration existed has them all (search_evals gains attempt_id only if it
    # predates attempts).
    ("autosaddler:search-tables", """
    CREATE TABLE IF NOT EXISTS dag_nodes (
        node_id TEXT PRIMARY KEY, iteration INTEGER, strategy_hash TEXT, strategy JSON, edit JSON,
        status TEXT, reason TEXT, parent_outcomes JSON, child_outcomes JSON, dev_score DOUBLE,
        optimizer_usage JSON, generator_usage JSON, elapsed_s DOUBLE, created_at TIMESTAMP DEFAULT now());
    CREATE TABLE IF NOT EXISTS dag_edges (parent_id TEXT, child_id TEXT, PRIMARY KEY (parent_id, child_id));
    CREATE TABLE IF NOT EXISTS search_evals (
        strategy_hash TEXT, task_id TEXT, split TEXT, success INTEGER, trace JSON,
        created_at TIMESTAMP DEFAULT now(), PRIMARY KEY (strategy_hash, task_id));
    ALTER TABLE search_evals ADD COLUMN IF NOT EXISTS attempt_id TEXT;
    CREATE TABLE IF NOT EXISTS spent_splits (pack TEXT, split TEXT, gate_id TEXT, PRIMARY KEY (pack, split));
    """ + FINISHED_EVALUATIONS),
)

# The release gate's decisions go to gate_results, TestHelix's release ledger (testhelix/store/migrations.py).
SCHEMA = StoreSchema("autosaddler", MIGRATIONS, kinds=(
    RunKind("search", "a strategy search",
            "SELECT 1 FROM dag_nodes UNION ALL SELECT 1 FROM search_state WHERE key IN ('meta', 'search')",
            "autosaddler dag"),
))

migrations.register_schema(SCHEMA)  # also when imported without the entry point (a source tree not installed)

