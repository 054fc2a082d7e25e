"""The three wire protocols, server side: parse a request body into neutral messages, render a
`Completion` (or an error) the way each provider would.

Only what TestHelix's own adapters and the SDKs need is covered: text, tool calls, tool results,
usage (with the cached parts), stop reasons, and Responses reasoning items (which a client must
carry back between tool steps; the server counts the ones it receives).
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from testhelix.llm.base import Completion, Message, ModelRequest, Role, ToolCall, ToolSpec

PROTOCOLS = ("chat", "responses", "messages")
DEFAULT_MAX_TOKENS = 4096


class WireError(ValueError):
    """The request body is not a valid request of its protocol (answered with HTTP 400)."""


@dataclass(frozen=True)
class Parsed:
    request: ModelRequest
    model: str                    # the model id the client asked for
    reasoning_items_in: int = 0   # Responses reasoning items the client carried back


def _text(content: Any) -> str:
    """Message content as text: a string, or a list of text parts of any of the three protocols."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    raise WireError(f"message content must be a string or a list of parts, got {type(content).__name__}")


def _settings(body: dict) -> tuple:
    return (("temperature", body["temperature"]),) if body.get("temperature") is not None else ()


def _max_tokens(body: dict, *names: str) -> int:
    for name in names:
        if body.get(name) is not None:
            value = body[name]
            if not isinstance(value, int) or value < 1:
                raise WireError(f"{name} must be a positive integer, got {value!r}")
            return value
    return DEFAULT_MAX_TOKENS


# --- OpenAI Chat Completions -------------------------------------------------------------------

def parse_chat(body: dict) -> Parsed:
    msgs = body.get("messages")
    if not isinstance(msgs, list) or not msgs:
        raise WireError("messages must be a non-empty list")
    out: list[Message] = []
    for m in msgs:
        role = m.get("role")
        if role in ("system", "developer"):
            out.append(Message("system", _text(m.get("content"))))
        elif role == "user":
            out.append(Message("user", _text(m.get("content"))))
        elif role == "assistant":
            calls = tuple(ToolCall.from_json_text(c["id"], c["function"]["name"], c["function"].get("arguments"))
                          for c in m.get("tool_calls") or ())
            out.append(Message("assistant", _text(m.get("content")), tool_calls=calls))
        elif role == "tool":
            out.append(Message("tool", _text(m.get("content")), tool_call_id=m.get("tool_call_id")))
        else:
            raise WireError(f"unknown message role {role!r}")
    tools = tuple(ToolSpec(t["function"]["name"], t["function"].get("description", ""),
                           t["function"].get("parameters", {})) for t in body.get("tools") or ())
    limit = _max_tokens(body, "max_completion_tokens", "max_tokens")
    return Parsed(ModelRequest(tuple(out), tools, limit, _settings(body)), str(body.get("model", "")))


def render_chat(c: Completion, model: str, usage: dict | None, *, empty_choices: bool = False) -> dict:
    calls = [{"id": t.id, "type": "function", "function": {"name": t.name, "arguments": _args(t)}}
             for t in c.tool_calls]
    message: dict[str, Any] = {"role": "assistant", "content": c.text or None}
    if calls:
        message["tool_calls"] = calls
    finish = {"tool_use": "tool_calls", "max_tokens": "length", "refusal": "content_filter"}.get(c.stop_reason, "stop")
    body: dict[str, Any] = {"id": f"chatcmpl-{uuid.uuid4().hex[:12]}", "object": "chat.completion",
                            "created": int(time.time()), "model": model,
                            "choices": [] if empty_choices else [{"index": 0, "message": message,
                                                                  "finish_reason": finish}]}
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage["input"], "completion_tokens": usage["output"],
                         "total_tokens": usage["input"] + usage["output"],
                         "prompt_tokens_details": {"cached_tokens": usage["cache_read"]}}
    return body


# --- OpenAI Responses --------------------------------------------------------------------------

# Responses API message roles -> neutral roles (a "developer" message is a system message)
_INPUT_ROLES: dict[str, Role] = {"developer": "system", "system": "system", "user": "user", "assistant": "assistant"}


def parse_responses(body: dict) -> Parsed:
    out: list[Message] = []
    if body.get("instructions"):
        out.append(Message("system", _text(body["instructions"])))
    items = body.get("input")
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list) or not items:
        raise WireError("input must be a string or a non-empty list of items")
    reasoning = 0
    for item in items:
        kind = item.get("type", "message")
        if kind == "reasoning":
            reasoning += 1
        elif kind == "function_call":
            call = ToolCall.from_json_text(item["call_id"], item["name"], item.get("arguments"))
            if out and out[-1].role == "assistant":
                out[-1] = Message("assistant", out[-1].content, tool_calls=out[-1].tool_calls + (call,))
            else:
                out.append(Message("assistant", "", tool_calls=(call,)))
        elif kind == "function_call_output":
            out.append(Message("tool", _text(item.get("output")), tool_call_id=item.get("call_id")))
        elif kind == "message":
            given = item.get("role")
            role = _INPUT_ROLES.get(given) if isinstance(given, str) else None
            if role is None:
                raise WireError(f"unknown input item role {given!r}")
            out.append(Message(role, _text(item.get("content"))))
        else:
            raise WireError(f"unknown input item type {kind!r}")
    tools = tuple(ToolSpec(t["name"], t.get("description", ""), t.get("parameters", {}))
                  for t in body.get("tools") or () if t.get("type") == "function")
    limit = _max_tokens(body, "max_output_tokens")
    return Parsed(ModelRequest(tuple(out), tools, limit, _settings(body)), str(body.get("model", "")), reasoning)


def render_responses(c: Completion, model: str, usage: dict | None) -> dict:
    output: list[dict] = []
    if c.tool_calls:
        # A reasoning item precedes tool calls, as reasoning models send it; the client must carry it
        # back with the call outputs (the server counts those it gets).
        output.append({"type": "reasoning", "id": f"rs_{uuid.uuid4().hex[:12]}", "summary": [],
                       "encrypted_content": "served-reasoning-placeholder"})
    if c.text:
        output.append({"type": "message", "id": f"msg_{uuid.uuid4().hex[:12]}", "role": "assistant",
                       "status": "completed",
                       "content": [{"type": "output_text", "text": c.text, "annotations": []}]})
    output += [{"type": "function_call", "id": f"fc_{uuid.uuid4().hex[:12]}", "call_id": t.id, "name": t.name,
                "arguments": _args(t), "status": "completed"} for t in c.tool_calls]
    truncated = c.stop_reason == "max_tokens"
    body: dict[str, Any] = {
        "id": f"resp_{uuid.uuid4().hex[:12]}", "object": "response", "created_at": int(time.time()),
        "model": model, "status": "incomplete" if truncated else "completed", "output": output,
        "incomplete_details": {"reason": "max_output_tokens"} if truncated else None,
        "parallel_tool_calls": True, "tool_choice": "auto", "tools": []}
    if usage is not None:
        body["usage"] = {"input_tokens": usage["input"], "output_tokens": usage["output"],
                         "total_tokens": usage["input"] + usage["output"],
                         "input_tokens_details": {"cached_tokens": usage["cache_read"]},
                         "output_tokens_details": {"reasoning_tokens": 0}}
    return body


# --- Anthropic Messages ------------------------------------------------------------------------

def parse_messages(body: dict) -> Parsed:
    out: list[Message] = []
    system = body.get("system")
    if system:
        out.append(Message("system", _text(system)))
    turns = body.get("messages")
    if not isinstance(turns, list) or not turns:
        raise WireError("messages must be a non-empty list")
    for turn in turns:
        role, content = turn.get("role"), turn.get("content")
        if role not in ("user", "assistant"):
            raise WireError(f"unknown message role {role!r}")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or ())
        if role == "assistant":
            calls = tuple(_anthropic_call(b) for b in blocks if b.get("type") == "tool_use")
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            out.append(Message("assistant", text, tool_calls=calls))
            continue
        for b in blocks:
            if b.get("type") == "tool_result":
                out.append(Message("tool", _text(b.get("content")), tool_call_id=b.get("tool_use_id")))
            elif b.get("type") == "text":
                out.append(Message("user", b.get("text", "")))
    tools = tuple(ToolSpec(t["name"], t.get("description", ""), t.get("input_schema", {}))
                  for t in body.get("tools") or ())
    if not isinstance(body.get("max_tokens"), int):
        raise WireError("max_tokens is required and must be an integer")
    limit = _max_tokens(body, "max_tokens")
    return Parsed(ModelRequest(tuple(out), tools, limit, _settings(body)), str(body.get("model", "")))


def _anthropic_call(block: dict) -> ToolCall:
    value = block.get("input")
    if isinstance(value, dict):
        return ToolCall(block["id"], block["name"], dict(value), raw_arguments=json.dumps(value))
    return ToolCall(block["id"], block["name"], None, raw_arguments=repr(value), error="input is not an object")


def render_messages(c: Completion, model: str, usage: dict | None) -> dict:
    content: list[dict] = [{"type": "text", "text": c.text}] if c.text else []
    for t in c.tool_calls:
        if t.arguments is not None:
            value: Any = t.arguments
        else:   # a wrong-arguments fault: the Messages protocol carries objects, so send a string
            value = t.raw_arguments
        content.append({"type": "tool_use", "id": t.id, "name": t.name, "input": value})
    stop = {"tool_use": "tool_use", "max_tokens": "max_tokens", "refusal": "refusal"}.get(c.stop_reason, "end_turn")
    u = usage or {"input": 0, "output": 0, "cache_read": 0}
    return {"id": f"msg_{uuid.uuid4().hex[:12]}", "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": u["input"] - u["cache_read"], "output_tokens": u["output"],
                      "cache_read_input_tokens": u["cache_read"], "cache_creation_input_tokens": 0}}


# --- errors ----------------------------------------------------------------------------------------

_ANTHROPIC_ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
                          404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
                          500: "api_error", 529: "overloaded_error"}


def render_error(protocol: str, status: int, message: str, code: str | None = None) -> dict:
    if protocol == "messages":
        return {"type": "error", "error": {"type": _ANTHROPIC_ERROR_TYPES.get(status, "api_error"),
                                           "message": message}}
    return {"error": {"message": message, "type": "server_error" if status >= 500 else "invalid_request_error",
                      "code": code}}


def _args(t: ToolCall) -> str:
    return t.raw_arguments if t.arguments is None or t.error else json.dumps(t.arguments)


PARSERS = {"chat": parse_chat, "responses": parse_responses, "messages": parse_messages}
