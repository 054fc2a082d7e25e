"""The run store's schema: named migrations and run kinds, each owned by the package whose tables
they concern.

A store records every migration it applied by name in `schema_meta` (version, name); opening a
store applies, in registration order and one transaction each, the registered migrations it has not
applied yet. TestHelix's own migrations are below and create only its own tables. Every other
package contributes a `StoreSchema` (its migrations and the run kinds its tables reveal) through an
entry point of the `testhelix.store_schemas` group (AutoSaddler: autosaddler/schema.py, GTDD:
gtdd/schema.py); every process that opens a store loads them, once, before the first question about
the schema (`load_schemas`), so a `testhelix` command recognises a search folder and its tables.
A package adding a table appends a migration with a new name to its own list: names are recorded,
never numbers, so migrations added on different branches merge by appending both, in any order.

Names of a package other than TestHelix are written `owner:name` so that a process where that
package is not installed recognises them as another package's tables and leaves them alone, while an
unknown name of a package it loaded means a newer version made the store. The names applied before
packages owned their migrations are kept exactly as they were recorded (`LEGACY_NAMES`).

Before packages owned their migrations, "1" and "2" also created AutoSaddler's first tables
(dag_nodes, dag_edges, search_evals, spent_splits) and "attempts-and-accounting" altered
search_evals. Those tables now come from `autosaddler:search-tables` (CREATE TABLE IF NOT EXISTS, so
on a store that has them it only records its name), and "1" and "attempts-and-accounting" create
TestHelix's tables only; "2" is AutoSaddler's alone and no longer registered (a store that recorded
it is still recognised). search_state stays TestHelix's: it is the key-value state of any run
(`testhelix run` keeps its settings there too). gate_results is TestHelix's too: it is the release
ledger, the contract between a release gate (which writes it: `autosaddler gate`) and its readers
in TestHelix (configuration E's promotion check, helix/promotion.py, and the gate part of
`testhelix view`), so its table and the `gate` run kind are declared here. Which evaluations finished is the view
`finished_evaluations`: TestHelix's lists its task results, and AutoSaddler's migration replaces it
with one that adds the search's evaluations; the call accounting and the unresolved incomplete
evaluations read it and no package's table directly. tests/robustness/test_store_upgrade.py shows a
store made by the earlier schema and a new one end with the same tables, columns and view values.
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


# TestHelix's rows of the view `finished_evaluations` (a package extending the view keeps them).
CORE_FINISHED_EVALUATIONS = ("SELECT run_label, task_id, attempt_id, CAST(NULL AS TEXT) AS calls_label_suffix "
                             "FROM task_results")

MIGRATIONS: tuple[Migration, ...] = (
    # the base schema; search_state is the key-value state of any run (its name is historical)
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
    CREATE TABLE search_state (key TEXT PRIMARY KEY, value JSON);
    -- the release ledger: one row per release gate decision (see the module docstring)
    CREATE TABLE gate_results (
        gate_id TEXT PRIMARY KEY, challenger_hash TEXT, baseline_hash TEXT, split TEXT, model TEXT,
        n INTEGER, wins INTEGER, losses INTEGER, challenger_successes INTEGER, baseline_successes INTEGER,
        p_value DOUBLE, ci95 JSON, ci99 JSON, promoted BOOLEAN, created_at TIMESTAMP DEFAULT now());
    """),
    Migration(CORE, "attempts-and-accounting", """
    CREATE TABLE attempts (
        attempt_id TEXT PRIMARY KEY, pid INTEGER, command TEXT, status TEXT, last_call_id BIGINT,
        started_at TIMESTAMP DEFAULT now(), ended_at TIMESTAMP);
    ALTER TABLE model_calls ADD COLUMN attempt_id TEXT;
    ALTER TABLE task_results ADD COLUMN attempt_id TEXT;
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
    # Which evaluations finished, whatever package recorded them: (run_label, task_id, attempt_id)
    # and, for an evaluation recorded under another label than its model calls, the suffix of the
    # calls' labels (`<scope>/<suffix>`). A package whose own tables record finished evaluations
    # replaces the view with one that adds them (AutoSaddler: autosaddler/schema.py); TestHelix's
    # migrations are registered before any package's, so on every store the replacement comes last
    # (a later TestHelix migration must not redefine the view without the packages' rows).
    # A call is attributed when the evaluation it served finished: its attempt closed normally,
    # the attempt committed a step after the call, or the evaluation it served was recorded by
    # the same attempt. Calls of abandoned work stay (the money was spent) but are not attributed.
    Migration(CORE, "finished-evaluations", f"""
    CREATE OR REPLACE VIEW finished_evaluations AS {CORE_FINISHED_EVALUATIONS};
    CREATE OR REPLACE VIEW model_call_accounting AS
    SELECT c.*, coalesce(a.status, 'finished') AS attempt_status,
           (c.attempt_id IS NULL OR a.status = 'finished' OR c.id <= coalesce(a.last_call_id, -1)
            OR EXISTS (SELECT 1 FROM finished_evaluations f WHERE f.task_id = c.task_id
                       AND f.attempt_id = c.attempt_id
                       AND (f.run_label = c.run_label OR c.run_label LIKE '%/' || f.calls_label_suffix)))
           AS attributed
    FROM model_calls c LEFT JOIN attempts a USING (attempt_id);
    """),
)

# Recorded before packages owned their migrations: bare names, known to every process.
LEGACY_NAMES = frozenset({"1", "2", "attempts-and-accounting", "optimizer-sessions", "provider-failures"})


@dataclass(frozen=True)
class RunKind:
    """A kind of run a folder can hold, told by its rows: a command refuses a folder of another kind
    in one line naming both."""

    name: str          # e.g. "search"
    description: str   # completes "this run folder holds ...", e.g. "a strategy search"
    query: str         # a SELECT that yields a row when the store holds this kind of run
    reader: str = ""   # the command that reads it, named when another command is refused it


@dataclass(frozen=True)
class StoreSchema:
    """What a package adds to the run store, declared as an entry point of `testhelix.store_schemas`
    (`pkg = "pkg.schema:SCHEMA"`): its migrations, (name, sql) in order, and its run kinds."""

    owner: str
    migrations: tuple[tuple[str, str], ...]
    kinds: tuple[RunKind, ...] = ()


# TestHelix's own run kinds; every other kind is registered by the package whose tables show it.
CORE_KINDS = (
    RunKind("helix", "a `testhelix run`", "SELECT 1 FROM runs WHERE kind = 'helix'", "testhelix report"),
    RunKind("evaluate", "a `testhelix evaluate` run", "SELECT 1 FROM runs WHERE kind = 'evaluate'", "testhelix report"),
    RunKind("gate", "a release gate", "SELECT 1 FROM gate_results", "testhelix view"),
)

_registered: list[Migration] = list(MIGRATIONS)
_kinds: dict[str, RunKind] = {k.name: k for k in CORE_KINDS}
_loaded = False


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


def register_schema(schema: StoreSchema) -> None:
    """Register a package's migrations and run kinds (again: no effect)."""
    register(schema.owner, schema.migrations)
    for kind in schema.kinds:
        if _kinds.setdefault(kind.name, kind) != kind:
            raise ValueError(f"run kind {kind.name!r} of {schema.owner} is registered already with other content")


def load_schemas() -> None:
    """Register every installed package's StoreSchema (entry points of `testhelix.store_schemas`),
    once per process; every question below about the schema asks this first."""
    global _loaded
    if _loaded:
        return
    _loaded = True   # first: loading a schema imports its package, which may ask again
    from testhelix.core.errors import UserError
    from testhelix.core.plugins import STORE_SCHEMAS_GROUP, group_entry_points

    for ep in sorted(group_entry_points(STORE_SCHEMAS_GROUP), key=lambda e: e.name):
        try:
            schema = ep.load()
        except (ImportError, AttributeError) as exc:
            raise UserError(f"the {STORE_SCHEMAS_GROUP} entry point {ep.name} = {ep.value!r} does not load "
                            f"({exc}); reinstall or remove the package that declares it") from None
        if not isinstance(schema, StoreSchema):
            raise UserError(f"the {STORE_SCHEMAS_GROUP} entry point {ep.name} = {ep.value!r} is not a StoreSchema "
                            f"(it is {type(schema).__name__})")
        register_schema(schema)


def registered() -> tuple[Migration, ...]:
    load_schemas()
    return tuple(_registered)


def run_kinds() -> dict[str, RunKind]:
    """Every known run kind by name: TestHelix's and those of the installed packages."""
    load_schemas()
    return dict(_kinds)


def latest_version() -> int:
    """The schema version a new store has once every registered migration is applied."""
    return len(registered())


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
    return [m for m in registered() if m.name not in done]


def unknown(conn: duckdb.DuckDBPyConnection) -> list[str]:
    """Applied names this process cannot account for: a newer version made the store. Names of a
    package that is not installed here belong to that package and are not judged here."""
    owners = {m.owner for m in registered()}
    known = {m.name for m in registered()} | LEGACY_NAMES
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
