"""The run store's schema: named migrations, each owned by the package whose tables it creates.

A store records every migration it applied by name in `schema_meta` (version, name); opening a
store applies, in registration order and one transaction each, the registered migrations it has not
applied yet. TestHelix registers its own below; AutoSaddler (autosaddler/schema.py) and GTDD
(gtdd/schema.py) register theirs when they are imported, through `register`. A package adding a
table appends a migration with a new name to its own list: names are recorded, never numbers, so
migrations added on different branches merge by appending both, in any order.

Names of a package other than TestHelix are written `owner:name` so that a process that never
imported that package (a `testhelix` command reading a search run) recognises them as another
package's tables and leaves them alone, while an unknown name of a package it did import means a
newer version made the store. The names applied before packages owned their migrations are kept
exactly as they were recorded (`LEGACY_NAMES`); one of them, `optimizer-sessions`, is AutoSaddler's.

The first two migrations also created AutoSaddler's first tables (dag_nodes, dag_edges,
search_state, gate_results, search_evals, spent_splits). They stay here unchanged: stores in use
recorded them under these names, and TestHelix's call accounting (the view below) reads
search_evals to attribute the calls of strategy-search evaluations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:   # importing a package registers its migrations: keep that free of DuckDB's import
    import duckdb

CORE = "testhelix"


@dataclass(frozen=True)
class Migration:
    owner: str      # the package whose tables it creates
    name: str       # unique, recorded in schema_meta; never renamed once released
    sql: str


MIGRATIONS: tuple[Migration, ...] = (
    # the base schema
    Migration(CORE, "1", """
    CREATE TABLE runs (run_label TEXT PRIMARY KEY, kind TEXT, config JSON, created_at TIMESTAMP DEFAULT now());
    CREATE TABLE tasks (task_id TEXT PRIMARY KEY, pack TEXT, context TEXT, difficulty TEXT, digest TEXT);
    CREATE TABLE executions (
        key TEXT PRIMARY KEY, suite_digest TEXT, program_digest TEXT, runner_version TEXT, limits JSON,
        status TEXT, reason TEXT, tests_run INTEGER, duration_s DOUBLE, output TEXT,
        created_at TIMESTAMP DEFAULT now());
    CREATE SEQUENCE model_call_seq;
    CREATE TABLE model_calls (
        id BIGINT DEFAULT nextval('model_call_seq'), run_label TEXT, task_id TEXT, role TEXT, pair INTEGER,
        round INTEGER, model TEXT, input_tokens BIGINT, output_tokens BIGINT, cache_read_tokens BIGINT,
        cache_write_tokens BIGINT, cost_usd DOUBLE, latency_s DOUBLE, cache_hit BOOLEAN, status TEXT,
        error TEXT, simulated BOOLEAN, created_at TIMESTAMP DEFAULT now());
    CREATE TABLE task_outcomes (
        run_label TEXT, task_id TEXT, program_id TEXT, role TEXT, label TEXT, status TEXT, reason TEXT,
        PRIMARY KEY (run_label, task_id, program_id));
    CREATE TABLE task_results (
        run_label TEXT, task_id TEXT, submitted BOOLEAN, suite_digest TEXT, F INTEGER, A DOUBLE, R DOUBLE,
        S INTEGER, delta_c DOUBLE, entry_coverage DOUBLE, coverage_status TEXT, tokens BIGINT,
        calls INTEGER, wall_s DOUBLE, detail JSON, PRIMARY KEY (run_label, task_id));
    CREATE TABLE metrics (run_label TEXT, name TEXT, value DOUBLE, PRIMARY KEY (run_label, name));
    CREATE TABLE dag_nodes (
        node_id TEXT PRIMARY KEY, iteration INTEGER, strategy_hash TEXT, strategy JSON, edit JSON,
        status TEXT, reason TEXT, parent_outcomes JSON, child_outcomes JSON, dev_score DOUBLE,
        optimizer_usage JSON, generator_usage JSON, elapsed_s DOUBLE, created_at TIMESTAMP DEFAULT now());
    CREATE TABLE dag_edges (parent_id TEXT, child_id TEXT, PRIMARY KEY (parent_id, child_id));
    CREATE TABLE search_state (key TEXT PRIMARY KEY, value JSON);
    CREATE TABLE gate_results (
        gate_id TEXT PRIMARY KEY, challenger_hash TEXT, baseline_hash TEXT, split TEXT, model TEXT,
        n INTEGER, wins INTEGER, losses INTEGER, challenger_successes INTEGER, baseline_successes INTEGER,
        p_value DOUBLE, ci95 JSON, ci99 JSON, promoted BOOLEAN, created_at TIMESTAMP DEFAULT now());
    """),
    # strategy-search evaluations (one row per strategy x task, so a resumed search never re-runs a
    # finished task) and splits spent by a release gate
    Migration(CORE, "2", """
    CREATE TABLE search_evals (
        strategy_hash TEXT, task_id TEXT, split TEXT, success INTEGER, trace JSON,
        created_at TIMESTAMP DEFAULT now(), PRIMARY KEY (strategy_hash, task_id));
    CREATE TABLE spent_splits (pack TEXT, split TEXT, gate_id TEXT, PRIMARY KEY (pack, split));
    """),
    Migration(CORE, "attempts-and-accounting", """
    CREATE TABLE attempts (
        attempt_id TEXT PRIMARY KEY, pid INTEGER, command TEXT, status TEXT, last_call_id BIGINT,
        started_at TIMESTAMP DEFAULT now(), ended_at TIMESTAMP);
    ALTER TABLE model_calls ADD COLUMN attempt_id TEXT;
    ALTER TABLE task_results ADD COLUMN attempt_id TEXT;
    ALTER TABLE search_evals ADD COLUMN attempt_id TEXT;
    -- A call is attributed when the evaluation it served finished: its attempt closed normally,
    -- the attempt committed a step after the call, or the task result it served was recorded by
    -- the same attempt. Calls of abandoned work stay (the money was spent) but are not attributed.
    CREATE VIEW model_call_accounting AS
    SELECT c.*, coalesce(a.status, 'finished') AS attempt_status,
           (c.attempt_id IS NULL OR a.status = 'finished' OR c.id <= coalesce(a.last_call_id, -1)
            OR EXISTS (SELECT 1 FROM task_results r WHERE r.run_label = c.run_label AND r.task_id = c.task_id
                       AND r.attempt_id = c.attempt_id)
            OR EXISTS (SELECT 1 FROM search_evals e WHERE e.task_id = c.task_id AND e.attempt_id = c.attempt_id
                       AND c.run_label LIKE '%/' || left(e.strategy_hash, 12))) AS attributed
    FROM model_calls c LEFT JOIN attempts a USING (attempt_id);
    """),
    # Provider failures as a state. model_calls gains the SDK retries behind each call (count,
    # causes, seconds waited), whether the provider reported usage, the tokens charged to the budget
    # (reported usage, clamped; or the kept reservation) and any anomaly found at the boundary.
    # incomplete_evals holds every task evaluation the provider prevented; it never gets a metric
    # row, and an evaluation is unresolved while no task_results row exists for it.
    Migration(CORE, "provider-failures", """
    ALTER TABLE model_calls ADD COLUMN retries INTEGER;
    ALTER TABLE model_calls ADD COLUMN retry_causes TEXT;
    ALTER TABLE model_calls ADD COLUMN retry_wait_s DOUBLE;
    ALTER TABLE model_calls ADD COLUMN usage_reported BOOLEAN;
    ALTER TABLE model_calls ADD COLUMN charged_tokens BIGINT;
    ALTER TABLE model_calls ADD COLUMN anomaly TEXT;
    CREATE TABLE incomplete_evals (
        run_label TEXT, task_id TEXT, cause TEXT, error TEXT, tokens BIGINT, calls INTEGER,
        created_at TIMESTAMP DEFAULT now());
    """),
    # The order each task's panel ran in, for audit after the fact: drawn from a secret token per
    # evaluation (testhelix/prism/evaluation.py), kept on the host, never shown to a job.
    Migration(CORE, "panel-orders", """
    CREATE TABLE panel_orders (
        run_label TEXT, task_id TEXT, token TEXT, run_order JSON, created_at TIMESTAMP DEFAULT now(),
        PRIMARY KEY (run_label, task_id));
    """),
)

# Recorded before packages owned their migrations: bare names, known to every process.
LEGACY_NAMES = frozenset({"1", "2", "attempts-and-accounting", "optimizer-sessions", "provider-failures"})

_registered: list[Migration] = list(MIGRATIONS)


def register(owner: str, migrations: Iterable[tuple[str, str]]) -> None:
    """Add `owner`'s (name, sql) migrations after those registered so far (again: no effect).
    A name is `owner:name` unless it is one of LEGACY_NAMES."""
    for name, sql in migrations:
        if name not in LEGACY_NAMES and not name.startswith(f"{owner}:"):
            raise ValueError(f"migration {name!r} of {owner} must be named '{owner}:...'")
        known = next((m for m in _registered if m.name == name), None)
        if known is not None:
            if known.owner != owner or known.sql != sql:
                raise ValueError(f"migration {name!r} is registered already with other content")
            continue
        _registered.append(Migration(owner, name, sql))


def registered() -> tuple[Migration, ...]:
    return tuple(_registered)


def latest_version() -> int:
    """The schema version a store has once every registered migration is applied."""
    return len(_registered)


def applied(conn: duckdb.DuckDBPyConnection) -> set[str]:
    import duckdb

    try:
        rows = conn.execute("SELECT version, name FROM schema_meta").fetchall()
    except duckdb.Error:
        try:
            rows = [(v, None) for (v,) in conn.execute("SELECT version FROM schema_meta").fetchall()]
        except duckdb.Error:
            return set()
    return {name or str(version) for version, name in rows}


def pending(conn: duckdb.DuckDBPyConnection) -> list[Migration]:
    done = applied(conn)
    return [m for m in _registered if m.name not in done]


def unknown(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """Applied names this process cannot account for: a newer version made the store. Names of a
    package this process did not import belong to that package and are not judged here."""
    owners = {m.owner for m in _registered}
    known = {m.name for m in _registered} | LEGACY_NAMES
    return sorted(n for n in applied(conn) - known if ":" not in n or n.split(":", 1)[0] in owners)


def apply(conn: duckdb.DuckDBPyConnection, migration: Migration) -> None:
    """Run one migration and record it (inside the caller's transaction)."""
    conn.execute(migration.sql)
    conn.execute("INSERT INTO schema_meta (version, name) SELECT coalesce(max(version), 0) + 1, ? FROM schema_meta",
                 [migration.name])


def migrate(conn: duckdb.DuckDBPyConnection, transaction: Callable[[], AbstractContextManager],
            newer: Callable[[str], Exception]) -> None:
    """Apply every pending migration, each in its own transaction; `newer(name)` is raised when the
    store records a migration this version does not know."""
    conn.execute("CREATE TABLE IF NOT EXISTS schema_meta (version INTEGER)")
    conn.execute("ALTER TABLE schema_meta ADD COLUMN IF NOT EXISTS name TEXT")
    strange = unknown(conn)
    if strange:
        raise newer(strange[0])
    for migration in pending(conn):
        with transaction():
            apply(conn, migration)
