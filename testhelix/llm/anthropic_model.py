"""Anthropic's model class: the Messages API adapter for the neutral ChatModel protocol (its provider,
prefix and credential variable: anthropic.py).

Translation rules:
- system messages become the `system` blocks; tool observations become `tool_result` blocks in a
  user turn (consecutive observations share one turn); assistant tool calls become `tool_use` blocks.
- Prompt caching: the stable prefix (system blocks and tool definitions) carries a cache
  breakpoint, and so does the last block of the conversation, so every agent step reuses the
  prefix written by the step before.
- Usage: Anthropic's `input_tokens` EXCLUDES `cache_read_input_tokens` and
  `cache_creation_input_tokens`; the neutral `input_tokens` adds them back.
- Retries: the SDK's own `max_retries` (408/409/429/5xx, connection errors); nothing here retries.
  `CallWatch` (callwatch.py) bounds them by the call's deadline and records them.

The API key comes from the variable its provider names (anthropic.KEY_ENV, ANTHROPIC_API_KEY) or
the `api_key` argument, and is held by the SDK client only.
"""

from __future__ import annotations

from typing import Any

import anthropic

from testhelix.llm.base import (
    Completion,
    Message,
    ModelError,
    ModelRequest,
    StopReason,
    ToolCall,
    Usage,
)
from testhelix.llm.provider_protocol import price_usage
from testhelix.llm.sdk_errors import map_sdk_error
from testhelix.llm.sdk_model import SdkChatModel, served_metadata

_EPHEMERAL = {"type": "ephemeral"}
_STOP: dict[str, StopReason] = {
    "end_turn": "end_turn", "stop_sequence": "end_turn", "tool_use": "tool_use", "max_tokens": "max_tokens",
    "model_context_window_exceeded": "max_tokens", "refusal": "refusal"}


def to_anthropic(messages: tuple[Message, ...]) -> tuple[list[dict], list[dict]]:
    """Neutral messages -> (system blocks, message params)."""
    system: list[dict] = [{"type": "text", "text": m.content} for m in messages if m.role == "system"]
    turns: list[dict] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "assistant":
            blocks: list[dict] = [{"type": "text", "text": m.content}] if m.content else []
            for c in m.tool_calls:
                # invalid arguments are never echoed verbatim (strict servers refuse them): a short note
                args = c.arguments if c.arguments is not None else {"invalid_arguments": (c.error or "not JSON")[:200]}
                blocks.append({"type": "tool_use", "id": c.id, "name": c.name, "input": args})
            turns.append({"role": "assistant", "content": blocks or [{"type": "text", "text": "(no output)"}]})
            continue
        block = ({"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
                 if m.role == "tool" else {"type": "text", "text": m.content})
        if turns and turns[-1]["role"] == "user":
            turns[-1]["content"].append(block)   # observations and follow-ups share one user turn
        else:
            turns.append({"role": "user", "content": [block]})
    if system:
        system[-1]["cache_control"] = _EPHEMERAL
    if turns and turns[-1]["content"]:
        turns[-1]["content"][-1] = {**turns[-1]["content"][-1], "cache_control": _EPHEMERAL}
    return system, turns


def _tool_params(request: ModelRequest) -> list[dict]:
    tools = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in request.tools]
    if tools:
        tools[-1]["cache_control"] = _EPHEMERAL
    return tools


def map_error(err: Exception, key_env: str) -> ModelError:
    """SDK exception -> neutral error with a clear message (after the SDK's retries)."""
    return map_sdk_error(
        anthropic, err, "anthropic", auth_hint=f"check {key_env}",
        not_found="anthropic does not know the model or endpoint (HTTP 404): check the model name and "
                  "ANTHROPIC_BASE_URL",
        overflow=lambda status, code, lowered: status == 413 or (
            status == 400 and ("too long" in lowered or "context" in lowered)))


class AnthropicModel(SdkChatModel[anthropic.Anthropic]):
    """ChatModel over the Anthropic Messages API."""

    sdk = anthropic
    sdk_error = anthropic.AnthropicError

    def _connect(self, client_kwargs: dict[str, Any]) -> anthropic.Anthropic:
        return anthropic.Anthropic(**client_kwargs)

    def _map_error(self, err: Exception) -> ModelError:
        return map_error(err, self.key_env)

    def complete(self, request: ModelRequest) -> Completion:
        system, turns = to_anthropic(request.messages)
        params: dict[str, Any] = {"model": self.info.model, "messages": turns,
                                  "max_tokens": min(request.max_output_tokens, self.info.max_output_tokens)}
        if system:
            params["system"] = system
        if request.tools:
            params["tools"] = _tool_params(request)
        temperature = request.setting("temperature")
        if temperature is not None:
            params["temperature"] = temperature
        timeout = request.timeout_s or self.timeout_s
        if timeout:
            params["timeout"] = timeout
        reply, retries, served_double = self._watched(timeout, lambda: self._client.messages.create(**params))
        if not hasattr(reply, "content") or not isinstance(reply.content, list):
            raise self._not_a_response(reply, "Messages")
        answer = self._parse(reply)
        answer.metadata.update(retries=retries, **served_metadata(getattr(reply, "model", None), served_double))
        return answer

    def _parse(self, reply: Any) -> Completion:
        texts, calls = [], []
        for block in reply.content:
            if block.type == "text":
                texts.append(block.text)
            elif block.type == "tool_use":
                if isinstance(block.input, dict):
                    calls.append(ToolCall(id=block.id, name=block.name, arguments=dict(block.input)))
                else:
                    calls.append(ToolCall(id=block.id, name=block.name, arguments=None,
                                          raw_arguments=repr(block.input),
                                          error=f"tool input must be a JSON object, got {type(block.input).__name__}"))
        u = reply.usage
        if u is None or u.input_tokens is None or u.output_tokens is None:
            usage = Usage(reported=False)
        else:
            read = u.cache_read_input_tokens or 0
            write = u.cache_creation_input_tokens or 0
            total_in = u.input_tokens + read + write
            usage = Usage(input_tokens=total_in, output_tokens=u.output_tokens, cache_read_tokens=read,
                          cache_write_tokens=write,
                          cost_usd=price_usage(self.info, total_in, u.output_tokens, read, write))
        return Completion(text="".join(texts), tool_calls=tuple(calls),
                          stop_reason=_STOP.get(reply.stop_reason or "", "other"), usage=usage, model=self.name,
                          metadata={"provider_stop_reason": reply.stop_reason, "response_id": reply.id})
