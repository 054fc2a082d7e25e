"""Each way of damaging a finished search's store is refused with exit 2 and a message naming the
row or field, never a hang (every command runs under a timeout), a traceback, or a silent use."""

import json

import duckdb
import pytest

from .conftest import autosaddler, worker

pytestmark = pytest.mark.slow


def _state(conn, key="search"):
    return json.loads(conn.execute("SELECT value FROM search_state WHERE key = ?", [key]).fetchone()[0])


def _put_state(conn, value, key="search"):
    conn.execute("UPDATE search_state SET value = ? WHERE key = ?", [json.dumps(value), key])


def cycle(conn):
    # a node X with a child Y becomes Y's child: X -> Y -> X, detached from the root
    x, y = conn.execute("SELECT parent_id, child_id FROM dag_edges WHERE parent_id <> 'n000' LIMIT 1").fetchone() \
        or conn.execute("SELECT parent_id, child_id FROM dag_edges ORDER BY child_id DESC LIMIT 1").fetchone()
    if x == "n000":  # a star: make n001 -> n002 -> n001
        x, y = "n001", "n002"
        conn.execute("UPDATE dag_edges SET parent_id = 'n001' WHERE child_id = 'n002'")
    conn.execute("UPDATE dag_edges SET parent_id = ? WHERE child_id = ?", [y, x])


def edit_strategy(conn):
    row = conn.execute("SELECT strategy FROM dag_nodes WHERE node_id = 'n001'").fetchone()[0]
    strategy = json.loads(row)
    strategy["agentSteps"] = 29 if strategy["agentSteps"] != 29 else 28  # still a valid strategy
    conn.execute("UPDATE dag_nodes SET strategy = ? WHERE node_id = 'n001'", [json.dumps(strategy)])


def state_patch(**changes):
    def apply(conn):
        state = _state(conn)
        state.update(changes)
        _put_state(conn, state)
    return apply


def short_rng(conn):
    state = _state(conn)
    state["rng"][1] = state["rng"][1][:100]
    _put_state(conn, state)


def bad_config(conn):
    meta = _state(conn, "meta")
    meta["config"]["workers"] = 10 ** 12
    _put_state(conn, meta, "meta")


# (name, tampering, command: "dag" | "freeze" | "worker" | "resume", words the message must contain)
CASES = [
    ("cycle in dag_edges", cycle, "dag", ["not reachable from n000"]),
    ("cycle, freeze", cycle, "freeze", ["n000"]),
    ("cycle, resume", cycle, "worker", ["n000"]),
    ("deleted root", lambda c: c.execute("DELETE FROM dag_nodes WHERE node_id = 'n000'"), "dag", ["n000"]),
    ("deleted root, resume", lambda c: c.execute("DELETE FROM dag_nodes WHERE node_id = 'n000'"), "worker", ["n000"]),
    ("edited strategy", edit_strategy, "dag", ["n001", "strategy_hash"]),
    ("edited strategy, freeze", edit_strategy, "freeze", ["n001", "strategy_hash"]),
    ("invalid strategy", lambda c: c.execute("UPDATE dag_nodes SET strategy = '{\"agentSteps\": 999}' "
                                             "WHERE node_id = 'n001'"), "dag", ["n001", "invalid"]),
    ("strategy not an object", lambda c: c.execute("UPDATE dag_nodes SET strategy = '[1, 2]' WHERE node_id = 'n002'"),
     "dag", ["n002"]),
    ("edge to a missing node", lambda c: c.execute("INSERT INTO dag_edges VALUES ('n001', 'n999')"), "dag",
     ["n999"]),
    ("two parents", lambda c: c.execute("INSERT INTO dag_edges SELECT CASE WHEN parent_id = 'n000' THEN 'n001' "
                                        "ELSE 'n000' END, child_id FROM dag_edges WHERE child_id = 'n003'"), "dag",
     ["n003", "2 parents"]),
    ("unknown status", lambda c: c.execute("UPDATE dag_nodes SET status = 'promoted' WHERE node_id = 'n002'"),
     "dag", ["n002", "promoted"]),
    ("extra key in search state", state_patch(extra=1), "worker", ["search_state", "extra"]),
    ("wrong-size RNG vector", short_rng, "worker", ["search_state", "rng"]),
    ("cursor out of range", state_patch(cursor=10 ** 9), "worker", ["cursor", "1000000000"]),
    ("negative counter", state_patch(proposals=-1), "worker", ["search_state", "proposals"]),
    ("order not the proposal split", state_patch(order=["x"]), "worker", ["order"]),
    ("next_node disagrees", state_patch(next_node=99), "worker", ["next_node"]),
    ("search state not an object", lambda c: _put_state(c, [1, 2]), "worker", ["search_state"]),
    ("invalid stored config", bad_config, "resume", ["config.workers"]),
    ("meta not an object", lambda c: _put_state(c, "x", "meta"), "resume", ["meta"]),
]


@pytest.mark.parametrize("name,tamper,command,words", CASES, ids=[c[0] for c in CASES])
def test_tampering_is_refused(name, tamper, command, words, reference, copy_of, tmp_path):
    run = copy_of(reference[0])
    conn = duckdb.connect(str(run / "run.duckdb"))
    tamper(conn)
    conn.close()
    if command == "dag":
        r = autosaddler("dag", run)
    elif command == "freeze":
        r = autosaddler("freeze", run, "--out", tmp_path / "frozen.json")
        assert not (tmp_path / "frozen.json").exists()
    elif command == "resume":
        r = autosaddler("resume", run)
    else:
        r = worker(run, timeout=60)
    assert r.returncode == 2, (r.returncode, r.stdout[-300:], r.stderr[-800:])
    assert "Traceback" not in r.stderr and r.stderr.startswith("error:")
    for word in words:
        assert word in r.stderr, r.stderr
