"""Anthropic adapter against canned HTTP responses through the SDK's own httpx2 transport."""

from __future__ import annotations

import json

import httpx2
import pytest

from testhelix.llm.anthropic import KEY_ENV
from testhelix.llm.anthropic_model import AnthropicModel
from testhelix.llm.base import (
    ContextOverflowError,
    Message,
    ModelAuthError,
    ModelRequest,
    ModelUnavailable,
    ToolCall,
    ToolSpec,
)
from testhelix.llm.registry import create_model, model_ref

TOOL = ToolSpec("read_file", "read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
FAST_RETRY = {"retry-after-ms": "1"}      # the SDK honours it: retries without real waiting


def reply(content, stop="tool_use", usage=None):
    return {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-opus-4-6",
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": usage or {"input_tokens": 100, "output_tokens": 20,
                               "cache_read_input_tokens": 1000, "cache_creation_input_tokens": 50}}


class Server:
    """A MockTransport handler that replays canned (status, body) pairs and records requests."""

    def __init__(self, *responses):
        self.responses = list(responses)
        self.requests: list[dict] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(json.loads(request.content))
        status, body = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        headers = FAST_RETRY if status >= 400 else {}
        return httpx2.Response(status, json=body, headers=headers)


def make(server, retries=2):
    client = httpx2.Client(transport=httpx2.MockTransport(server))
    return AnthropicModel(model_ref("anthropic:claude-opus-4-6").info, key_env=KEY_ENV, api_key="test-key",
                          http_client=client, max_retries=retries)


CONVERSATION = (
    Message("system", "be careful"),
    Message("user", "task"),
    Message("assistant", "looking", tool_calls=(ToolCall("tu_1", "read_file", {"path": "program/a.py"}),)),
    Message("tool", "print('hi')", tool_call_id="tu_1"),
)


def test_tool_calls_both_directions_and_usage_normalised():
    server = Server((200, reply([{"type": "text", "text": "next"},
                                 {"type": "tool_use", "id": "tu_2", "name": "read_file",
                                  "input": {"path": "suite/t.py"}}])))
    out = make(server).complete(ModelRequest(CONVERSATION, (TOOL,), 500))
    sent = server.requests[0]
    assert sent["system"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sent["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sent["tools"][0]["input_schema"]["properties"]["path"]["type"] == "string"
    assistant, user = sent["messages"][1], sent["messages"][2]
    assert assistant["content"][1] == {"type": "tool_use", "id": "tu_1", "name": "read_file",
                                       "input": {"path": "program/a.py"}}
    assert user["content"][0]["type"] == "tool_result" and user["content"][0]["tool_use_id"] == "tu_1"
    assert out.tool_calls == (ToolCall("tu_2", "read_file", {"path": "suite/t.py"}),)
    assert out.text == "next" and out.stop_reason == "tool_use"
    # input_tokens EXCLUDES cache reads/writes at Anthropic: the neutral value includes them
    assert (out.usage.input_tokens, out.usage.cache_read_tokens, out.usage.cache_write_tokens) == (1150, 1000, 50)
    expected = (100 * 5.0 + 1000 * 0.5 + 50 * 6.25 + 20 * 25.0) / 1e6
    assert out.usage.cost_usd == pytest.approx(expected)


def test_rate_limit_then_success_is_retried_by_the_sdk():
    server = Server((429, {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
                    (200, reply([{"type": "text", "text": "ok"}], stop="end_turn")))
    out = make(server).complete(ModelRequest((Message("user", "hi"),), (), 100))
    assert out.text == "ok" and out.stop_reason == "end_turn" and len(server.requests) == 2


def test_server_error_storm_gives_up_cleanly():
    server = Server((500, {"type": "error", "error": {"type": "api_error", "message": "boom"}}))
    with pytest.raises(ModelUnavailable) as err:
        make(server, retries=3).complete(ModelRequest((Message("user", "hi"),), (), 100))
    assert len(server.requests) == 4 and err.value.status == 500 and err.value.billed is False


def test_auth_error_fails_fast_without_retries():
    server = Server((401, {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}))
    with pytest.raises(ModelAuthError, match="ANTHROPIC_API_KEY"):
        make(server).complete(ModelRequest((Message("user", "hi"),), (), 100))
    assert len(server.requests) == 1


def test_context_overflow_is_named():
    server = Server((400, {"type": "error", "error": {"type": "invalid_request_error",
                                                      "message": "prompt is too long: 250000 tokens > 200000"}}))
    with pytest.raises(ContextOverflowError):
        make(server).complete(ModelRequest((Message("user", "hi"),), (), 100))


def test_malformed_tool_input_becomes_a_tool_call_error():
    server = Server((200, reply([{"type": "tool_use", "id": "tu_9", "name": "read_file", "input": "not an object"}])))
    out = make(server).complete(ModelRequest((Message("user", "hi"),), (TOOL,), 100))
    assert out.tool_calls[0].arguments is None and "JSON object" in out.tool_calls[0].error


def test_missing_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelAuthError, match="ANTHROPIC_API_KEY is not set"):
        create_model(model_ref("opus"))     # the provider names its variable to the model
