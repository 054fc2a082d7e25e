"""GTDD results do not depend on load or on interruptions (issue #35): a small experiment on the
real key-value store, run once straight through and once killed with SIGKILL at random moments and
resumed, stores the same rounds, audits, counterexamples, generators and states (timings aside).

Slow: two experiments of 2,000-trace populations in sandboxed processes."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

pytestmark = pytest.mark.slow
GTDD = str(Path(sys.executable).parent / "gtdd")
ARGS = ["experiment", "--policies", "public-only,static-llm", "--blocks", "1", "--rounds", "2", "--quiet"]
TIMING_KEYS = ("wall_s", "events")  # elapsed time
# Audit samples are drawn from fresh OS randomness on purpose (gtdd/acceptance: a coder must not be
# able to predict them), so which traces an audit sampled, and how many of those failed, differ
# between any two runs (and so does the position of the first failure in the sample, which the
# sequential rule reads); everything else, including each audit's size and decision, must not.
AUDIT_RANDOM = ("sampled_ids", "failures", "passed", "first_failure")  # per family; plus the record's randomness


def results(run_dir: Path) -> dict[str, list[str]]:
    """Every row of every GTDD table, timings removed, as sorted canonical JSON."""
    conn = duckdb.connect(str(run_dir / "run.duckdb"), read_only=True)
    try:
        tables = [t for (t,) in conn.execute("SELECT table_name FROM information_schema.tables "
                                             "WHERE table_name LIKE 'gtdd_%' ORDER BY 1").fetchall()]
        out = {}
        for table in tables:
            cur = conn.execute(f"SELECT * FROM {table}")
            cols = [d[0] for d in cur.description]
            rows = []
            for row in cur.fetchall():
                record = {c: v for c, v in zip(cols, row) if c not in TIMING_KEYS}
                for c, v in record.items():
                    if isinstance(v, str) and v.startswith("{"):
                        value = json.loads(v)
                        for key in TIMING_KEYS:
                            value.pop(key, None)
                        if table == "gtdd_audits":
                            value.pop("randomness", None)
                            for family in value.get("families", {}).values():
                                for key in AUDIT_RANDOM:
                                    family.pop(key, None)
                        record[c] = value
                rows.append(json.dumps(record, sort_keys=True, default=str))
            out[table] = sorted(rows)
        return out
    finally:
        conn.close()


def _experiment(run_dir: Path) -> subprocess.Popen:
    return subprocess.Popen([GTDD, *ARGS, "--run", str(run_dir)], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)


def test_killed_and_resumed_equals_uninterrupted(tmp_path):
    straight = tmp_path / "straight"
    done = subprocess.run([GTDD, *ARGS, "--run", str(straight)], capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]

    cut = tmp_path / "cut"
    rng = random.Random(35)
    kills = 0
    for _ in range(6):  # up to three kills at random moments, then runs to the end
        proc = _experiment(cut)
        if kills < 3:
            try:
                proc.wait(timeout=rng.uniform(3.0, 25.0))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)  # the experiment and its sandboxed children
                proc.wait()
                kills += 1
                time.sleep(0.2)
                continue
        else:
            proc.wait(timeout=900)
        assert proc.returncode == 0, proc.stderr.read().decode()[-2000:] if proc.stderr else proc.returncode
        break
    assert kills >= 1, "the experiment finished before any kill: choose shorter delays"
    assert results(cut) == results(straight)
