"""One metered door: every model call of a simulated search (the generator's task evaluations and the
optimizer's three sessions) and of a GTDD experiment (coder and tester) is one row of the run's
ledger (model_calls), and what a session or role is said to have used is the sum of its rows."""

from __future__ import annotations

from collections import Counter

from autosaddler.config import load_config
from autosaddler.optimizer import SESSION_ROLES, ModelOptimizer
from autosaddler.search import Search
from autosaddler.traces import TaskEval
from gtdd.agents import LLMCoder, LLMTester
from gtdd.experiment import Experiment, ExperimentConfig
from testhelix.agent.budget import Budget
from testhelix.llm.base import CallTags, Completion, Message, ModelRequest
from testhelix.llm.registry import create_optimizer_model, model_ref
from testhelix.llm.testing import FunctionModel
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Strategy
from tests.autosaddler.autosaddler_fakes import fake_trace
from tests.gtdd.loop_fakes import FakeDomain, InProcessRunner
from tests.gtdd.test_loop_experiment import prompted_model

PROPOSAL = [f"p{i:03d}" for i in range(12)]
DEV = [f"d{i:03d}" for i in range(4)]


class Counted:
    """A chat model that counts the calls that reach it (every call, whoever makes it)."""

    def __init__(self, inner):
        self.inner, self.name, self.context_window = inner, inner.name, inner.context_window
        self.calls: Counter[str] = Counter()

    def complete(self, request: ModelRequest) -> Completion:
        self.calls[request.tags.role] += 1
        return self.inner.complete(request)


class MeteredEvaluator:
    """Each task evaluation makes one generation call through the door, as the helix runner does
    (one Budget per task, its rows in the run's ledger)."""

    def __init__(self, store: RunStore, model: Counted):
        self.store, self.model = store, model

    def evaluate(self, strategy: Strategy, task_ids):
        out = {}
        for t in task_ids:
            budget = Budget(50_000, run_label=f"search/{strategy.content_hash()[:12]}", task_id=t, sink=self.store)
            answer = budget.complete(self.model, ModelRequest((Message("user", f"solve {t}"),), (), 64,
                                                              tags=CallTags(role="generation")))
            success = int(len(answer.text) % 2 == 0 or strategy.agentSteps > 12)
            out[t] = TaskEval(success=success, trace=fake_trace(success, strategy.agentSteps))
        return out


def ledger(store: RunStore, where: str = "TRUE") -> list[dict]:
    cols, rows = store.query(f"SELECT * FROM model_calls WHERE {where}")
    return [dict(zip(cols, r)) for r in rows]


def test_every_call_of_a_simulated_search_is_one_ledger_row_and_sessions_sum_them(tmp_path):
    store = RunStore(tmp_path / "search")
    cfg = load_config("demo", overrides={"train_minibatch_size": 3, "completed_train_iterations": 2,
                                         "max_candidate_proposals": 3, "development_limit": None, "workers": 1})
    optimizer_model = Counted(create_optimizer_model(model_ref("sim:strong"), seed=cfg.seed))
    generator = Counted(FunctionModel(lambda request: "simulated answer", name="sim:generator-double"))
    optimizer = ModelOptimizer(optimizer_model, Budget(5_000_000, label="optimizer", run_label="optimizer", sink=store))
    dag = Search(cfg, store, MeteredEvaluator(store, generator), optimizer, PROPOSAL, DEV).run(Strategy())
    rows = ledger(store)
    by_role = Counter(r["role"] for r in rows)
    assert by_role == optimizer_model.calls + generator.calls        # every call reached the ledger, once
    assert optimizer_model.calls["optimizer"] >= 2 and generator.calls["generation"] > 0
    for session, role in SESSION_ROLES.items():
        own = [r for r in rows if r["role"] == role and r["run_label"] == "optimizer"]
        assert sum(int(n.optimizer_usage.get(session, {}).get("calls", 0)) for n in dag.nodes()) == len(own)
        assert (sum(int(n.optimizer_usage.get(session, {}).get("tokens", 0)) for n in dag.nodes())
                == sum(r["charged_tokens"] for r in own))
    _, stored = store.query("SELECT session, sum(calls), sum(tokens) FROM optimizer_sessions GROUP BY session")
    for session, calls, tokens in stored:        # the store's per-session rows are the same sums
        own = [r for r in rows if r["role"] == SESSION_ROLES[session] and r["run_label"] == "optimizer"]
        assert (calls, tokens) == (len(own), sum(r["charged_tokens"] for r in own))
    assert optimizer.budget.used == sum(r["charged_tokens"] for r in rows if r["run_label"] == "optimizer")
    store.close()


def test_every_call_of_a_gtdd_experiment_is_one_ledger_row(tmp_path):
    model = Counted(prompted_model())
    config = ExperimentConfig(policies=("dynamic-informed",), blocks=1, rounds=3, domain="fake",
                              coder="scripted:fake", tester="scripted:fake", audit_seeded=True)
    experiment = Experiment(tmp_path, config, domain=FakeDomain(), coder=LLMCoder(model), tester=LLMTester(model),
                            runner=InProcessRunner())
    try:
        experiment.run()
        rows = ledger(experiment.store, "run_label = 'gtdd'")
    finally:
        experiment.store.close()
    assert len(rows) == sum(model.calls.values()) > 0
    assert Counter(r["role"].split(":")[0] for r in rows) == Counter(
        {"first-module": 1, "coder": model.calls["generation"] + model.calls["repair"] - 1,
         "tester": model.calls["challenge"]})
    # what was charged is what the double reported (Usage(100, 50) a call), and the door kept the cap
    assert all((r["input_tokens"], r["output_tokens"], r["charged_tokens"]) == (100, 50, 150) for r in rows)
