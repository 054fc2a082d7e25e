"""Inspecting a run while its writer holds the store, and reclaiming staging folders of dead
processes (and only those)."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from testhelix.core import staging

from .conftest import WORKER, autosaddler


def _wait_for(path: Path, proc: subprocess.Popen, seconds: float = 120) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        assert time.monotonic() < deadline, "the writer never reached the pause point"
        time.sleep(0.1)


@pytest.mark.slow
def test_dag_and_sql_read_a_live_search_from_its_snapshot(tmp_path):
    run, gate = tmp_path / "run", tmp_path / "go"
    # pause the writer inside its third step (after n000 and n001 were committed and published)
    proc = subprocess.Popen([sys.executable, str(WORKER), "run", str(run), f"diagnose:2:{gate}"],
                            stderr=subprocess.PIPE, text=True)
    try:
        _wait_for(Path(str(gate) + ".ready"), proc)
        dag = autosaddler("dag", run)
        assert dag.returncode == 0, dag.stderr
        assert "snapshot after step n001" in dag.stderr + dag.stdout and "2 nodes" in dag.stdout
        sql = subprocess.run([str(Path(sys.executable).parent / "testhelix"), "sql", str(run),
                              "SELECT count(*) AS n FROM dag_nodes", "--json"], capture_output=True, text=True,
                             timeout=60)
        assert sql.returncode == 0 and '"n": 2' in sql.stdout and "n001" in sql.stderr
        freeze = autosaddler("freeze", run, "--out", tmp_path / "f.json")
        assert freeze.returncode == 2 and "still running" in freeze.stderr
    finally:
        gate.touch()
        proc.wait(timeout=120)
    assert proc.returncode == 0
    assert not (run / "run.snapshot.duckdb").exists()  # removed when the writer closed
    after = autosaddler("dag", run)
    assert after.returncode == 0 and "snapshot" not in after.stderr


def test_staging_of_a_killed_process_is_reclaimed_and_nothing_else(tmp_path):
    code = ("import sys, time; from pathlib import Path; from testhelix.core import staging; "
            f"print(staging.make_staging('th-test-', Path({str(tmp_path)!r})), flush=True); time.sleep(60)")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None  # stdout=PIPE
    dead = Path(proc.stdout.readline().strip())
    assert dead.is_dir() and staging.reclaim_dead(tmp_path, "th-test-") == []  # the owner is alive
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    mine = staging.make_staging("th-test-", tmp_path)  # a new start reclaims the dead one
    foreign = tmp_path / "th-test-not-ours"
    foreign.mkdir()  # same prefix, no owner lock: never touched
    assert not dead.exists() and mine.is_dir() and foreign.is_dir()
    assert staging.reclaim_dead(tmp_path, "th-test-") == []
    staging.release(mine)
    assert staging.reclaim_dead(tmp_path, "th-test-") == [mine]
