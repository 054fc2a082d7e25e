"""Store lifecycle in process: schema-0 files, creation leftovers, named migrations, attempts and
the spent / attributed accounting of a killed `testhelix run`-like writer."""

import duckdb
import pytest

from testhelix.core.errors import UserError
from testhelix.store import lifecycle, migrations
from testhelix.store.runstore import RunStore

from .conftest import frozen_migrations


def call(store, task):
    store.record_model_call({"run_label": "sim:strong/C", "task_id": task, "role": "generation",
                             "input_tokens": 10, "output_tokens": 1, "simulated": True})


def test_a_schema_zero_file_is_migrated_on_open(tmp_path):
    duckdb.connect(str(tmp_path / "run.duckdb")).close()  # what a kill during creation used to leave
    reader = RunStore(tmp_path, read_only=True)
    assert reader.schema_version() == migrations.latest_version() and reader.kinds() == set()
    assert reader.get_state("search") is None
    reader.close()


def test_creation_leftovers_of_dead_processes_are_removed(tmp_path):
    leftover = tmp_path / ".run.duckdb.creating-999999999"
    leftover.write_bytes(b"half")
    RunStore(tmp_path).close()
    assert not leftover.exists() and (tmp_path / "run.duckdb").is_file()


def test_migrations_are_tracked_by_name(tmp_path):
    RunStore(tmp_path).close()
    conn = duckdb.connect(str(tmp_path / "run.duckdb"))
    names = [r[0] for r in conn.execute("SELECT name FROM schema_meta ORDER BY version").fetchall()]
    assert names[:3] == ["1", "attempts-and-accounting", "provider-failures"]  # later ones append their names
    conn.execute("INSERT INTO schema_meta VALUES (99, 'from-a-newer-branch')")
    conn.close()
    with pytest.raises(UserError, match="newer version"):
        RunStore(tmp_path)


def test_a_legacy_store_gets_the_named_migrations(tmp_path):
    conn = duckdb.connect(str(tmp_path / "run.duckdb"))
    conn.execute("CREATE TABLE schema_meta (version INTEGER)")
    for i, (_, sql) in enumerate(frozen_migrations()[:2]):   # "1" and "2" as stores recorded them then
        conn.execute(sql)
        conn.execute("INSERT INTO schema_meta VALUES (?)", [i + 1])
    conn.execute("INSERT INTO model_calls (run_label, task_id) VALUES ('old', 't')")
    conn.close()
    s = RunStore(tmp_path)
    assert s.query("SELECT attributed FROM model_call_accounting WHERE run_label = 'old'")[1] == [(True,)]
    s.close()


def test_abandoned_attempt_calls_are_spent_but_not_attributed(tmp_path):
    first = RunStore(tmp_path, command="testhelix run")
    call(first, "t1")
    first.record_task_result({"run_label": "sim:strong/C", "task_id": "t1", "F": 1})
    call(first, "t2")  # killed before t2's result
    first.close(finished=False)
    second = RunStore(tmp_path, command="testhelix run")
    call(second, "t2")
    second.record_task_result({"run_label": "sim:strong/C", "task_id": "t2", "F": 0})
    second.close()
    s = RunStore(tmp_path, read_only=True)
    _, rows = s.query("SELECT task_id, attempt_status, attributed FROM model_call_accounting ORDER BY id")
    _, attempts = s.query("SELECT status FROM attempts ORDER BY started_at, attempt_id")
    s.close()
    assert rows == [("t1", "abandoned", True), ("t2", "abandoned", False), ("t2", "finished", True)]
    assert sorted(a for (a,) in attempts) == ["abandoned", "finished"]


def test_run_kinds(tmp_path):
    s = RunStore(tmp_path)
    s.record_run("sim:strong/A", "helix", {})
    assert s.kinds() == {"helix"}
    with pytest.raises(UserError, match="needs a strategy search, but this run folder holds a `testhelix run`"):
        s.require_kind("search", "autosaddler dag")
    with pytest.raises(UserError, match="holds a `testhelix run`"):
        s.refuse_other_kinds({"search", "gate"}, "autosaddler search")
    s.close()


def test_a_published_snapshot_says_its_step(tmp_path):
    writer = duckdb.connect(str(tmp_path / "run.duckdb"))
    writer.execute("CREATE TABLE t (x INTEGER)")
    lifecycle.publish_snapshot(writer, tmp_path / "run.snapshot.duckdb", "n003")
    writer.close()
    conn, meta = lifecycle.open_snapshot(tmp_path / "run.snapshot.duckdb", tmp_path / "run.duckdb")
    assert meta["step"] == "n003" and conn.execute("SELECT count(*) FROM t").fetchone() == (0,)
    conn.close()


def test_a_snapshot_without_its_step_row_is_refused_in_one_line(tmp_path):
    snap = tmp_path / "run.snapshot.duckdb"  # damaged: the table is there, the row publish_snapshot writes is not
    made = duckdb.connect(str(snap))
    made.execute("CREATE TABLE snapshot_meta (step TEXT, published_at TIMESTAMP)")
    made.close()
    with pytest.raises(UserError, match=r"run\.snapshot\.duckdb: the snapshot does not say which step"):
        lifecycle.open_snapshot(snap, tmp_path / "run.duckdb")


def test_an_attempt_that_fails_is_not_marked_finished(tmp_path):
    s = RunStore(tmp_path)
    with pytest.raises(OSError):
        try:
            raise OSError(28, "No space left on device")
        finally:
            s.close()
    r = RunStore(tmp_path)  # the next writer marks it abandoned
    assert r.query("SELECT status FROM attempts ORDER BY started_at, attempt_id")[1][0] == ("abandoned",)
    r.close()


def test_each_package_registers_its_own_migrations(tmp_path):
    owners = {m.name: m.owner for m in migrations.registered()}   # loaded through testhelix.store_schemas
    assert owners["optimizer-sessions"] == owners["autosaddler:search-tables"] == "autosaddler"
    assert owners["gtdd:tables"] == "gtdd" and {"search", "gate", "gtdd"} <= set(migrations.run_kinds())
    assert owners["1"] == owners["provider-failures"] == "testhelix"
    RunStore(tmp_path).close()
    conn = duckdb.connect(str(tmp_path / "run.duckdb"))
    names = {r[0] for r in conn.execute("SELECT name FROM schema_meta").fetchall()}
    assert {"optimizer-sessions", "gtdd:tables"} <= names
    # a package this process never imported: its migrations are its business, not a newer version
    conn.execute("INSERT INTO schema_meta VALUES (100, 'elsewhere:tables')")
    conn.close()
    RunStore(tmp_path).close()
    conn = duckdb.connect(str(tmp_path / "run.duckdb"))
    conn.execute("INSERT INTO schema_meta VALUES (101, 'gtdd:from-a-newer-version')")
    conn.close()
    with pytest.raises(UserError, match="newer version.*gtdd:from-a-newer-version"):
        RunStore(tmp_path)
    with pytest.raises(ValueError, match="must be named 'gtdd:"):
        migrations.register("gtdd", [("bare-name", "SELECT 1")])


def test_a_gtdd_store_made_before_gtdd_owned_a_migration_keeps_its_rows(tmp_path):
    """GTDD used to create its tables itself (no schema_meta row): the migration only records them."""
    from gtdd.schema import MIGRATIONS as GTDD

    conn = duckdb.connect(str(tmp_path / "run.duckdb"))
    conn.execute("CREATE TABLE schema_meta (version INTEGER, name TEXT)")
    for i, (name, sql) in enumerate(frozen_migrations()):
        if name != "gtdd:tables":
            conn.execute(sql)
            conn.execute("INSERT INTO schema_meta VALUES (?, ?)", [i + 1, name])
    conn.execute(GTDD[0][1])
    conn.execute("INSERT INTO gtdd_config VALUES ('settings', '{\"rounds\": 3}')")
    conn.close()
    s = RunStore(tmp_path)
    assert s.query("SELECT key, config FROM gtdd_config")[1] == [("settings", '{"rounds": 3}')]
    assert "gtdd" in s.kinds() and migrations.pending(s.conn) == []
    s.close()
