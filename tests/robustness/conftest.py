import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
WORKER = HERE / "search_worker.py"
FROZEN_SCHEMA = HERE.parent / "fixtures" / "store_c33f305" / "schema.sql"


def worker(run_dir: Path, fault: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    args = [sys.executable, str(WORKER), "run", str(run_dir)] + ([fault] if fault else [])
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, cwd=HERE)


def dag_rows(run_dir: Path) -> list[dict]:
    """Every stored field of every node and edge except elapsed time and creation time."""
    from testhelix.store.runstore import RunStore

    store = RunStore(run_dir, read_only=True)
    try:
        cols, rows = store.query("SELECT * EXCLUDE (elapsed_s, created_at) FROM dag_nodes ORDER BY node_id")
        _, edges = store.query("SELECT parent_id, child_id FROM dag_edges ORDER BY child_id")
        _, evals = store.query("SELECT strategy_hash, task_id, split, success FROM search_evals ORDER BY ALL")
        _, state = store.query("SELECT key, value FROM search_state WHERE key = 'search'")
    finally:
        store.close()
    nodes = [{c: (json.loads(v) if isinstance(v, str) and v.startswith(("{", "[")) else v) for c, v in zip(cols, r)}
             for r in rows]
    for node in nodes:   # each optimizer session's own elapsed time is elapsed time too
        for line in (node.get("optimizer_usage") or {}).values():
            if isinstance(line, dict):
                line.pop("elapsed_s", None)
    return [{"nodes": nodes, "edges": edges, "evals": evals, "state": json.loads(state[0][1])}]


@pytest.fixture(scope="session")
def reference(tmp_path_factory) -> tuple[Path, list[dict]]:
    run = tmp_path_factory.mktemp("reference") / "run"
    done = worker(run)
    assert done.returncode == 0, done.stderr
    return run, dag_rows(run)


@pytest.fixture
def copy_of(tmp_path):
    def make(run: Path) -> Path:
        target = tmp_path / "copy"
        shutil.copytree(run, target)
        return target
    return make


def autosaddler(*args, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([str(Path(sys.executable).parent / "autosaddler"), *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env={**os.environ, "COLUMNS": "200"})


def frozen_migrations() -> list[tuple[str, str]]:
    """(name, sql) of every migration a store made at commit c33f305 applied, in order."""
    found: list[tuple[str, str]] = []
    for line in FROZEN_SCHEMA.read_text().splitlines():
        if line.startswith("-- migration: "):
            found.append((line.removeprefix("-- migration: "), ""))
        elif found:
            found[-1] = (found[-1][0], found[-1][1] + line + "\n")
    return found


def old_store(run_dir: Path, upto: str | None = None) -> None:
    """A store exactly as the code of c33f305 created it: every migration it knew (or those up to
    `upto`), recorded by name."""
    import duckdb

    run_dir.mkdir(exist_ok=True)
    conn = duckdb.connect(str(run_dir / "run.duckdb"))
    conn.execute("CREATE TABLE schema_meta (version INTEGER, name TEXT)")
    found = frozen_migrations()
    names = [name for name, _ in found]
    for version, (name, sql) in enumerate(found[:names.index(upto) + 1 if upto else None], 1):
        conn.execute(sql)
        conn.execute("INSERT INTO schema_meta VALUES (?, ?)", [version, name])
    conn.close()
