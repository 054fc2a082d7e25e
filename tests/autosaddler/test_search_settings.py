"""Every search setting the seed names either acts (a test shows it) or is refused with a note;
the three optimizer sessions each keep their own deadline and their own usage per DAG node."""

from __future__ import annotations

import threading
import time

import pytest

from autosaddler.config import SearchConfig, config_from_data, load_config
from autosaddler.dag import EvolutionDAG
from autosaddler.edits import FieldEdit
from autosaddler.optimizer import ModelOptimizer
from autosaddler.search import Search
from autosaddler.traces import OptimizerTrace
from testhelix.agent.budget import Budget, MemoryLedger
from testhelix.core.errors import UserError
from testhelix.llm.base import Usage
from testhelix.llm.testing import FunctionModel
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Strategy
from tests.autosaddler.autosaddler_fakes import CountingEvaluator, ScriptedOptimizer

PROPOSAL = [f"p{i:03d}" for i in range(23)]
DEV = [f"d{i:03d}" for i in range(4)]
STEPS = [{"kind": "field", "field": "agentSteps", "value": v} for v in (14, 16, 18, 20, 22, 24, 26, 28)]


def run_search(tmp_path, optimizer=None, **settings):
    cfg = load_config("paper", overrides={"development_limit": None, **settings})
    search = Search(cfg, RunStore(tmp_path / "run"), CountingEvaluator(), optimizer or ScriptedOptimizer(STEPS),
                    PROPOSAL, DEV)
    return search.run(Strategy())


def batches(dag):
    """The minibatch of each round, in order (the tasks the parent was evaluated on)."""
    return [tuple(sorted(n.parent_outcomes)) for n in dag.nodes() if n.status != "root"]


def test_train_minibatch_size(tmp_path):
    dag = run_search(tmp_path, train_minibatch_size=5, completed_train_iterations=3)
    assert [len(b) for b in batches(dag)] == [5, 5, 5]
    assert all(set(n.child_outcomes) == set(n.parent_outcomes) for n in dag.nodes() if n.status != "root")


def test_completed_train_iterations(tmp_path):
    dag = run_search(tmp_path, train_minibatch_size=3, completed_train_iterations=2)
    assert len(batches(dag)) == 2 and len(dag.nodes()) == 3


def test_max_candidate_proposals_counts_rejected_proposals(tmp_path):
    script = [{"kind": "field", "field": "maxCandidates", "value": 5}]      # always rejected
    dag = run_search(tmp_path, ScriptedOptimizer(script), train_minibatch_size=3, max_candidate_proposals=3)
    assert [n.status for n in dag.nodes()] == ["root", "rejected", "rejected", "rejected"]
    assert len(set(batches(dag))) == 1                                     # a rejected round uses no tasks up


def test_train_epochs_reshuffles_and_never_gives_an_empty_minibatch(tmp_path):
    # 23 tasks, minibatches of 5: 4 per epoch (3 tasks of each epoch's tail left out), 2 epochs = 8 rounds
    two = batches(run_search(tmp_path, train_minibatch_size=5, train_epochs=2, completed_train_iterations=50,
                             max_candidate_proposals=50))
    assert len(two) == 8 and all(len(b) == 5 for b in two)
    first, second = [t for b in two[:4] for t in b], [t for b in two[4:] for t in b]
    assert len(set(first)) == len(set(second)) == 20 and set(first) | set(second) <= set(PROPOSAL)
    assert set(two[:4]) != set(two[4:])                                     # a fresh shuffle per epoch
    one = batches(run_search(tmp_path / "one", train_minibatch_size=5, completed_train_iterations=50,
                             max_candidate_proposals=50))
    assert one == two[:4]                                                   # epoch 1 unchanged


@pytest.mark.parametrize("name", ["train_eval_attempts", "use_merge", "skip_session0", "optimizer_session_timeout_s"])
def test_the_seeds_settings_without_a_switch_are_refused_by_name(name):
    """The seed's names for behaviour this search has no switch for are not settings."""
    assert name not in SearchConfig.model_fields
    with pytest.raises(UserError) as err:
        config_from_data({name: 1})
    assert [path for path, _ in err.value.problems] == [name]


def slow_model(delays: dict[str, float], release: threading.Event) -> FunctionModel:
    """Answers after `delay` seconds (per role), with a price; the selection answer names n000."""
    text = {"selection": '{"parent": "n000"}',
            "optimizer": '{"kind": "field", "field": "agentSteps", "value": 16, "rationale": "more steps"}'}

    def answer(request):
        delay = delays.get(request.tags.role, 0)
        if delay:
            release.wait(delay)
        return text.get(request.tags.role, "{}")

    return FunctionModel(answer, usage=Usage(input_tokens=100, output_tokens=20, cost_usd=0.01))


def test_each_optimizer_session_has_its_own_deadline_and_usage(tmp_path):
    release = threading.Event()
    model = slow_model({"selection": 5.0}, release)
    ledger = MemoryLedger()
    optimizer = ModelOptimizer(model, Budget(10**6, sink=ledger),
                               timeouts={"selection": 0.2, "diagnosis": 30.0, "reflection": 30.0})
    from autosaddler.protocols import ParentView
    views = [ParentView("n000", 0.5, 0, "initial", None), ParentView("n001", 0.4, 1, "x", 3)]
    started = time.monotonic()
    assert optimizer.select_parent(views) == ""                              # gave up at its own deadline
    assert time.monotonic() - started < 2.0
    diagnosis = optimizer.diagnose(Strategy(), [OptimizerTrace("task 1", 0, None)], [])
    assert isinstance(diagnosis.edit, FieldEdit) and diagnosis.edit.field == "agentSteps"  # the next session still runs
    release.set()
    deadline = time.monotonic() + 30
    while len(ledger.rows) < 2 and time.monotonic() < deadline:   # the abandoned call ends and is charged
        time.sleep(0.01)
    usage = optimizer.usage()
    # the abandoned call still cost what it cost: usage is the sum of the ledger's rows
    assert usage["selection"]["timeouts"] == 1 and usage["selection"]["calls"] == 1
    assert usage["selection"]["tokens"] == sum(r["charged_tokens"] for r in ledger.rows if r["role"] == "selection")
    assert 0.15 <= usage["selection"]["elapsed_s"] < 2.0 and usage["selection"]["timeout_s"] == 0.2
    # summed from the ledger, where a test double's claimed price is no cost (simulated: None)
    assert usage["diagnosis"] | {"elapsed_s": 0} == {
        "calls": 1, "input_tokens": 100, "output_tokens": 20, "tokens": 120, "cost_usd": None, "failures": 0,
        "timeouts": 0, "tool_calls": 0, "step_limits": 0, "elapsed_s": 0, "timeout_s": 30.0}
    assert optimizer.usage()["diagnosis"]["calls"] == 0                      # per step, not cumulative
    exchanges = optimizer.exchanges()                                        # what the search page shows
    assert [(e["session"], e["reply"] is None) for e in exchanges] == [("selection", True), ("diagnosis", False)]
    failure = exchanges[0]["failure"]
    assert failure is not None and "no answer within 0.2 s" in failure
    assert exchanges[1]["prompt"][0]["role"] == "system"
    assert optimizer.exchanges() == []


def test_dag_nodes_and_the_store_hold_each_sessions_usage(tmp_path):
    model = slow_model({}, threading.Event())
    optimizer = ModelOptimizer(model, Budget(10**6, sink=MemoryLedger()),
                               timeouts={"selection": 7.0, "diagnosis": 8.0, "reflection": 9.0})
    dag = run_search(tmp_path, optimizer, train_minibatch_size=3, completed_train_iterations=2,
                        max_candidate_proposals=2)
    nodes = [n for n in dag.nodes() if n.status != "root"]
    assert nodes and all(n.optimizer_usage["diagnosis"]["calls"] == 1 for n in nodes)
    assert [n.optimizer_usage["diagnosis"]["timeout_s"] for n in nodes] == [8.0] * len(nodes)
    store = RunStore(tmp_path / "run", read_only=True)
    cols, rows = store.query("SELECT node_id, session, calls, tokens, cost_usd, timeout_s FROM optimizer_sessions "
                             "WHERE session = 'diagnosis' ORDER BY node_id")
    assert [(r[0], r[2], r[3], r[4], r[5]) for r in rows] == [(n.node_id, 1, 120, None, 8.0) for n in nodes]
    assert EvolutionDAG.load(store).to_json() == dag.to_json()
    from autosaddler.search import exchanges_key
    for n in nodes:   # each node keeps the prompts and replies of its own step
        exchanges = store.get_state(exchanges_key(n.node_id))
        assert isinstance(exchanges, list) and [e["session"] for e in exchanges] == ["diagnosis"]
    store.close()
