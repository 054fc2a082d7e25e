import threading

import duckdb
import pytest

from testhelix.core.errors import UserError
from testhelix.store.migrations import latest_version
from testhelix.store.runstore import RunStore


def test_round_trip(tmp_path):
    s = RunStore(tmp_path)
    s.put_execution("k1", {"suite_digest": "s", "program_digest": "p", "status": "fail", "reason": "exit 1",
                           "tests_run": 3, "limits": {"wall_s": 60}})
    s.record_model_call({"run_label": "sim:strong/C", "task_id": "t", "role": "generation", "pair": 0, "round": 1,
                         "input_tokens": 100, "output_tokens": 20, "cost_usd": None, "simulated": True})
    s.record_task_outcomes("r", "t", [{"program_id": "initial", "role": "initial", "label": "invalid",
                                       "status": "fail", "reason": None}])
    s.record_task_result({"run_label": "r", "task_id": "t", "submitted": True, "F": 1, "A": None, "R": 1.0, "S": 0})
    s.close()
    r = RunStore(tmp_path, read_only=True)
    row = r.get_execution("k1")
    assert row is not None and row["status"] == "fail" and row["tests_run"] == 3
    assert r.get_execution("nope") is None
    assert r.model_calls()[0]["cost_usd"] is None
    assert r.task_outcomes("r")[0]["program_id"] == "initial"
    assert r.task_results()[0]["A"] is None and r.run_labels() == ["r"]
    assert r.schema_version() == latest_version()


def test_migration_from_older_version_keeps_data(tmp_path):
    conn = duckdb.connect(str(tmp_path / "run.duckdb"))
    conn.execute("CREATE TABLE schema_meta (version INTEGER)")
    conn.execute("CREATE TABLE keep (x INTEGER)")
    conn.execute("INSERT INTO keep VALUES (7)")
    conn.close()
    s = RunStore(tmp_path)
    assert s.schema_version() == latest_version()
    assert s.query("SELECT x FROM keep")[1] == [(7,)]


def test_newer_schema_refused(tmp_path):
    RunStore(tmp_path).close()
    conn = duckdb.connect(str(tmp_path / "run.duckdb"))
    conn.execute("INSERT INTO schema_meta (version) VALUES (999)")
    conn.close()
    with pytest.raises(UserError, match="newer version"):
        RunStore(tmp_path)


def test_failed_transaction_rolls_back(tmp_path):
    s = RunStore(tmp_path)
    with pytest.raises(RuntimeError):
        with s.transaction():
            s.conn.execute("INSERT INTO metrics VALUES ('r', 'x', 1.0)")
            raise RuntimeError
    assert s.query("SELECT count(*) FROM metrics")[1] == [(0,)]


def test_concurrent_writes(tmp_path):
    s = RunStore(tmp_path)

    def work(i):
        for j in range(20):
            s.record_model_call({"run_label": "r", "pair": i, "round": j, "input_tokens": j})

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(s.model_calls("r")) == 80


def test_missing_run_dir_and_bad_query(tmp_path):
    with pytest.raises(UserError, match="no run store"):
        RunStore(tmp_path / "nothing", read_only=True)
    with pytest.raises(UserError, match="query failed"):
        RunStore(tmp_path).query("SELEC 1")
