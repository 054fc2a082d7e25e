"""kill -9 at every stage of a strategy search, then resume: the whole DAG (every field but the
elapsed time), the search state and the evaluations equal an uninterrupted run's, and the ledger
attributes exactly the reference's model calls while keeping the abandoned ones as spent.

The search runs in its own process (search_worker.py: the real Search, store, DAG and optimizer
with the simulated optimizer model, a test double, over a deterministic evaluator); `name:N` kills
it with SIGKILL at the N-th call of `name`."""

import pytest

from testhelix.store.runstore import RunStore

from .conftest import dag_rows, worker

pytestmark = pytest.mark.slow

KILLS = [
    ["migration:3"],              # while run.duckdb is being created and migrated
    ["link:1"],                   # store built, not yet in place
    ["evaluate:1"],               # first development evaluation of the root
    ["put_state:1"],              # inside the root's DAG commit
    ["diagnose:1"],               # in the optimizer's diagnosis session
    ["put_search_eval:9"],        # in the middle of a minibatch
    ["put_state:3"],              # inside a later DAG commit
    ["publish_snapshot:2"],       # while publishing the live snapshot
    ["close:1"],                  # after the search finished, before the store closed
    ["diagnose:2", "put_state:2"],  # a double kill: during the run and during the resume
]


def ledger(run):
    store = RunStore(run, read_only=True)
    try:
        _, rows = store.query("SELECT count(*), count(*) FILTER (WHERE attributed) FROM model_call_accounting")
        _, attempts = store.query("SELECT status, count(*) FROM attempts GROUP BY status ORDER BY status")
    finally:
        store.close()
    return rows[0], dict(attempts)


@pytest.mark.parametrize("kills", KILLS, ids=["+".join(k) for k in KILLS])
def test_kill_and_resume_gives_the_uninterrupted_dag(kills, reference, tmp_path):
    ref_run, ref_rows = reference
    run = tmp_path / "run"
    for fault in kills:
        died = worker(run, fault)
        assert died.returncode == -9, f"{fault} never fired: {died.returncode} {died.stderr[-500:]}"
        if fault.startswith(("migration", "link")):
            assert not (run / "run.duckdb").exists()  # no half-made store is ever in place
    done = worker(run)
    assert done.returncode == 0, done.stderr
    assert not list(run.glob(".run.duckdb.creating-*")) and not list(run.glob(".snapshot-*"))
    assert dag_rows(run) == ref_rows
    (spent, attributed), attempts = ledger(run)
    (ref_spent, ref_attributed), _ = ledger(ref_run)
    assert attributed == ref_attributed == ref_spent  # each finished evaluation counted once
    assert spent >= attributed
    store_kills = sum(not f.startswith(("migration", "link")) for f in kills)
    assert attempts.get("abandoned", 0) == store_kills and attempts["finished"] == 1
