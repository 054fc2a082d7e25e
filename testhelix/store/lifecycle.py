"""The mechanics of a run store's life, used by `testhelix/store/runstore.py`.

- Creation: a new store is built and migrated under `.run.duckdb.creating-<pid>` and then linked to
  `run.duckdb`, so a kill at any moment leaves no store or a complete one; leftovers of dead
  builders are removed by the next creator.
- Kinds: which kinds of run a folder holds, so a command refuses a folder of another kind in one
  line. TestHelix knows its own (`testhelix run`, evaluate); AutoSaddler (search, gate) and GTDD
  register theirs with their tables (testhelix/store/migrations.py, `RunKind`).
- Acceptance before writing: a writer looks at an existing store read-only first (every table
  read through, so DuckDB verifies each block's checksum) and refuses a damaged, foreign, newer or
  other-kind store before it opens the file for writing, which would extend or rewrite it.
- Live snapshots: a writer copies its committed store to `run.snapshot.duckdb` (temporary file +
  rename); readers that find the store locked read that copy and say which step it is from.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import duckdb

from testhelix.core.errors import UserError, describe_store_error
from testhelix.core.forkrun import process_alive
from testhelix.store import migrations

OPEN_PATHS: set[str] = set()  # stores this process has open (an I/O error without a path names them)


def _value(conn: duckdb.DuckDBPyConnection, sql: str) -> object:
    """The value of a SELECT without FROM (EXISTS, current_database()): such a query yields one row."""
    row = conn.execute(sql).fetchone()
    assert row is not None, sql
    return row[0]


def first_line(err: Exception) -> str:
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__


def is_lock_conflict(err: Exception) -> bool:
    """DuckDB's refusal because another process holds the file (not any message with 'block' in it)."""
    text = str(err)
    return "Could not set lock" in text or "Conflicting lock" in text


def lock_holder(err: Exception) -> str:
    import re

    m = re.search(r"PID (\d+)", str(err))
    return f"process {m.group(1)}" if m else "another process"


def damaged(path: Path, err: Exception) -> UserError:
    """One line for a store file that DuckDB cannot read: truncated, overwritten, not a database
    (or one the machine keeps us from reading: permission denied, an I/O error, said as such)."""
    problem = describe_store_error(str(err), {str(path)})
    if problem is not None:
        return problem
    return UserError(f"{path}: the run store is damaged or not a DuckDB file ({first_line(err)[:200]}); it was "
                     "left as it is: restore it from a copy, or start a new --run")


def require_run_store(conn: duckdb.DuckDBPyConnection, path: Path) -> None:
    """Refuse a DuckDB file that is not a run store (tables, but no schema_meta) before touching
    it. A store of an old version has schema_meta, possibly empty, or no table at all (schema 0:
    what a kill during creation used to leave); neither is refused here."""
    tables = {r[0] for r in conn.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    if tables and "schema_meta" not in tables:
        shown = ", ".join(sorted(tables)[:5])
        raise UserError(f"{path}: a DuckDB file but not a run store (no schema_meta table; holds {shown}); "
                        "it was left as it is")


def in_use(path: Path, err: Exception) -> UserError:
    return UserError(f"{path}: in use by {lock_holder(err)}; wait for it to finish (or stop it), then run "
                     "the command again")


def connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.Error as err:
        if is_lock_conflict(err):
            raise in_use(path, err) from None
        raise damaged(path, err) from None


def accept_for_writing(path: Path, allowed: set[str] | None, command: str) -> None:
    """Refuse, from a read-only look, an existing store a writer must not open for writing: one that
    is damaged (every table is read through, so each block's checksum is verified), not a run
    store, made by a newer version, or (with `allowed`) holding another kind of run. Opening it for
    writing would migrate, extend or checkpoint the file and so destroy the evidence."""
    try:
        conn = duckdb.connect(str(path), read_only=True)
    except duckdb.Error as err:
        if is_lock_conflict(err):
            raise in_use(path, err) from None
        if "different configuration" in str(err):
            return  # this process already has it open for writing: it was accepted then
        raise damaged(path, err) from None
    try:
        require_run_store(conn, path)
        newer = migrations.unknown(conn)
        if newer:
            raise UserError(f"{path}: made by a newer version (unknown migration {newer[0]}); it was left as it "
                            "is: use that version, or start a new --run")
        if allowed is not None:
            refuse_other_kinds(path.parent, run_kinds(conn), allowed, command)
        _require_every_block(conn, path)
        tables = conn.execute("SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
                              ).fetchall()
        for (table,) in tables:
            quoted = '"' + str(table).replace('"', '""') + '"'
            conn.execute(f"SELECT max(hash(t)) FROM {quoted} AS t").fetchone()  # reads every column's blocks
    except duckdb.Error as err:
        raise damaged(path, err) from None
    finally:
        conn.close()


DUCKDB_HEADERS_BYTES = 3 * 4096  # a DuckDB file starts with three 4 KiB headers, then its blocks


def _require_every_block(conn: duckdb.DuckDBPyConnection, path: Path) -> None:
    """A file too short to hold the blocks in use was truncated (its last blocks may be ones no table
    read touches, but a writer would read them). DuckDB itself trims free blocks off the end of a file
    at a checkpoint while its header still counts them, so only the used blocks give a lower bound.
    With a write-ahead log beside it the blocks the log adds are not in the file yet, so it is not
    judged by its size."""
    if path.with_name(path.name + ".wal").exists():
        return
    row = conn.execute("SELECT block_size, used_blocks FROM pragma_database_size()").fetchone()
    if row is None:
        return
    expected = DUCKDB_HEADERS_BYTES + int(row[0]) * int(row[1])
    size = path.stat().st_size
    if size < expected:
        raise UserError(f"{path}: the run store is damaged: {size} bytes, but it has {row[1]} blocks in use "
                        f"({expected} bytes), so it was cut short; it was left as it is: restore it from a copy, "
                        "or start a new --run")


# --- creation ---------------------------------------------------------------------------------
def create_atomically(path: Path, build: Callable[[Path], None]) -> None:
    """`build(tmp)` makes a complete store at a temporary name, which is then linked into place
    (never replacing a store another process created meanwhile)."""
    for stale in path.parent.glob(f".{path.name}.creating-*"):
        pid = stale.name.rsplit("-", 1)[-1].split(".")[0]
        if pid.isdigit() and not process_alive(int(pid)):
            stale.unlink(missing_ok=True)
    tmp = path.with_name(f".{path.name}.creating-{os.getpid()}")
    tmp.unlink(missing_ok=True)
    try:
        build(tmp)
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
    finally:
        tmp.unlink(missing_ok=True)
        tmp.with_name(tmp.name + ".wal").unlink(missing_ok=True)


# --- kinds ------------------------------------------------------------------------------------
def run_kinds(conn: duckdb.DuckDBPyConnection) -> set[str]:
    found = set()
    for kind in migrations.run_kinds().values():
        try:
            if _value(conn, f"SELECT EXISTS ({kind.query})"):
                found.add(kind.name)
        except duckdb.CatalogException:
            continue
    return found


def describe_kind(kind: str) -> str:
    known = migrations.run_kinds().get(kind)
    return known.description if known else f"a run of kind {kind!r}"


def require_kind(run_dir: Path, kinds: set[str], kind: str, command: str) -> None:
    if kind in kinds:
        return
    held = ", ".join(describe_kind(k) for k in sorted(kinds)) or "nothing yet (an empty store)"
    readers = sorted({known.reader for k in kinds if (known := migrations.run_kinds().get(k)) and known.reader})
    hint = f"; read it with {' or '.join(f'`{r} {run_dir}`' for r in readers)}" if readers else ""
    raise UserError(f"{run_dir}: `{command}` needs {describe_kind(kind)}, but this run folder holds {held}{hint}")


def refuse_other_kinds(run_dir: Path, kinds: set[str], allowed: set[str], command: str) -> None:
    other = sorted(kinds - set(allowed))
    if other:
        raise UserError(f"{run_dir}: holds {describe_kind(other[0])}; `{command}` writes into its own kind of run "
                        "folder only (use a new --run)")


# --- live snapshots ---------------------------------------------------------------------------
def publish_snapshot(conn: duckdb.DuckDBPyConnection, final: Path, step: str) -> None:
    """Copy the database of `conn` (no transaction open) to `final` via a temporary file."""
    tmp = final.with_name(f".snapshot-{os.getpid()}.duckdb")
    for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
        leftover.unlink(missing_ok=True)
    db = _value(conn, "SELECT current_database()")
    try:
        conn.execute(f"ATTACH '{tmp}' AS th_snapshot")
        try:
            conn.execute(f'COPY FROM DATABASE "{db}" TO th_snapshot')
            conn.execute("CREATE TABLE th_snapshot.snapshot_meta (step TEXT, published_at TIMESTAMP)")
            conn.execute("INSERT INTO th_snapshot.snapshot_meta VALUES (?, now()::TIMESTAMP)", [step])
        finally:
            conn.execute("DETACH DATABASE IF EXISTS th_snapshot")
        os.replace(tmp, final)
    except (duckdb.Error, OSError) as err:
        for leftover in (tmp, tmp.with_name(tmp.name + ".wal")):
            leftover.unlink(missing_ok=True)  # never a partial snapshot
        problem = describe_store_error(str(err), {str(tmp)}) if isinstance(err, duckdb.Error) else None
        if problem is not None:
            raise problem from None
        raise


def open_snapshot(snap: Path, store_path: Path) -> tuple[duckdb.DuckDBPyConnection, dict]:
    if not snap.is_file():
        raise UserError(f"{store_path}: in use by a running command that has not published a snapshot yet "
                        "(try again after its first step)")
    conn = connect(snap, read_only=True)
    row = conn.execute("SELECT step, published_at FROM snapshot_meta").fetchone()
    if row is None:  # publish_snapshot always writes the row: this file was damaged or made by hand
        conn.close()
        raise UserError(f"{snap}: the snapshot does not say which step it is from (snapshot_meta is empty); "
                        f"{store_path} is in use by a running command, try again after its next step")
    return conn, {"step": row[0], "published_at": str(row[1])[:19]}
