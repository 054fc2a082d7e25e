"""A store made before AutoSaddler's tables left testhelix/migrations.py opens with the current code
without error or loss, and ends with the same tables, columns, views and accounting as a new store.

The earlier schema is a frozen copy of the migrations as commit c33f305 applied them
(tests/fixtures/store_c33f305/schema.sql, read by conftest.old_store), so the test needs no git
history."""

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import duckdb
import pytest

from autosaddler.store import get_search_eval, put_search_eval
from testhelix.core.errors import UserError
from testhelix.store import migrations
from testhelix.store.runstore import RunStore

from .conftest import old_store

T = TypeVar("T")
HASH = "ab" * 32   # a strategy's content hash: its calls are labelled search/<first 12>
WRITTEN = ("runs", "model_calls", "task_results", "search_evals", "incomplete_evals", "dag_nodes", "dag_edges",
           "search_state", "gate_results", "spent_splits", "optimizer_sessions", "gtdd_config")


def write_rows(conn: duckdb.DuckDBPyConnection) -> None:
    """Rows of every kind the accounting tells apart: a finished attempt; an abandoned one whose task
    result, search evaluation or nothing was recorded; evaluations the provider prevented, two of
    them finished later (one a search evaluation)."""
    conn.execute("INSERT INTO attempts (attempt_id, pid, command, status, last_call_id) VALUES "
                 "('done', 1, 'testhelix run', 'finished', NULL), ('killed', 2, 'autosaddler search', 'abandoned', 1)")
    conn.execute("INSERT INTO runs (run_label, kind, config) VALUES ('sim:strong/C', 'helix', '{}')")
    calls = [("sim:strong/C", "t1", "done"), ("sim:strong/C", "t2", "killed"), ("sim:strong/C", "t3", "killed"),
             (f"search/{HASH[:12]}", "t4", "killed"), (f"search/{HASH[:12]}", "t5", "killed"), ("optimizer", None, None)]
    for label, task, attempt in calls:
        conn.execute("INSERT INTO model_calls (run_label, task_id, role, model, input_tokens, output_tokens, simulated, "
                     "attempt_id, retries, charged_tokens) VALUES (?, ?, 'generation', 'sim:strong', 10, 2, TRUE, ?, "
                     "0, 12)", [label, task, attempt])
    conn.execute("INSERT INTO task_results (run_label, task_id, F, A, R, S, attempt_id) VALUES "
                 "('sim:strong/C', 't1', 1, 0.5, 0.5, 1, 'done'), ('sim:strong/C', 't2', 0, 0.0, 0.0, 0, 'killed')")
    conn.execute("INSERT INTO search_evals (strategy_hash, task_id, split, success, trace, attempt_id) VALUES "
                 "(?, 't4', 'dev', 1, '{\"steps\": 3}', 'killed')", [HASH])
    conn.execute("INSERT INTO incomplete_evals (run_label, task_id, cause, error, tokens, calls) VALUES "
                 "('sim:strong/C', 't2', 'rate-limit', 'x', 0, 0), ('sim:strong/C', 't3', 'outage', 'y', 0, 0), "
                 f"('search:{HASH}', 't4', 'outage', 'z', 0, 0), ('search:{HASH}', 't5', 'outage', 'w', 0, 0)")
    conn.execute("INSERT INTO dag_nodes (node_id, iteration, strategy_hash, status) VALUES ('n000', 0, ?, 'root')", [HASH])
    conn.execute("INSERT INTO dag_edges VALUES ('n000', 'n001')")
    conn.execute("INSERT INTO search_state VALUES ('meta', '{\"pack\": \"katas\"}'), ('helix-run', '{\"seed\": 1}')")
    conn.execute("INSERT INTO gate_results (gate_id, challenger_hash, n, promoted) VALUES ('g1', ?, 8, TRUE)", [HASH])
    conn.execute("INSERT INTO spent_splits VALUES ('katas', 'test', 'g1')")
    conn.execute("INSERT INTO optimizer_sessions (node_id, session, calls) VALUES ('n001', 'reflection', 2)")
    conn.execute("INSERT INTO gtdd_config VALUES ('settings', '{\"rounds\": 3}')")


def shape(conn: duckdb.DuckDBPyConnection) -> dict[str, list[Any]]:
    """Every table's and view's columns in order with their types, the views, the sequences."""
    cols = conn.execute("SELECT table_name, ordinal_position, column_name, data_type FROM information_schema.columns "
                        "WHERE table_name <> 'schema_meta' ORDER BY ALL").fetchall()
    views = conn.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal ORDER BY 1").fetchall()
    seqs = conn.execute("SELECT sequence_name FROM duckdb_sequences() ORDER BY 1").fetchall()
    return {"columns": cols, "views": views, "sequences": seqs}


def contents(conn: duckdb.DuckDBPyConnection) -> dict[str, list[Any]]:
    """The rows written above (creation times aside) and the accounting view's values."""
    out: dict[str, list[Any]] = {t: conn.execute(f"SELECT * EXCLUDE (created_at) FROM {t} ORDER BY ALL").fetchall()
                              if "created_at" in {c for (c,) in conn.execute(
                                  "SELECT column_name FROM information_schema.columns WHERE table_name = ?", [t]
                              ).fetchall()} else conn.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall()
                              for t in WRITTEN}
    out["accounting"] = conn.execute("SELECT id, run_label, task_id, attempt_status, attributed "
                                     "FROM model_call_accounting ORDER BY id"
                                     ).fetchall()
    out["attempts"] = conn.execute("SELECT attempt_id, status FROM attempts WHERE attempt_id IN ('done', 'killed') "
                                   "ORDER BY 1").fetchall()
    return out


def read(run_dir: Path, what: Callable[[duckdb.DuckDBPyConnection], T]) -> T:
    conn = duckdb.connect(str(run_dir / "run.duckdb"), read_only=True)
    try:
        return what(conn)
    finally:
        conn.close()


def test_a_store_of_the_earlier_schema_opens_and_ends_like_a_new_one(tmp_path):
    old, new = tmp_path / "old", tmp_path / "new"
    old_store(old)
    conn = duckdb.connect(str(old / "run.duckdb"))
    write_rows(conn)
    before = contents(conn)
    conn.close()
    # the accounting as the earlier code computed it (its own view, its own query of search_evals)
    assert [(t, a) for _, _, t, _, a in before["accounting"]] == [
        ("t1", True), ("t2", True), ("t3", False), ("t4", True), ("t5", False), (None, True)]

    reader = RunStore(old, read_only=True)   # a reader migrates a private copy, never the store
    assert {"helix", "search", "gate", "gtdd"} <= reader.kinds()
    unresolved_read = [(p.run_label, p.task_id) for p in reader.unresolved_incomplete()]
    reader.close()
    assert "autosaddler:search-tables" not in {n for (n,) in read(old, lambda c: c.execute(
        "SELECT name FROM schema_meta").fetchall())}

    RunStore(old, command="testhelix report").close()   # a writer migrates the store itself
    created = RunStore(new, command="testhelix run")
    write_rows(created.conn)
    created.close()

    assert read(old, shape) == read(new, shape)
    after = read(old, contents)
    assert after == before == read(new, contents)
    assert unresolved_read == [(f"search:{HASH}", "t5"), ("sim:strong/C", "t3")]
    for run_dir in (old, new):
        store = RunStore(run_dir, read_only=True)
        assert [(p.run_label, p.task_id) for p in store.unresolved_incomplete()] == unresolved_read
        assert migrations.unknown(store.conn) == [] and store.kinds() == {"helix", "search", "gate", "gtdd"}
        store.close()
    names_old = {n for (n,) in read(old, lambda c: c.execute("SELECT name FROM schema_meta").fetchall())}
    assert {m.name for m in migrations.registered()} <= names_old


def test_a_real_v1_store_with_data_is_upgraded(tmp_path):
    """A store made by schema version 1 (only the first migration), holding results, a DAG and a
    gate, opens with every later migration applied and all of its rows intact."""
    old_store(tmp_path, upto="1")
    conn = duckdb.connect(str(tmp_path / "run.duckdb"))
    conn.execute("INSERT INTO task_results (run_label, task_id, submitted, F, A, R, S, detail) "
                 "VALUES ('sim:strong/C', 't1', true, 1, 0.75, NULL, 0, '{\"submission\": \"merged\"}')")
    conn.execute("INSERT INTO model_calls (run_label, task_id, role, input_tokens, output_tokens, cost_usd) "
                 "VALUES ('sim:strong/C', 't1', 'review', 120, 30, NULL)")
    conn.execute("INSERT INTO dag_nodes (node_id, iteration, strategy_hash, status, dev_score) "
                 "VALUES ('n000', 0, 'abc', 'root', 0.5)")
    conn.execute("INSERT INTO gate_results (gate_id, split, n, wins, losses, promoted) "
                 "VALUES ('gate-1', 'release', 100, 12, 2, true)")
    conn.close()
    s = RunStore(tmp_path)
    assert s.schema_version() == migrations.latest_version() > 1
    assert [v for (v,) in s.query("SELECT version FROM schema_meta ORDER BY version")[1]] == list(
        range(1, migrations.latest_version() + 1))
    row = s.task_results("sim:strong/C")[0]
    assert (row["F"], row["A"], row["R"], row["S"]) == (1, 0.75, None, 0)
    assert s.model_calls()[0]["input_tokens"] == 120 and s.model_calls()[0]["cost_usd"] is None
    assert s.query("SELECT node_id, dev_score FROM dag_nodes")[1] == [("n000", 0.5)]
    assert s.query("SELECT wins, losses, promoted FROM gate_results")[1] == [(12, 2, True)]
    # the later migrations' tables exist and take rows
    put_search_eval(s, "abc", "t1", "proposal", 1, {"exit": "submitted"})
    assert (get_search_eval(s, "abc", "t1") or {})["success"] == 1
    s.upsert("spent_splits", {"pack": "katas", "split": "release", "gate_id": "gate-1"})
    s.close()
    again = RunStore(tmp_path)                                            # reopening migrates nothing twice
    assert again.schema_version() == migrations.latest_version() and len(again.task_results()) == 1
    again.close()


def test_a_new_store_keeps_autosaddler_tables_out_of_testhelix_migrations(tmp_path):
    core = duckdb.connect(str(tmp_path / "core.duckdb"))
    for m in migrations.MIGRATIONS:
        core.execute(m.sql)
    tables = {t for (t,) in core.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    core.close()
    assert not tables & {"dag_nodes", "dag_edges", "search_evals", "spent_splits", "optimizer_sessions", "gtdd_config"}
    # search_state and the release ledger (gate_results) are TestHelix's (testhelix/store/migrations.py)
    assert {"search_state", "gate_results", "model_calls", "model_call_accounting", "finished_evaluations"} <= tables


def test_a_testhelix_command_refuses_a_search_folder_in_one_line(tmp_path):
    """The process loads AutoSaddler's run kinds through the entry point, without importing it first."""
    old_store(tmp_path / "search")
    conn = duckdb.connect(str(tmp_path / "search" / "run.duckdb"))
    conn.execute("INSERT INTO search_state VALUES ('meta', '{}')")
    conn.close()
    done = subprocess.run([sys.executable, "-c", "from testhelix.commands.cli import main; main()",
                           "report", str(tmp_path / "search")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "needs a `testhelix run`, but this run folder holds a strategy search" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


def test_a_schema_entry_point_that_does_not_load_is_one_line(monkeypatch):
    from importlib.metadata import EntryPoint

    broken = EntryPoint("broken", "no_such_package.schema:SCHEMA", "testhelix.store_schemas")
    monkeypatch.setattr(migrations, "_loaded", False)
    monkeypatch.setattr("testhelix.core.plugins.group_entry_points", lambda group: [broken])
    with pytest.raises(UserError, match=r"testhelix.store_schemas entry point broken = 'no_such_package"):
        migrations.load_schemas()
