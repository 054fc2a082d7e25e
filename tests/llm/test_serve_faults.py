"""`testhelix serve` through the real SDKs over 127.0.0.1: the three wire protocols, and every
scripted fault for each of them, checked at the Budget (what is raised, charged and recorded)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from testhelix.agent.budget import Budget, Deadline, DeadlineExceeded, MemoryLedger, input_token_bound
from testhelix.agent.prompts import PublicTask, session_messages
from testhelix.agent.tools import TOOL_SPECS
from testhelix.llm.base import (
    ContextOverflowError,
    Message,
    ModelAuthError,
    ModelOutputError,
    ModelRequest,
    ModelUnavailable,
)
from testhelix.llm.registry import create_model, model_ref
from testhelix.llm.serve.faults import Fault, parse_fault
from testhelix.llm.serve.server import ModelServer
from testhelix.strategy.model import initial_strategy
from testhelix.tasks.task import load_task

SIM_TASK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01"
PROTOCOLS = ("chat", "responses", "messages")


@pytest.fixture(scope="module")
def task():
    return load_task(SIM_TASK)


@pytest.fixture(scope="module")
def server(task):
    with ModelServer("sim:weak", tasks=[task], seed=3) as s:
        yield s


@pytest.fixture(autouse=True)
def _clean_script(server):
    server.faults.replace([])
    yield
    server.faults.replace([])


def model_for(protocol: str, server: ModelServer, monkeypatch, **kw):
    """Each protocol the way a user reaches it: a compatible name, or a provider SDK by base URL."""
    if protocol == "chat":
        return create_model(model_ref(f"openai-compatible:sim@{server.url}/v1"), **kw)
    if protocol == "responses":
        monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "test-key")
        return create_model(model_ref("openai:gpt-5.6-sol"), **kw)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    return create_model(model_ref("anthropic:claude-haiku-4-5"), **kw)


def generation_request(task, max_tokens: int = 1000) -> ModelRequest:
    msgs = session_messages(initial_strategy(), PublicTask.of(task), phase="generation", direction="the exact case")
    return ModelRequest(tuple(msgs), TOOL_SPECS, max_tokens)


def budget(cap: int = 10**6, **kw) -> Budget:
    return Budget(cap, run_label="t", task_id="x", sink=MemoryLedger(), **kw)


def ledger_rows(b: Budget) -> list[dict]:
    """The rows `b` recorded: budget() gives every Budget a MemoryLedger."""
    assert isinstance(b.sink, MemoryLedger)
    return b.sink.rows


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_all_three_protocols_answer_through_the_sdks(protocol, server, task, monkeypatch):
    b = budget()
    before = server.snapshot()["requests"][protocol]
    answer = b.complete(model_for(protocol, server, monkeypatch), generation_request(task))
    assert answer.tool_calls and answer.stop_reason == "tool_use"
    assert answer.usage.reported and answer.usage.input_tokens > 0
    assert server.snapshot()["requests"][protocol] == before + 1
    row = ledger_rows(b)[0]
    assert row["status"] == "ok" and row["simulated"] is True        # the served model says it is simulated
    assert row["charged_tokens"] == b.used == answer.usage.total_tokens and row["retries"] == 0


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("code,cause", [(429, "rate_limited"), (500, "server_error"), (529, "overloaded")])
def test_persistent_errors_outlast_the_sdk_retries_and_cost_nothing(protocol, code, cause, server, task, monkeypatch):
    server.faults.replace([Fault("status", code=code, retry_after=0.01, times=0)])
    b = budget()
    with pytest.raises(ModelUnavailable) as info:
        b.complete(model_for(protocol, server, monkeypatch, max_retries=2), generation_request(task))
    assert info.value.cause == cause and info.value.billed is False
    row = ledger_rows(b)[0]
    assert (row["status"], row["retries"], row["charged_tokens"], b.used) == ("error", 2, 0, 0)
    assert row["retry_causes"] == ",".join([str(code)] * 3)


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_transient_429_is_retried_by_the_sdk_and_recorded(protocol, server, task, monkeypatch):
    # the server asks for 100 s; the wait is capped at 0.2 s
    server.faults.replace([Fault("status", code=429, retry_after=100, times=1)])
    b = budget()
    started = time.monotonic()
    answer = b.complete(model_for(protocol, server, monkeypatch, max_retry_wait_s=0.2), generation_request(task))
    assert answer.tool_calls and time.monotonic() - started < 5
    row = ledger_rows(b)[0]
    assert (row["status"], row["retries"], row["retry_causes"]) == ("ok", 1, "429")
    assert 0.1 <= row["retry_wait_s"] < 2


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_the_working_deadline_holds_during_a_stalled_call(protocol, server, task, monkeypatch):
    server.faults.replace([Fault("stall", seconds=4, times=0)])
    b = budget(deadline=Deadline(1.0))
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded):
        b.complete(model_for(protocol, server, monkeypatch), generation_request(task))
    assert time.monotonic() - started < 3.5           # not the 4 s stall, nor 3 x 4 s of retries
    row = ledger_rows(b)[0]
    assert row["status"] == "error" and row["charged_tokens"] == b.used > 0     # unknown billing: reservation kept


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_call_timeout_option_makes_a_stall_a_timeout(protocol, server, task, monkeypatch):
    server.faults.replace([Fault("stall", seconds=3, times=0)])
    b = budget(call_timeout_s=0.5)
    with pytest.raises(ModelUnavailable) as info:
        b.complete(model_for(protocol, server, monkeypatch, max_retries=0), generation_request(task))
    assert info.value.cause == "timeout"


@pytest.mark.parametrize("protocol", PROTOCOLS)
@pytest.mark.parametrize("kind", ["malformed", "html"])
def test_unreadable_200_bodies_are_output_errors(protocol, kind, server, task, monkeypatch):
    server.faults.replace([Fault(kind, times=0)])
    b = budget()
    with pytest.raises(ModelOutputError) as info:
        b.complete(model_for(protocol, server, monkeypatch), generation_request(task))
    assert info.value.cause == "malformed_response"
    assert ledger_rows(b)[0]["status"] == "error" and b.used == ledger_rows(b)[0]["charged_tokens"]


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_empty_answers(protocol, server, task, monkeypatch):
    server.faults.replace([Fault("empty")])
    b = budget()
    model = model_for(protocol, server, monkeypatch)
    if protocol == "chat":                  # no choices at all: nothing to read
        with pytest.raises(ModelOutputError, match="no choices"):
            b.complete(model, generation_request(task))
    else:                                   # an empty turn is an answer (the loop calls it a format error)
        answer = b.complete(model, generation_request(task))
        assert answer.text == "" and answer.tool_calls == ()


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_oversized_reply_is_cut_and_charged_within_the_reservation(protocol, server, task, monkeypatch):
    server.faults.replace([Fault("oversized", size=300_000)])
    b = budget()
    request = generation_request(task, max_tokens=500)
    answer = b.complete(model_for(protocol, server, monkeypatch), request)
    total = len(answer.text) + sum(len(c.raw_arguments) for c in answer.tool_calls)
    assert total <= 500 * 8 and answer.stop_reason == "max_tokens"
    row = ledger_rows(b)[0]
    assert "oversized reply" in row["anomaly"] and "usage above" in row["anomaly"] and b.anomalies == 2
    # a tool call whose arguments were cut is never acted on
    assert all(c.arguments is None for c in answer.tool_calls if "dropped" in (c.error or ""))
    assert b.used <= input_token_bound(request) + 500 and row["output_tokens"] <= 500


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_a_lying_server_cannot_overspend_the_cap(protocol, server, task, monkeypatch):
    request = generation_request(task, max_tokens=500)
    cap = input_token_bound(request) + 600
    server.faults.replace([Fault("inflated", factor=1000, times=0)])
    b = budget(cap)
    b.complete(model_for(protocol, server, monkeypatch), request)
    row = ledger_rows(b)[0]
    assert "usage above what the request allowed" in row["anomaly"]
    assert b.used <= cap and b.overruns == 0 and row["charged_tokens"] == b.used


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_missing_usage_charges_the_reservation_in_the_ledger_too(protocol, server, task, monkeypatch):
    server.faults.replace([Fault("nousage")])
    b = budget()
    request = generation_request(task, max_tokens=700)
    b.complete(model_for(protocol, server, monkeypatch), request)
    row = ledger_rows(b)[0]
    assert row["usage_reported"] is False
    assert row["input_tokens"] + row["output_tokens"] == b.used == input_token_bound(request) + 700


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_wrong_tool_arguments_become_errors_and_are_not_echoed(protocol, server, task, monkeypatch):
    server.faults.replace([Fault("badargs")])
    b = budget()
    model = model_for(protocol, server, monkeypatch)
    request = generation_request(task)
    answer = b.complete(model, request)
    assert answer.tool_calls and all(c.arguments is None and c.error for c in answer.tool_calls)
    assert ledger_rows(b)[0]["status"] == "malformed"
    # the next request carries the call back with a short note, never the broken text
    follow = request.messages + (answer.as_message(),) + tuple(
        Message("tool", "error: bad arguments", tool_call_id=c.id) for c in answer.tool_calls)
    again = b.complete(model, ModelRequest(follow, TOOL_SPECS, 1000))
    assert again.stop_reason in ("tool_use", "end_turn")


@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_context_refusal_and_rejected_key(protocol, server, task, monkeypatch):
    server.faults.replace([Fault("context"), Fault("status", code=401)])
    model = model_for(protocol, server, monkeypatch)
    with pytest.raises(ContextOverflowError):
        budget().complete(model, generation_request(task))
    with pytest.raises(ModelAuthError) as info:
        budget().complete(model, generation_request(task))
    assert info.value.fatal
    assert {"chat": "OPENAI_COMPATIBLE_API_KEY", "responses": "OPENAI_API_KEY",
            "messages": "ANTHROPIC_API_KEY"}[protocol] in str(info.value)


def test_responses_reasoning_items_are_carried_between_tool_steps(server, task, monkeypatch):
    model = model_for("responses", server, monkeypatch)
    request = generation_request(task)
    first = model.complete(request)
    assert first.metadata["reasoning_items"] and first.as_message().reasoning_items
    before = server.snapshot()["reasoning_items_in"]
    follow = request.messages + (first.as_message(),) + tuple(
        Message("tool", "ok", tool_call_id=c.id) for c in first.tool_calls)
    model.complete(ModelRequest(follow, TOOL_SPECS, 1000))
    assert server.snapshot()["reasoning_items_in"] == before + 1


def test_fault_specs_parse_and_bad_ones_are_named():
    from testhelix.core.errors import UserError

    f = parse_fault("429:retry_after=1.5,times=3")
    assert (f.kind, f.code, f.retry_after, f.times) == ("status", 429, 1.5, 3)
    assert parse_fault("stall:seconds=2").seconds == 2.0
    with pytest.raises(UserError, match="unknown fault kind 'boom'"):
        parse_fault("boom")
    with pytest.raises(UserError, match="'size' must|size must be a number"):
        parse_fault("oversized:size=big")
