"""OpenAI adapters (Chat Completions, Responses, OpenAI-compatible) against canned HTTP responses."""

from __future__ import annotations

import json

import httpx2
import pytest

from testhelix.llm.base import (
    ContextOverflowError,
    Message,
    ModelAuthError,
    ModelRequest,
    ModelUnavailable,
    ToolCall,
    ToolSpec,
)
from testhelix.llm.openai_model import OpenAIModel
from testhelix.llm.registry import create_model, model_ref

TOOL = ToolSpec("write_file", "write", {"type": "object", "properties": {"path": {"type": "string"}}})
CONVERSATION = (
    Message("system", "rules"),
    Message("user", "task"),
    Message("assistant", "", tool_calls=(ToolCall("call_1", "write_file", {"path": "suite/t.py"}),)),
    Message("tool", "wrote suite/t.py", tool_call_id="call_1"),
)


def chat_reply(tool_args='{"path": "repair/x.py"}', usage=True, finish="tool_calls"):
    body = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-5",
            "choices": [{"index": 0, "finish_reason": finish, "message": {
                "role": "assistant", "content": None,
                "tool_calls": [{"id": "call_2", "type": "function",
                                "function": {"name": "write_file", "arguments": tool_args}}]}}]}
    if usage:
        body["usage"] = {"prompt_tokens": 1200, "completion_tokens": 30, "total_tokens": 1230,
                         "prompt_tokens_details": {"cached_tokens": 1000}}
    return body


class Server:
    def __init__(self, *responses):
        self.responses = list(responses)
        self.requests: list[tuple[str, dict]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append((str(request.url), json.loads(request.content)))
        status, body = self.responses.pop(0) if len(self.responses) > 1 else self.responses[0]
        return httpx2.Response(status, json=body, headers={"retry-after-ms": "1"} if status >= 400 else {})


def make(name, server, retries=2, api_key="test-key"):
    client = httpx2.Client(transport=httpx2.MockTransport(server))
    ref = model_ref(name)    # the provider names the key variable; the model reads it
    return OpenAIModel(ref.info, key_env=ref.credential_env_vars[0], key_required=ref.credentials_required,
                       api_key=api_key, http_client=client, max_retries=retries)


def test_chat_tool_calls_both_directions_and_usage():
    server = Server((200, chat_reply()))
    out = make("openai:gpt-5", server).complete(ModelRequest(CONVERSATION, (TOOL,), 300))
    url, sent = server.requests[0]
    assert url.endswith("/chat/completions") and sent["max_completion_tokens"] == 300
    assert sent["messages"][2]["tool_calls"][0]["function"] == {"name": "write_file",
                                                                "arguments": '{"path": "suite/t.py"}'}
    assert sent["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "wrote suite/t.py"}
    assert sent["tools"][0]["function"]["name"] == "write_file"
    assert out.tool_calls == (ToolCall("call_2", "write_file", {"path": "repair/x.py"},
                                       raw_arguments='{"path": "repair/x.py"}'),)
    # prompt_tokens already INCLUDES the cached tokens
    assert (out.usage.input_tokens, out.usage.cache_read_tokens, out.usage.output_tokens) == (1200, 1000, 30)
    assert out.usage.cost_usd == pytest.approx((200 * 1.25 + 1000 * 0.125 + 30 * 10.0) / 1e6)
    assert out.stop_reason == "tool_use"


def test_malformed_tool_arguments_are_kept_as_an_error():
    server = Server((200, chat_reply(tool_args='{"path": "suite/t.py"')))
    call = make("openai:gpt-5", server).complete(ModelRequest(CONVERSATION, (TOOL,), 300)).tool_calls[0]
    assert call.arguments is None and "not valid JSON" in call.error and call.raw_arguments.startswith('{"path"')


def test_rate_limit_then_success():
    server = Server((429, {"error": {"message": "rate limited", "type": "requests", "code": None}}),
                    (200, chat_reply()))
    out = make("openai:gpt-5", server).complete(ModelRequest(CONVERSATION, (TOOL,), 300))
    assert out.tool_calls and len(server.requests) == 2


def test_server_error_storm_gives_up_cleanly():
    server = Server((503, {"error": {"message": "overloaded", "type": "server_error", "code": None}}))
    with pytest.raises(ModelUnavailable) as err:
        make("openai:gpt-5", server, retries=2).complete(ModelRequest(CONVERSATION, (TOOL,), 300))
    assert len(server.requests) == 3 and err.value.status == 503


def test_auth_and_context_errors_fail_fast():
    server = Server((401, {"error": {"message": "bad key", "type": "invalid_request_error", "code": "invalid_api_key"}}))
    with pytest.raises(ModelAuthError):
        make("openai:gpt-5", server).complete(ModelRequest(CONVERSATION, (), 10))
    assert len(server.requests) == 1
    server = Server((400, {"error": {"message": "maximum context length is 400000 tokens", "type": "invalid_request_error",
                                     "code": "context_length_exceeded"}}))
    with pytest.raises(ContextOverflowError):
        make("openai:gpt-5", server).complete(ModelRequest(CONVERSATION, (), 10))


def test_responses_api_round_trip():
    body = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-5.6-sol", "status": "completed",
            "output": [{"type": "message", "id": "m1", "role": "assistant", "status": "completed",
                        "content": [{"type": "output_text", "text": "calling", "annotations": []}]},
                       {"type": "function_call", "id": "fc1", "call_id": "call_3", "name": "write_file",
                        "arguments": '{"path": "suite/a.py"}', "status": "completed"}],
            "usage": {"input_tokens": 900, "output_tokens": 40, "total_tokens": 940,
                      "input_tokens_details": {"cached_tokens": 600, "cache_write_tokens": 0},
                      "output_tokens_details": {"reasoning_tokens": 10}}}
    server = Server((200, body))
    out = make("openai:gpt-5.6-sol", server).complete(ModelRequest(CONVERSATION, (TOOL,), 200))
    url, sent = server.requests[0]
    assert url.endswith("/responses") and sent["instructions"] == "rules" and sent["store"] is False
    assert {"type": "function_call", "call_id": "call_1", "name": "write_file",
            "arguments": '{"path": "suite/t.py"}'} in sent["input"]
    assert {"type": "function_call_output", "call_id": "call_1", "output": "wrote suite/t.py"} in sent["input"]
    assert sent["tools"][0]["name"] == "write_file" and sent["max_output_tokens"] == 200
    assert out.text == "calling" and out.tool_calls[0].arguments == {"path": "suite/a.py"}
    assert (out.usage.input_tokens, out.usage.cache_read_tokens) == (900, 600)
    assert out.usage.cost_usd is None          # no published price in the registry: unknown, not 0


def test_openai_compatible_server_by_base_url(monkeypatch):
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    server = Server((200, chat_reply(usage=False)))
    model = make("openai-compatible:qwen2.5-coder@http://127.0.0.1:8000/v1", server, api_key=None)
    out = model.complete(ModelRequest(CONVERSATION, (TOOL,), 64))
    url, sent = server.requests[0]
    assert url == "http://127.0.0.1:8000/v1/chat/completions"
    assert sent["model"] == "qwen2.5-coder" and sent["max_tokens"] == 64 and "max_completion_tokens" not in sent
    assert out.usage.reported is False and out.usage.cost_usd is None


def test_missing_openai_key(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ModelAuthError, match="OPENAI_API_KEY is not set"):
        create_model(model_ref("openai:gpt-5"))
