"""The run store: one DuckDB file per run directory (`<run_dir>/run.duckdb`).

This module owns the schema. Every table a run writes is declared in `MIGRATIONS`; a store opened
on an older file applies the missing migrations in order inside one transaction, so a run
directory made by an older version keeps working and nothing stored is lost.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from testhelix.errors import UserError

DB_NAME = "run.duckdb"

MIGRATIONS: tuple[str, ...] = (
    # 1: the base schema
    """
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
    """,
    # 2: strategy-search evaluations (one row per strategy x task, so a resumed search never
    # re-runs a finished task) and splits spent by a release gate
    """
    CREATE TABLE search_evals (
        strategy_hash TEXT, task_id TEXT, split TEXT, success INTEGER, trace JSON,
        created_at TIMESTAMP DEFAULT now(), PRIMARY KEY (strategy_hash, task_id));
    CREATE TABLE spent_splits (pack TEXT, split TEXT, gate_id TEXT, PRIMARY KEY (pack, split));
    """,
    # 3: optimizer sessions of each search step: selection, diagnosis, reflection, each with its own
    # deadline, tokens, cost (NULL when unknown) and elapsed time
    """
    CREATE TABLE optimizer_sessions (
        node_id TEXT, session TEXT, calls INTEGER, input_tokens BIGINT, output_tokens BIGINT, tokens BIGINT,
        cost_usd DOUBLE, failures INTEGER, timeouts INTEGER, elapsed_s DOUBLE, timeout_s DOUBLE,
        PRIMARY KEY (node_id, session));
    """,
    # 4: provider failures as a state. model_calls gains the SDK retries behind each call (count,
    # causes, seconds waited), whether the provider reported usage, the tokens charged to the budget
    # (reported usage, clamped; or the kept reservation) and any anomaly found at the boundary.
    # incomplete_evals holds every task evaluation the provider prevented; it never gets a metric
    # row, and an evaluation is unresolved while no task_results row exists for it.
    """
    ALTER TABLE model_calls ADD COLUMN retries INTEGER;
    ALTER TABLE model_calls ADD COLUMN retry_causes TEXT;
    ALTER TABLE model_calls ADD COLUMN retry_wait_s DOUBLE;
    ALTER TABLE model_calls ADD COLUMN usage_reported BOOLEAN;
    ALTER TABLE model_calls ADD COLUMN charged_tokens BIGINT;
    ALTER TABLE model_calls ADD COLUMN anomaly TEXT;
    CREATE TABLE incomplete_evals (
        run_label TEXT, task_id TEXT, cause TEXT, error TEXT, tokens BIGINT, calls INTEGER,
        created_at TIMESTAMP DEFAULT now());
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)


class RunStore:
    """A run directory's database. Thread-safe for the writes a run makes (one lock)."""

    def __init__(self, run_dir: Path, read_only: bool = False):
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / DB_NAME
        if read_only and not self.path.exists():
            raise UserError(f"{self.run_dir}: no run store here (expected {DB_NAME})")
        if not read_only:
            self.run_dir.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = duckdb.connect(str(self.path), read_only=read_only)
        except duckdb.Error as err:
            raise UserError(f"{self.path}: cannot open the run store: {err}") from None
        self._lock = threading.RLock()
        self._depth = 0
        if not read_only:
            self._migrate()
        elif self.schema_version() > SCHEMA_VERSION:
            raise UserError(f"{self.path}: made by a newer version (schema {self.schema_version()})")

    # --- schema -------------------------------------------------------------------------
    def schema_version(self) -> int:
        try:
            row = self.conn.execute("SELECT max(version) FROM schema_meta").fetchone()
        except duckdb.CatalogException:
            return 0
        return int(row[0] or 0)

    def _migrate(self) -> None:
        self.conn.execute("CREATE TABLE IF NOT EXISTS schema_meta (version INTEGER)")
        current = self.schema_version()
        if current > SCHEMA_VERSION:
            raise UserError(f"{self.path}: made by a newer version (schema {current} > {SCHEMA_VERSION})")
        for version in range(current + 1, SCHEMA_VERSION + 1):
            with self.transaction():
                self.conn.execute(MIGRATIONS[version - 1])
                self.conn.execute("INSERT INTO schema_meta VALUES (?)", [version])

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One transaction; nested uses join the outer one (DuckDB has no savepoints)."""
        with self._lock:
            if self._depth:
                self._depth += 1
                try:
                    yield
                finally:
                    self._depth -= 1
                return
            self.conn.execute("BEGIN TRANSACTION")
            self._depth = 1
            try:
                yield
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            finally:
                self._depth = 0
            self.conn.execute("COMMIT")

    def close(self) -> None:
        self.conn.close()

    # --- generic ------------------------------------------------------------------------
    def query(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[tuple]]:
        with self._lock:
            try:
                cur = self.conn.execute(sql, list(params))
            except duckdb.Error as err:
                raise UserError(f"query failed: {err}") from None
            if cur.description is None:
                return [], []
            return [d[0] for d in cur.description], cur.fetchall()

    def _dicts(self, sql: str, params: Sequence[Any] = ()) -> list[dict]:
        cols, rows = self.query(sql, params)
        return [dict(zip(cols, r)) for r in rows]

    def upsert(self, table: str, row: dict) -> None:
        """Insert or replace one row (dicts and lists are stored as JSON)."""
        cols = list(row)
        values = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in row.values()]
        marks = ", ".join("?" for _ in cols)
        with self._lock:
            self.conn.execute(f"INSERT OR REPLACE INTO {table} ({', '.join(cols)}) VALUES ({marks})", values)

    # --- executions (the outcome cache) ---------------------------------------------------
    def get_execution(self, key: str) -> dict | None:
        rows = self._dicts("SELECT * FROM executions WHERE key = ?", [key])
        return rows[0] if rows else None

    def put_execution(self, key: str, row: dict) -> None:
        self.upsert("executions", {"key": key, **row})

    # --- ledger -----------------------------------------------------------------------------
    def record_model_call(self, row: dict) -> None:
        cols = list(row)
        with self._lock:
            self.conn.execute(f"INSERT INTO model_calls ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                              list(row.values()))

    def model_calls(self, run_label: str | None = None) -> list[dict]:
        where, params = ("WHERE run_label = ?", [run_label]) if run_label else ("", [])
        return self._dicts(f"SELECT * FROM model_calls {where} ORDER BY id", params)

    # --- evaluation ---------------------------------------------------------------------------
    def record_run(self, run_label: str, kind: str, config: dict) -> None:
        self.upsert("runs", {"run_label": run_label, "kind": kind, "config": config})

    def record_task(self, task_id: str, pack: str, context: str, difficulty: str, digest: str) -> None:
        self.upsert("tasks", {"task_id": task_id, "pack": pack, "context": context,
                               "difficulty": difficulty, "digest": digest})

    def record_task_outcomes(self, run_label: str, task_id: str, rows: list[dict]) -> None:
        with self.transaction():
            self.conn.execute("DELETE FROM task_outcomes WHERE run_label = ? AND task_id = ?", [run_label, task_id])
            for r in rows:
                self.upsert("task_outcomes", {"run_label": run_label, "task_id": task_id, **r})

    def record_task_result(self, row: dict) -> None:
        self.upsert("task_results", row)

    def task_outcomes(self, run_label: str | None = None) -> list[dict]:
        where, params = ("WHERE run_label = ?", [run_label]) if run_label else ("", [])
        return self._dicts(f"SELECT * FROM task_outcomes {where} ORDER BY run_label, task_id, program_id", params)

    def task_results(self, run_label: str | None = None) -> list[dict]:
        where, params = ("WHERE run_label = ?", [run_label]) if run_label else ("", [])
        return self._dicts(f"SELECT * FROM task_results {where} ORDER BY run_label, task_id", params)

    def run_labels(self) -> list[str]:
        cols, rows = self.query("SELECT DISTINCT run_label FROM task_results ORDER BY run_label")
        return [r[0] for r in rows]

    # --- incomplete evaluations (the provider prevented them) ----------------------------------
    def record_incomplete(self, run_label: str, task_id: str, cause: str, error: str, tokens: int, calls: int) -> None:
        with self._lock:
            self.conn.execute("INSERT INTO incomplete_evals (run_label, task_id, cause, error, tokens, calls) "
                              "VALUES (?, ?, ?, ?, ?, ?)", [run_label, task_id, cause, error[:1000], tokens, calls])

    def unresolved_incomplete(self, run_label: str | None = None) -> list[dict]:
        """The latest incomplete record of every evaluation that has not finished since."""
        where, params = ("AND i.run_label = ?", [run_label]) if run_label else ("", [])
        return self._dicts(
            "SELECT i.run_label, i.task_id, arg_max(i.cause, i.created_at) AS cause, "
            "arg_max(i.error, i.created_at) AS error, count(*) AS attempts FROM incomplete_evals i "
            "WHERE NOT EXISTS (SELECT 1 FROM task_results r WHERE r.run_label = i.run_label AND r.task_id = i.task_id) "
            "AND NOT EXISTS (SELECT 1 FROM search_evals s WHERE i.run_label = 'search:' || s.strategy_hash "
            f"AND s.task_id = i.task_id) {where} GROUP BY 1, 2 ORDER BY 1, 2", params)

    # --- strategy search -----------------------------------------------------------------------
    def get_search_eval(self, strategy_hash: str, task_id: str) -> dict | None:
        rows = self._dicts("SELECT * FROM search_evals WHERE strategy_hash = ? AND task_id = ?",
                           [strategy_hash, task_id])
        return rows[0] if rows else None

    def put_search_eval(self, strategy_hash: str, task_id: str, split: str, success: int, trace: dict) -> None:
        self.upsert("search_evals", {"strategy_hash": strategy_hash, "task_id": task_id, "split": split,
                                      "success": success, "trace": trace})

    def get_state(self, key: str) -> object | None:
        rows = self._dicts("SELECT value FROM search_state WHERE key = ?", [key])
        return json.loads(rows[0]["value"]) if rows else None

    def put_state(self, key: str, value: object) -> None:
        self.upsert("search_state", {"key": key, "value": json.dumps(value)})

    def record_metrics(self, run_label: str, values: dict[str, float | None]) -> None:
        with self.transaction():
            for name, value in values.items():
                self.upsert("metrics", {"run_label": run_label, "name": name, "value": value})
