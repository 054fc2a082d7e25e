"""Registry names and prices, and the fault-injecting wrapper."""

from __future__ import annotations

import pytest

from testhelix.core.errors import UserError
from testhelix.llm.base import Message, ModelRequest, ModelUnavailable, Usage
from testhelix.llm.faults import FaultyModel
from testhelix.llm.provider_protocol import price_usage
from testhelix.llm.registry import create_model, model_ref
from testhelix.llm.sim.profiles import SimProfile, get_profile, register_profile
from testhelix.llm.testing import FunctionModel, Reply, tool_call


def test_names_aliases_and_compatible_servers():
    assert model_ref("opus").info.name == "anthropic:claude-opus-4-6"
    assert model_ref("gpt-5.6-sol").info.api == "responses"
    info = model_ref("openai-compatible:llama3.1:8b@http://127.0.0.1:11434/v1").info
    assert (info.model, info.base_url, info.prices) == ("llama3.1:8b", "http://127.0.0.1:11434/v1", None)
    with pytest.raises(UserError, match="unknown model"):
        model_ref("nope:claude-opus-4-6")
    assert model_ref("anthropic:claude-opus-4.6").info.prices is None   # any model id runs, unpriced
    with pytest.raises(UserError, match="sim:strong"):
        model_ref("sim:nobody")
    with pytest.raises(UserError, match="needs the task"):
        create_model(model_ref("sim:strong"))


def test_prices_and_unknown_cost():
    opus = model_ref("opus").info
    assert price_usage(opus, 1_000_000, 0) == pytest.approx(5.0)
    assert price_usage(opus, 1_000_000, 1_000_000, cache_read_tokens=1_000_000) == pytest.approx(0.5 + 25.0)
    assert price_usage(model_ref("openai:gpt-5.6-sol").info, 1000, 1000) is None


def test_profiles_can_be_registered():
    register_profile(SimProfile(name="test-sloppy", base_skill=0.1, repair_skill=0.2, diagnosis=0.2,
                                step_efficiency=0.5, review_accuracy=0.3))
    assert get_profile("test-sloppy").base_skill == 0.1 and model_ref("sim:test-sloppy").info.provider == "sim"
    with pytest.raises(ValueError):
        SimProfile(name="bad", base_skill=1.5, repair_skill=0, diagnosis=0, step_efficiency=0, review_accuracy=0)


def counting(name: str = "anthropic:claude-opus-4-6") -> FunctionModel:
    """Answers differently every time it is really called (`calls` counts them)."""
    model = FunctionModel(lambda request: Reply(f"answer {model.calls}",
                                                (tool_call("submit", {"summary": str(model.calls)}, call_id="c"),)),
                          name=name, context_window=1000, usage=Usage(100, 10, cost_usd=0.002))
    return model


REQ = ModelRequest((Message("user", "hello"),), (), 100)


def test_fault_wrapper_is_deterministic_and_counts():
    def run(seed):
        model = FaultyModel(counting(), rate=0.5, seed=seed)
        out = []
        for _ in range(40):
            try:
                answer = model.complete(REQ)
                out.append("malformed" if answer.tool_calls[0].error else "ok")
            except ModelUnavailable as err:
                out.append(f"error:{err.status}:{err.billed}")
        return out, model.injected

    first, injected = run(4)
    assert first == run(4)[0]
    assert first.count("malformed") == injected["malformed"]
    assert sum(o.startswith("error") for o in first) == injected["rate_limit"] + injected["server"] + injected["timeout"]
    assert 8 <= sum(injected.values()) <= 32
    with pytest.raises(ValueError):
        FaultyModel(counting(), rate=1.5)
