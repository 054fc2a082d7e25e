"""The shared budget: reservations, charging, the ledger, concurrency, and the time caps."""

from __future__ import annotations

import random
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testhelix.agent.budget import (
    Budget,
    BudgetExhausted,
    Deadline,
    DeadlineExceeded,
    MemoryLedger,
    execution_time_limit_s,
    input_token_bound,
    working_cap_s,
)
from testhelix.llm.base import CallTags, Completion, Message, ModelRequest, ModelUnavailable, Usage
from testhelix.llm.testing import FunctionModel, Reply, ScriptedModel


class RandomUsageModel:
    """Reports random usage within what the provider could really bill, or fails now and then."""

    name = "fake:random"
    context_window = 100000

    def __init__(self, seed: int, budget: Budget, fail_rate: float = 0.0):
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.budget, self.fail_rate = budget, fail_rate
        self.charged = 0
        self.violations = 0

    def complete(self, request: ModelRequest) -> Completion:
        b = self.budget
        with b._lock:                     # the invariant must hold while calls are in flight
            if b.used + b.reserved > b.cap_tokens:
                self.violations += 1
        with self.lock:
            roll = self.rng.random()
            inp = self.rng.randint(0, input_token_bound(request))
            out = self.rng.randint(0, request.max_output_tokens)
        if roll < self.fail_rate / 2:
            raise ModelUnavailable("refused", status=429, billed=False)
        if roll < self.fail_rate:
            raise ModelUnavailable("timed out", billed=None)
        return Completion("", (), "end_turn", Usage(inp, out), self.name)


def request(size: int, max_out: int) -> ModelRequest:
    return ModelRequest((Message("user", "x" * size),), (), max_out, tags=CallTags(role="generation", pair=0))


@settings(max_examples=25, deadline=None)
@given(cap=st.integers(0, 60000), threads=st.integers(2, 6), calls=st.integers(1, 12),
       seed=st.integers(0, 10**6), fail_rate=st.sampled_from([0.0, 0.3]))
def test_cap_never_exceeded_with_concurrent_calls(cap, threads, calls, seed, fail_rate):
    ledger = MemoryLedger()
    budget = Budget(cap, label="task", task_id="t", run_label="prop", sink=ledger)
    model = RandomUsageModel(seed, budget, fail_rate)
    sizes = random.Random(seed)
    plans = [[(sizes.randint(0, 8000), sizes.randint(1, 4000)) for _ in range(calls)] for _ in range(threads)]
    refused = []

    def worker(plan):
        for size, max_out in plan:
            try:
                budget.complete(model, request(size, max_out))
            except BudgetExhausted:
                refused.append(1)
            except ModelUnavailable:
                pass

    pool = [threading.Thread(target=worker, args=(p,)) for p in plans]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    assert model.violations == 0
    assert budget.used <= cap and budget.reserved == 0 and budget.overruns == 0
    assert budget.calls + len(refused) == threads * calls == budget.calls + budget.refused
    assert len(ledger.rows) == budget.calls          # every call made is in the ledger, refusals are not
    ok_tokens = sum(r["input_tokens"] + r["output_tokens"] for r in ledger.rows if r["status"] == "ok")
    assert ok_tokens <= budget.used


def test_reservation_refuses_and_shrinks():
    budget = Budget(2000, min_output_tokens=100)
    bound = input_token_bound(request(100, 10))
    seen: list[int] = []
    model = FunctionModel(lambda req: seen.append(req.max_output_tokens) or Reply(usage=Usage(5, 5)))  # type: ignore[func-returns-value]
    budget.complete(model, request(100, 5000))            # does not fit whole: output allowance shrinks
    assert seen == [2000 - bound]
    with pytest.raises(BudgetExhausted):
        budget.complete(model, request(8000, 100))          # the input bound alone does not fit
    assert budget.used == 10 and budget.refused == 1 and budget.calls == 1


def test_failed_calls_charged_by_billing_knowledge():
    ledger = MemoryLedger()
    budget = Budget(100000, sink=ledger)
    model = ScriptedModel([ModelUnavailable("429", status=429, billed=False),
                           ModelUnavailable("timeout", billed=None)], context_window=1000)
    with pytest.raises(ModelUnavailable):
        budget.complete(model, request(100, 100))
    assert budget.used == 0
    with pytest.raises(ModelUnavailable):
        budget.complete(model, request(100, 100))
    assert budget.used == input_token_bound(request(100, 100)) + 100    # unknown: the reservation is kept
    assert [r["status"] for r in ledger.rows] == ["error", "error"] and "kept" in ledger.rows[1]["error"]
    assert ledger.rows[0]["input_tokens"] == 0 and ledger.rows[0]["charged_tokens"] == 0 and ledger.rows[0]["cost_usd"] is None


def test_unreported_usage_keeps_the_reservation_and_parse_failures_are_charged():
    budget = Budget(100000, sink=MemoryLedger())
    budget.complete(ScriptedModel([Reply(usage=Usage(reported=False))], context_window=1000), request(40, 60))
    assert budget.used == input_token_bound(request(40, 60)) + 60


def test_optimizer_budget_is_separate():
    gen, opt = Budget(1000, label="generator"), Budget(10**6, label="optimizer")
    model = RandomUsageModel(3, opt)
    opt.complete(model, request(2000, 500))
    assert gen.used == 0 and opt.used > 0
    with pytest.raises(BudgetExhausted, match="generator"):
        gen.complete(RandomUsageModel(3, gen), request(2000, 500))


def test_time_caps():
    assert working_cap_s(600) == 460 and working_cap_s(120) == 70 and working_cap_s(10) == 0
    assert execution_time_limit_s(60) == 60 and execution_time_limit_s(900) == 180
    now = [0.0]
    d = Deadline.for_agent_limit(600, clock=lambda: now[0])
    assert d.remaining() == 460
    now[0] = 459.0
    d.check()
    now[0] = 460.0
    with pytest.raises(DeadlineExceeded):
        d.check()


@settings(max_examples=25, deadline=None)
@given(cap=st.integers(0, 80000), pairs=st.integers(1, 5), spent_before=st.integers(0, 30000),
       calls=st.integers(1, 10), seed=st.integers(0, 10**6), fail_rate=st.sampled_from([0.0, 0.3]))
def test_concurrent_pairs_on_fair_shares_never_overspend(cap, pairs, spent_before, calls, seed, fail_rate):
    """K pairs run at the same time, each on its share of what is left; a planning call happened
    before. The task cap holds while calls are in flight and after, every share is equal, and no pair
    can take more than its share (so none is starved by an early one)."""
    ledger = MemoryLedger()
    budget = Budget(cap, label="task", task_id="t", run_label="prop", sink=ledger)
    parent_model = RandomUsageModel(seed, budget, fail_rate)
    try:
        budget.complete(parent_model, request(min(spent_before, 20000), 500))
    except (BudgetExhausted, ModelUnavailable):
        pass
    left = budget.remaining
    sizes = random.Random(seed)
    plans = [[(sizes.randint(0, 6000), sizes.randint(1, 3000)) for _ in range(calls)] for _ in range(pairs)]
    with budget.shares(pairs) as shares:
        assert len({s.cap_tokens for s in shares}) == 1 and shares[0].cap_tokens == left // pairs
        assert budget.used + budget.reserved <= cap
        models = [RandomUsageModel(seed + i, s, fail_rate) for i, s in enumerate(shares)]

        def worker(share, model, plan):
            for size, max_out in plan:
                try:
                    share.complete(model, request(size, max_out))
                except (BudgetExhausted, ModelUnavailable):
                    pass

        threads = [threading.Thread(target=worker, args=a) for a in zip(shares, models, plans)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert all(m.violations == 0 for m in models)
        assert all(s.used <= s.cap_tokens for s in shares)
        spent_in_shares = sum(s.used for s in shares)
    assert budget.reserved == 0 and budget.used <= cap and budget.overruns == 0
    assert budget.calls == len(ledger.rows)
    assert sum(r["input_tokens"] + r["output_tokens"] for r in ledger.rows if r["status"] == "ok") <= budget.used
    assert spent_in_shares <= left


class GreedyModel(RandomUsageModel):
    """Bills the most each request allows: the greediest pair there can be."""

    def complete(self, request: ModelRequest) -> Completion:
        return Completion("", (), "end_turn", Usage(input_token_bound(request), request.max_output_tokens), "m")


def test_a_pair_on_its_share_cannot_starve_the_others():
    """Sequential order used to let the first pair spend everything; with shares the last pair gets
    exactly what the first got."""
    budget = Budget(30000, min_output_tokens=100)
    with budget.shares(3) as shares:
        greedy = GreedyModel(1, shares[0])
        while True:
            try:
                shares[0].complete(greedy, request(100, 4000))
            except BudgetExhausted:
                break
        assert shares[0].used <= 10000 and shares[2].remaining == 10000
    assert budget.reserved == 0 and budget.used == shares[0].used
