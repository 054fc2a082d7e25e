"""`testhelix serve` streaming, /v1/models and count_tokens through the official openai and anthropic
SDKs on 127.0.0.1, and a run through a served simulated model labelled simulated everywhere."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from testhelix.agent.budget import Budget, MemoryLedger
from testhelix.agent.prompts import PublicTask, session_messages
from testhelix.agent.tools import TOOL_SPECS
from testhelix.llm.anthropic_model import _tool_params, to_anthropic
from testhelix.llm.base import SIMULATED_HEADER, ModelRequest
from testhelix.llm.openai_model import to_chat, to_responses_input
from testhelix.llm.registry import create_model, model_ref
from testhelix.llm.serve.server import ModelServer
from testhelix.strategy.model import initial_strategy
from testhelix.tasks.task import load_task

SIM_TASK = Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01"


@pytest.fixture(scope="module")
def task():
    return load_task(SIM_TASK)


@pytest.fixture(scope="module")
def server(task):
    with ModelServer("sim:weak", tasks=[task], seed=3) as s:
        yield s


@pytest.fixture(scope="module")
def messages(task):
    return tuple(session_messages(initial_strategy(), PublicTask.of(task), phase="generation",
                                  direction="the exact case"))


def oai(server) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{server.url}/v1", api_key="k", max_retries=0)


def ant(server) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=server.url, api_key="k", max_retries=0)


def test_chat_completions_stream_equals_the_plain_reply(server, messages):
    params: dict[str, Any] = {"model": "m", "messages": to_chat(messages), "max_completion_tokens": 2000,
              "tools": [{"type": "function", "function": t.to_dict()} for t in TOOL_SPECS]}
    plain = oai(server).chat.completions.create(**params)
    chunks = list(oai(server).chat.completions.create(**params, stream=True, stream_options={"include_usage": True}))
    assert len(chunks) > 3
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    calls: dict[int, dict] = {}
    for c in chunks:
        for tc in (c.choices[0].delta.tool_calls or ()) if c.choices else ():
            entry = calls.setdefault(tc.index, {"id": None, "name": None, "arguments": ""})
            entry["id"] = tc.id or entry["id"]
            entry["name"] = (tc.function.name if tc.function else None) or entry["name"]
            entry["arguments"] += (tc.function.arguments or "") if tc.function else ""
    message = plain.choices[0].message
    assert message.tool_calls, "the generation step of the simulated agent calls a tool"
    assert text == (message.content or "")
    assert [(c["id"], c["name"], json.loads(c["arguments"])) for c in calls.values()] == \
        [(t.id, t.function.name, json.loads(t.function.arguments)) for t in message.tool_calls]
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == [plain.choices[0].finish_reason]
    assert chunks[-1].usage.prompt_tokens == plain.usage.prompt_tokens
    assert plain.model == chunks[0].model == "sim:weak"


def test_responses_stream_equals_the_plain_reply(server, messages):
    instructions, items = to_responses_input(messages)
    params: dict[str, Any] = {"model": "m", "input": items, "instructions": instructions, "max_output_tokens": 2000,
              "tools": [{"type": "function", "name": t.name, "description": t.description,
                         "parameters": t.parameters, "strict": False} for t in TOOL_SPECS]}
    plain = oai(server).responses.create(**params)
    with oai(server).responses.stream(**params) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert "response.output_text.delta" in kinds or "response.function_call_arguments.delta" in kinds
    assert kinds[0] == "response.created" and kinds[-1] == "response.completed"

    def calls(r):
        return [(i.call_id, i.name, json.loads(i.arguments)) for i in r.output if i.type == "function_call"]
    assert calls(plain) and calls(final) == calls(plain)
    assert final.output_text == plain.output_text
    assert final.usage is not None and plain.usage is not None
    assert final.usage.input_tokens == plain.usage.input_tokens


def test_messages_stream_equals_the_plain_reply(server, messages):
    system, turns = to_anthropic(messages)
    params: dict[str, Any] = {"model": "m", "system": system, "messages": turns, "max_tokens": 2000,
              "tools": _tool_params(ModelRequest(messages, TOOL_SPECS, 2000))}
    plain = ant(server).messages.create(**params)
    with ant(server).messages.stream(**params) as stream:
        streamed_text = "".join(stream.text_stream)
        final = stream.get_final_message()
    def blocks(m):
        return [(b.type, b.text) if b.type == "text" else (b.type, b.id, b.name, b.input) for b in m.content]
    assert any(b[0] == "tool_use" for b in blocks(plain))
    assert blocks(final) == blocks(plain)
    assert streamed_text == "".join(b.text for b in plain.content if b.type == "text")
    assert (final.stop_reason, final.usage.output_tokens, final.usage.input_tokens) == \
        (plain.stop_reason, plain.usage.output_tokens, plain.usage.input_tokens)
    raw = ant(server).messages.with_raw_response.create(**params, stream=True)
    assert raw.headers.get(SIMULATED_HEADER) == "true"


def test_models_and_count_tokens_answer_in_each_dialect(server, messages):
    assert [m.id for m in oai(server).models.list()] == ["sim:weak"]
    assert oai(server).models.retrieve("sim:weak").owned_by == "testhelix"
    assert [m.id for m in ant(server).models.list()] == ["sim:weak"]
    system, turns = to_anthropic(messages)
    dialog: dict[str, Any] = {"model": "m", "system": system, "messages": turns}  # the SDK's params, as the provider sends them
    counted = ant(server).messages.count_tokens(**dialog)
    reply = ant(server).messages.create(**dialog, max_tokens=500)
    # the estimate uses the rule the simulated model charges by, so the two agree here
    assert counted.input_tokens == reply.usage.input_tokens > 0


@pytest.mark.parametrize("name", ["anthropic:claude-haiku-4-5", "openai:gpt-5.6-sol"])
def test_project_providers_mark_a_served_simulated_reply(server, task, messages, monkeypatch, name):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.url}/v1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("OPENAI_API_KEY", "k")
    b = Budget(10**6, run_label="r", task_id=task.id, sink=MemoryLedger())
    answer = b.complete(create_model(model_ref(name)), ModelRequest(messages, TOOL_SPECS, 2000))
    assert answer.simulated and answer.metadata["served_model"] == "sim:weak"
    assert isinstance(b.sink, MemoryLedger)
    row = b.sink.rows[0]
    assert row["model"] == name and row["simulated"] is True and row["cost_usd"] is None
    assert b.simulated_calls == 1


@pytest.mark.slow
def test_a_run_through_a_served_simulated_model_is_labelled_simulated(server, task, tmp_path, monkeypatch):
    from testhelix.commands.report import render_markdown
    from testhelix.execution.executor import default_executor
    from testhelix.helix.config import get_config
    from testhelix.helix.runner import HelixRunner
    from testhelix.prism.report import collect
    from testhelix.store.runstore import RunStore
    from testhelix.strategy.model import Strategy
    from testhelix.view import render_run_report

    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    name, run_dir = "anthropic:claude-haiku-4-5", tmp_path / "run"
    executor = default_executor(workers=1)
    try:
        runner = HelixRunner(RunStore(run_dir), executor, tmp_path / "work", coverage=False,
                             model_factory=lambda model, t, seed: create_model(model))
        result = runner.run_one(task, Strategy(), get_config("A"), model_ref(name), f"{name}/A")
        store = runner.store
        assert store is not None
        assert result.detail.simulated is True
        calls = store.model_calls(f"{name}/A")
        assert calls and all(c["simulated"] and c["cost_usd"] is None for c in calls)   # the ledger
        assert store.served_by_simulation() == {f"{name}/A": name}
        report = render_markdown(collect(store))                                          # the report
        assert f"`{name}/A` used simulated models" in report
        store.close()
    finally:
        executor.close()
    out = tmp_path / "page.html"
    assert render_run_report(run_dir, out)["simulated"] is True                             # the HTML page
    assert f"{name} was answered by a simulated model" in out.read_text(encoding="utf-8")
