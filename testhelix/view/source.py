"""Opening a run directory for a report, including a run that is still going.

A finished run's store opens read-only. A running process holds DuckDB's write lock; then the
snapshot it publishes after each step is read (testhelix/store/runstore.py), and before its first step the
database file and its write-ahead log are copied to a temporary folder and the copy is opened:
DuckDB replays only committed transactions from the log, so the report shows exactly what the run
had committed when the copy was taken. If even the copy cannot be opened, the report says that it
cannot be made yet (a clear error, exit code 2).
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from testhelix.core.errors import UserError
from testhelix.store.runstore import DB_NAME, RunStore


@dataclass(frozen=True)
class Opened:
    store: RunStore
    run_dir: Path
    live: str | None  # a sentence for the page when this is a snapshot of a run in progress


@contextmanager
def open_run(run_dir: Path) -> Iterator[Opened]:
    run_dir = Path(run_dir)
    db = run_dir / DB_NAME
    if not db.is_file():
        raise UserError(f"{run_dir}: no run store here (expected {DB_NAME}); nothing to show yet")
    try:
        store = RunStore(run_dir, read_only=True)
    except UserError as err:
        # held by a writer: its published snapshot opens as the store; before the writer's first
        # step there is none, and a copy of the committed database stands in for it
        if "in use by a running command" not in err.message:  # a damaged or foreign store is reported as such
            raise
        with tempfile.TemporaryDirectory(prefix="testhelix-view-") as tmp:
            store = _snapshot(run_dir, Path(tmp))
            taken = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
            try:
                yield Opened(store, run_dir, f"Another process is still writing this run. This page shows what "
                                             f"it had committed at {taken}; make it again for later results.")
            finally:
                store.close()
        return
    snap = store.snapshot
    live = None if not snap else (f"Another process is still writing this run. This page shows the snapshot it "
                                  f"published after step {snap['step']} ({snap['published_at']} UTC); make it "
                                  "again for later results.")
    try:
        yield Opened(store, run_dir, live)
    finally:
        store.close()


def _snapshot(run_dir: Path, tmp: Path) -> RunStore:
    for name in (DB_NAME, DB_NAME + ".wal"):
        src = run_dir / name
        if src.is_file():
            shutil.copy2(src, tmp / name)
    try:
        return RunStore(tmp, read_only=True)
    except UserError as err:
        raise UserError(f"{run_dir}: the run is in progress and its store cannot be read yet ({err}); "
                        "make the report again when the run has committed more or has stopped") from None

