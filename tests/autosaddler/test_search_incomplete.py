"""A provider outage during a search is never a score or a rejection: the search stops with an
incomplete evaluation, nothing of the round is recorded, and resuming after recovery ends with the
same DAG as a search that never saw the outage. A revoked key stops it as an auth error."""

from __future__ import annotations

import pytest

from autosaddler.optimizer import ModelOptimizer
from autosaddler.protocols import ParentView
from testhelix.agent.budget import Budget
from testhelix.core.errors import EvaluationIncomplete
from testhelix.llm.base import ModelAuthError, ModelUnavailable
from testhelix.llm.testing import FunctionModel
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Strategy
from tests.autosaddler.autosaddler_fakes import CountingEvaluator, ScriptedOptimizer
from tests.autosaddler.test_search import SCRIPT, make_search


class OutageEvaluator(CountingEvaluator):
    """Evaluations fail (as the runner reports them) from call `down_from` on."""

    def __init__(self, down_from: int):
        super().__init__()
        self.down_from = down_from

    def evaluate(self, strategy, task_ids):
        if self.calls + len(task_ids) > self.down_from:
            raise EvaluationIncomplete(task_ids[0], "server_error", "HTTP 503 after retries")
        return super().evaluate(strategy, task_ids)


class FlakyOptimizer(ScriptedOptimizer):
    def __init__(self, script, error):
        super().__init__(script)
        self.error = error

    def diagnose(self, parent, traces, history):
        if len(history) == 2:
            raise self.error
        return super().diagnose(parent, traces, history)


def _nodes(dag):
    return [{k: v for k, v in n.items() if k not in ("elapsed_s", "optimizer_usage")} for n in dag.to_json()["nodes"]]


def test_outage_then_resume_gives_the_dag_of_a_clean_search(tmp_path):
    clean = make_search(tmp_path, CountingEvaluator(), "clean").run(Strategy())
    for down_from in (25, 64):
        name = f"outage{down_from}"
        with pytest.raises(EvaluationIncomplete, match="incomplete \\(server_error\\)"):
            make_search(tmp_path, OutageEvaluator(down_from), name).run(Strategy())
        store = RunStore(tmp_path / name)
        nodes = store.query("SELECT count(*) FROM dag_nodes WHERE status IN ('rejected', 'screened_out')")[1][0][0]
        store.close()
        clean_prefix = sum(1 for n in _nodes(clean) if n["status"] in ("rejected", "screened_out"))
        assert nodes <= clean_prefix                 # no extra rejection or screening came from the outage
        resumed = make_search(tmp_path, CountingEvaluator(), name).run(Strategy())
        assert _nodes(resumed) == _nodes(clean)


def test_an_optimizer_outage_stops_the_round_without_a_rejected_node(tmp_path):
    clean = make_search(tmp_path, CountingEvaluator(), "clean").run(Strategy())
    search = make_search(tmp_path, CountingEvaluator(), "flaky")
    search.optimizer = FlakyOptimizer(SCRIPT, ModelUnavailable("HTTP 529 after retries", status=529, cause="overloaded"))
    with pytest.raises(EvaluationIncomplete, match="optimizer session incomplete \\(overloaded\\)"):
        search.run(Strategy())
    assert _nodes(make_search(tmp_path, CountingEvaluator(), "flaky").run(Strategy())) == _nodes(clean)


def test_a_revoked_key_stops_the_search_as_an_auth_error(tmp_path):
    search = make_search(tmp_path, CountingEvaluator(), "auth")
    search.optimizer = FlakyOptimizer(SCRIPT, ModelAuthError("rejected the credentials: check ANTHROPIC_API_KEY"))
    with pytest.raises(ModelAuthError):
        search.run(Strategy())
    store = RunStore(tmp_path / "auth")
    rejected = store.query("SELECT count(*) FROM dag_nodes WHERE status = 'rejected' AND reason LIKE '%unparsed%'")
    store.close()
    assert rejected[1][0][0] == 0


def raising_model(error: Exception) -> FunctionModel:
    """Every call fails with `error`."""
    return FunctionModel(lambda request: error, name="anthropic:claude-haiku-4-5", context_window=200000)


def test_model_optimizer_degrades_selection_but_not_diagnosis():
    outage = ModelOptimizer(raising_model(ModelUnavailable("503", status=503)), Budget(10**6, label="optimizer"))
    views = [ParentView("n000", 0.5, 0, "initial strategy", None), ParentView("n001", 0.6, 1, "x", 3)]
    assert outage.select_parent(views) == ""             # the search falls back to the best development score
    with pytest.raises(ModelUnavailable):
        outage.diagnose(Strategy(), [], [])
    revoked = ModelOptimizer(raising_model(ModelAuthError("check ANTHROPIC_API_KEY")), Budget(10**6, label="optimizer"))
    with pytest.raises(ModelAuthError):
        revoked.select_parent(views)
    assert outage.usage()["selection"]["failures"] == 1
