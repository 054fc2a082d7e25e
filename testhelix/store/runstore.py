"""The run store: one DuckDB file per run directory (`<run_dir>/run.duckdb`).

The schema is a list of named migrations, each owned by the package whose tables it creates
(testhelix/store/migrations.py); a store opened on an older file applies the missing ones in order, one
transaction each, so a run directory made by an older version keeps working and nothing stored is
lost.

Lifecycle (mechanics in testhelix/store/lifecycle.py): a new store is built and migrated under a
temporary name and only then linked to `run.duckdb`, so a kill during creation never leaves a store that no
command can open. Each writing process is an *attempt* (a row in `attempts`); the model calls and
results it records carry its id, and attempts that died without closing are marked `abandoned`
when the next writer opens the store. After each step a writer may publish a consistent snapshot
(`run.snapshot.duckdb`) that readers use while the writer holds the store's lock.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

from testhelix.core.errors import UserError
from testhelix.store import lifecycle, migrations

DB_NAME = "run.duckdb"

SNAPSHOT_NAME = "run.snapshot.duckdb"
SNAPSHOT_EVERY_S = 5.0  # the least time between two snapshots published after finished tasks
_ROWS_PER_INSERT = 200   # ledger rows per multi-row INSERT (bounds one statement's parameters)


def _attempt_id() -> str:
    return f"{os.getpid()}-{uuid.uuid4().hex[:12]}"


@dataclass(frozen=True)
class PendingEvaluation:
    """An evaluation the provider prevented and that has not finished since (incomplete_evals):
    its latest cause and error, and how many attempts it took. Never a score."""

    run_label: str
    task_id: str
    cause: str
    error: str
    attempts: int


class RunStore:
    """A run directory's database. Thread-safe for the writes a run makes (one lock)."""

    def __init__(self, run_dir: Path, read_only: bool = False, command: str = "", allowed: set[str] | None = None):
        """`allowed`: for a writer, the kinds of run it may write into; an existing store holding
        another kind is refused from a read-only look, before it is opened for writing (which
        would migrate it and so add this package's tables to it)."""
        self.run_dir = Path(run_dir)
        self.path = self.run_dir / DB_NAME
        self.read_only = read_only
        self.snapshot: dict | None = None      # set when reading a live run's published snapshot
        self.attempt_id: str | None = None
        self._lock = threading.RLock()
        self._depth = 0
        self._last_publish = 0.0
        self._publish_cost = 0.0
        _require_utf8_path(self.run_dir)
        if self.run_dir.exists() and not self.run_dir.is_dir():
            raise UserError(f"{self.run_dir}: is a file, not a run folder")
        if self.path.exists() and not self.path.is_file():
            raise UserError(f"{self.path}: is not a file (a run store is one DuckDB file)")
        lifecycle.OPEN_PATHS.add(str(self.path))  # an error without a path (DuckDB's I/O errors) names this store
        if read_only:
            if not self.path.exists():
                raise UserError(f"{self.run_dir}: no run store here (expected {DB_NAME})")
            self.conn = self._open_for_reading()
        else:
            if self.path.is_file():  # a damaged, foreign, newer or other-kind store is refused untouched
                lifecycle.accept_for_writing(self.path, allowed, command)
            self.run_dir.mkdir(parents=True, exist_ok=True)
            if not self.path.exists():
                lifecycle.create_atomically(self.path, _build_store)
            self.conn = lifecycle.connect(self.path, read_only=False)
            self._migrate()
            self._begin_attempt(command)
        lifecycle.OPEN_PATHS.add(str(self.path))

    def _open_for_reading(self) -> duckdb.DuckDBPyConnection:
        """A reader never writes the store: not to migrate it, not to add another package's
        tables. A store that lacks migrations (an older version, or tables another package owns)
        is read from a migrated private copy; a file that is not a run store, or is damaged, is
        refused naming what is wrong."""
        try:
            conn = duckdb.connect(str(self.path), read_only=True)
        except duckdb.Error as err:
            if lifecycle.is_lock_conflict(err):
                return self._open_snapshot()
            raise lifecycle.damaged(self.path, err) from None
        try:
            lifecycle.require_run_store(conn, self.path)
            unknown, pending = migrations.unknown(conn), migrations.pending(conn)
        except duckdb.Error as err:
            conn.close()
            raise lifecycle.damaged(self.path, err) from None
        except UserError:
            conn.close()
            raise
        self.conn = conn
        if unknown:
            conn.close()
            raise UserError(f"{self.path}: made by a newer version (schema {self.schema_version()}; unknown "
                            f"migration {unknown[0]}); read it with that version")
        if pending:
            conn.close()
            conn = self._migrated_copy()
        return conn

    def _migrated_copy(self) -> duckdb.DuckDBPyConnection:
        """Read-only connection to a private copy of the store with every migration applied."""
        import shutil
        import tempfile

        self._copy_dir = Path(tempfile.mkdtemp(prefix="testhelix-read-"))
        copy = self._copy_dir / DB_NAME
        try:
            for name in (DB_NAME, DB_NAME + ".wal"):
                if (self.run_dir / name).is_file():
                    shutil.copyfile(self.run_dir / name, self._copy_dir / name)
            writer = RunStore.__new__(RunStore)
            writer.path, writer._lock, writer._depth = copy, threading.RLock(), 0
            writer.conn = duckdb.connect(str(copy))
            try:
                writer._migrate()
            finally:
                writer.conn.close()
            return duckdb.connect(str(copy), read_only=True)
        except duckdb.Error as err:
            shutil.rmtree(self._copy_dir, ignore_errors=True)
            raise lifecycle.damaged(self.path, err) from None
        except OSError as err:
            shutil.rmtree(self._copy_dir, ignore_errors=True)
            raise UserError(f"{self.path}: an older store is read from a migrated copy, which could not be made in "
                            f"{self._copy_dir.parent} ({err.strerror}); free space there or set TMPDIR") from None

    def _open_snapshot(self) -> duckdb.DuckDBPyConnection:
        """The writer holds the lock: read the snapshot it published after its last step."""
        conn, self.snapshot = lifecycle.open_snapshot(self.run_dir / SNAPSHOT_NAME, self.path)
        print(f"note: {self.run_dir} is being written; reading the snapshot after step {self.snapshot['step']} "
              f"(published {self.snapshot['published_at']} UTC)", file=sys.stderr)
        return conn

    # --- schema -------------------------------------------------------------------------
    def schema_version(self) -> int:
        try:
            row = self.conn.execute("SELECT max(version) FROM schema_meta").fetchone()
        except duckdb.CatalogException:
            return 0
        return int(row[0] or 0) if row else 0

    def _migrate(self) -> None:
        def newer(name: str) -> UserError:
            return UserError(f"{self.path}: made by a newer version (schema {self.schema_version()} > "
                             f"{migrations.latest_version()}; unknown migration {name})")

        migrations.migrate(self.conn, self.transaction, newer)

    # --- attempts -------------------------------------------------------------------------
    def _begin_attempt(self, command: str) -> None:
        """Mark attempts that never closed as abandoned (the file lock proves their process is gone)
        and register this process as the running attempt."""
        self.attempt_id = _attempt_id()
        with self.transaction():
            self.conn.execute("UPDATE attempts SET status = 'abandoned', ended_at = now() WHERE status = 'running'")
            self.conn.execute("INSERT INTO attempts (attempt_id, pid, command, status) VALUES (?, ?, ?, 'running')",
                              [self.attempt_id, os.getpid(), command or " ".join(sys.argv[:2])[-200:]])

    def checkpoint(self) -> None:
        """Every model call of this attempt so far served committed work (call inside the step's
        transaction)."""
        if self.attempt_id:
            self.conn.execute("UPDATE attempts SET last_call_id = (SELECT max(id) FROM model_calls "
                              "WHERE attempt_id = ?) WHERE attempt_id = ?", [self.attempt_id, self.attempt_id])

    # --- run kinds and live snapshots (testhelix/store/lifecycle.py) -------------------------------
    def kinds(self) -> set[str]:
        """What this folder holds: 'helix', 'evaluate' and the kinds installed packages register
        ('search', 'gate', 'gtdd'), in any combination."""
        with self._lock:
            return lifecycle.run_kinds(self.conn)

    def require_kind(self, kind: str, command: str) -> None:
        """Refuse a folder that holds another kind of run, in one line."""
        lifecycle.require_kind(self.run_dir, self.kinds(), kind, command)

    def refuse_other_kinds(self, allowed: set[str], command: str) -> None:
        """A writing command refuses a folder that already holds another kind of run."""
        lifecycle.refuse_other_kinds(self.run_dir, self.kinds(), allowed, command)

    def publish_snapshot(self, step: str, min_interval_s: float = 0.0) -> None:
        """Copy the committed store to `run.snapshot.duckdb` (temporary file + rename) so readers can
        inspect a live run; `min_interval_s` throttles callers that publish after every task, and
        such a caller also waits ten times the last copy's duration (a large store never spends
        most of its time copying itself)."""
        wait = max(min_interval_s, 10 * self._publish_cost) if min_interval_s else 0.0
        if self.read_only or (wait and time.monotonic() - self._last_publish < wait):
            return
        began = time.monotonic()
        with self._lock:
            if self._depth:
                return  # never inside an open transaction: a snapshot shows committed steps only
            lifecycle.publish_snapshot(self.conn, self.run_dir / SNAPSHOT_NAME, step)
        self._last_publish = time.monotonic()
        self._publish_cost = self._last_publish - began

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

    def close(self, finished: bool | None = None) -> None:
        """Close; a writer's attempt is marked finished unless an exception is on its way out (a
        full disk, an interrupt) or the process died: then the next writer marks it abandoned."""
        if finished is None:
            finished = sys.exc_info()[1] is None
        if self.attempt_id and finished:
            try:
                self.conn.execute("UPDATE attempts SET status = 'finished', ended_at = now() WHERE attempt_id = ?",
                                  [self.attempt_id])
            except duckdb.Error:
                pass  # the next writer marks it abandoned; nothing else depends on it
        self.conn.close()
        lifecycle.OPEN_PATHS.discard(str(self.path))
        if getattr(self, "_copy_dir", None) is not None:
            import shutil

            shutil.rmtree(self._copy_dir, ignore_errors=True)
        if self.attempt_id:
            (self.run_dir / SNAPSHOT_NAME).unlink(missing_ok=True)  # the store itself is readable again

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

    def lock_down(self) -> None:
        """For a reader running someone's query (`testhelix sql`): no file system access from SQL
        (read_csv, COPY ... TO, ATTACH), settings locked."""
        with self._lock:
            self.conn.execute("SET enable_external_access = false")
            self.conn.execute("SET lock_configuration = true")

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
        if self.attempt_id and "attempt_id" not in row:
            row = {**row, "attempt_id": self.attempt_id}
        cols = list(row)
        with self._lock:
            self.conn.execute(f"INSERT INTO model_calls ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})",
                              list(row.values()))

    def record_model_calls(self, rows: Sequence[dict]) -> None:
        """Many ledger rows in few statements (one multi-row INSERT per column set and chunk): a
        single-row INSERT costs DuckDB about 10 ms of wall time under the lock, a row of a
        multi-row INSERT well under 1 ms. The runner buffers one task's rows and writes them here
        when the task ends (testhelix/helix/runner.py `TaskLedger`)."""
        groups: dict[tuple[str, ...], list[list[Any]]] = {}
        for row in rows:
            if self.attempt_id and "attempt_id" not in row:
                row = {**row, "attempt_id": self.attempt_id}
            groups.setdefault(tuple(row), []).append(list(row.values()))
        with self._lock:
            for cols, values in groups.items():
                marks = "(" + ", ".join("?" for _ in cols) + ")"
                for at in range(0, len(values), _ROWS_PER_INSERT):
                    chunk = values[at: at + _ROWS_PER_INSERT]
                    self.conn.execute(f"INSERT INTO model_calls ({', '.join(cols)}) VALUES "
                                      + ", ".join([marks] * len(chunk)), [v for row in chunk for v in row])

    def model_calls(self, run_label: str | None = None) -> list[dict]:
        where, params = ("WHERE run_label = ?", [run_label]) if run_label else ("", [])
        return self._dicts(f"SELECT * FROM model_calls {where} ORDER BY id", params)

    def served_by_simulation(self) -> dict[str, str]:
        """{run label: model name} of calls a simulated model answered although the model's name is a
        real provider's (a run through `testhelix serve`); the ledger's `simulated` column says so."""
        from testhelix.llm.registry import is_simulated

        _, rows = self.query("SELECT DISTINCT run_label, model FROM model_calls WHERE simulated ORDER BY 1, 2")
        return {str(label): str(model) for label, model in rows if not is_simulated(str(model))}

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
        self.upsert("task_results", {**row, "attempt_id": self.attempt_id} if self.attempt_id else row)
        # readers of a live `testhelix run` see finished tasks (throttled: a copy per few seconds)
        self.publish_snapshot(f"task {row.get('run_label')}/{row.get('task_id')}", min_interval_s=SNAPSHOT_EVERY_S)

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

    def unresolved_incomplete(self, run_label: str | None = None) -> list[PendingEvaluation]:
        """The latest incomplete record of every evaluation that has not finished since (in any
        package's table: the view finished_evaluations, testhelix/store/migrations.py)."""
        where, params = ("AND i.run_label = ?", [run_label]) if run_label else ("", [])
        return [PendingEvaluation(**row) for row in self._dicts(
            "SELECT i.run_label, i.task_id, arg_max(i.cause, i.created_at) AS cause, "
            "arg_max(i.error, i.created_at) AS error, count(*) AS attempts FROM incomplete_evals i "
            "WHERE NOT EXISTS (SELECT 1 FROM finished_evaluations f WHERE f.run_label = i.run_label "
            f"AND f.task_id = i.task_id) {where} GROUP BY 1, 2 ORDER BY 1, 2", params)]

    # --- key-value state (TestHelix runs and AutoSaddler searches) ------------------------------
    def get_state(self, key: str) -> object | None:
        rows = self._dicts("SELECT value FROM search_state WHERE key = ?", [key])
        return json.loads(rows[0]["value"]) if rows else None

    def put_state(self, key: str, value: object) -> None:
        self.upsert("search_state", {"key": key, "value": json.dumps(value)})

    def record_metrics(self, run_label: str, values: dict[str, float | None]) -> None:
        with self.transaction():
            for name, value in values.items():
                self.upsert("metrics", {"run_label": run_label, "name": name, "value": value})


def _require_utf8_path(run_dir: Path) -> None:
    try:
        str(run_dir / DB_NAME).encode("utf-8")
    except UnicodeEncodeError:  # DuckDB cannot open such a path (std::bad_cast)
        raise UserError(f"{os.fsencode(run_dir)!r}: the run folder's path is not UTF-8; use a folder whose "
                        "name is UTF-8 text") from None


def check_run_folder(run_dir: Path, allowed: set[str], command: str) -> None:
    """Before any work: refuse an existing run folder whose store a writer must not open (damaged,
    foreign, newer, or holding another kind of run), read-only."""
    _require_utf8_path(Path(run_dir))
    if (Path(run_dir) / DB_NAME).is_file():
        lifecycle.accept_for_writing(Path(run_dir) / DB_NAME, allowed, command)


def _build_store(path: Path) -> None:
    """Create and fully migrate a store file at `path` (a temporary name; see lifecycle)."""
    builder = RunStore.__new__(RunStore)
    builder.path, builder._lock, builder._depth = path, threading.RLock(), 0
    builder.conn = lifecycle.connect(path, read_only=False)
    try:
        builder._migrate()
    finally:
        builder.conn.close()
