"""OpenAI's model class: adapters for the neutral ChatModel protocol, Chat Completions and the
Responses API (its providers, prefixes and credential variables: openai.py, openai_compatible.py).

One class, `OpenAIModel`, speaks whichever protocol the registry entry names (`api = "chat"` or
`"responses"`). OpenAI-compatible servers (vLLM, Ollama, llama.cpp) use Chat Completions at their
base URL, send `max_tokens` (older servers do not know `max_completion_tokens`) and always report
cost None.

Usage: OpenAI's `prompt_tokens` / `input_tokens` already INCLUDE the cached tokens
(`*_tokens_details.cached_tokens`), so they are taken as they are. A server that sends no usage at
all yields `Usage(reported=False)` and the budget keeps its reservation.

Tool arguments arrive as JSON text; text that does not parse becomes a ToolCall with `error` set
(the agent loop answers it with an error observation).

Keys: the variable its provider names (openai.KEY_ENV for OpenAI; openai_compatible.KEY_ENV,
optional, for compatible servers).
Retries: the SDK's own `max_retries`; nothing here retries.
"""

from __future__ import annotations

import json
from typing import Any

import openai

from testhelix.llm.base import (
    Completion,
    Message,
    ModelError,
    ModelOutputError,
    ModelRequest,
    StopReason,
    ToolCall,
    Usage,
)
from testhelix.llm.provider_protocol import price_usage
from testhelix.llm.sdk_errors import map_sdk_error
from testhelix.llm.sdk_model import SdkChatModel, served_metadata

_CHAT_STOP: dict[str, StopReason] = {"stop": "end_turn", "tool_calls": "tool_use", "function_call": "tool_use",
                                     "length": "max_tokens", "content_filter": "refusal"}


def _arguments_text(call: ToolCall) -> str:
    # Invalid arguments are never echoed verbatim (strict servers answer 400): a short JSON note.
    if call.arguments is None:
        return json.dumps({"invalid_arguments": (call.error or "not a JSON object")[:200]})
    return json.dumps(call.arguments)


def to_chat(messages: tuple[Message, ...]) -> list[dict]:
    out: list[dict] = []
    for m in messages:
        if m.role == "assistant":
            d: dict[str, Any] = {"role": "assistant", "content": m.content or None}
            if m.tool_calls:
                d["tool_calls"] = [{"id": c.id, "type": "function",
                                    "function": {"name": c.name, "arguments": _arguments_text(c)}}
                                   for c in m.tool_calls]
            out.append(d)
        elif m.role == "tool":
            out.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
        else:
            out.append({"role": m.role, "content": m.content})
    return out


def to_responses_input(messages: tuple[Message, ...]) -> tuple[str, list[dict]]:
    """Neutral messages -> (instructions, input items) for the Responses API (stateless: no store)."""
    instructions = "\n\n".join(m.content for m in messages if m.role == "system")
    items: list[dict] = []
    for m in messages:
        if m.role == "user":
            items.append({"role": "user", "content": m.content})
        elif m.role == "assistant":
            items += [dict(r) for r in m.reasoning_items]     # reasoning carried between tool steps
            if m.content:
                items.append({"role": "assistant", "content": m.content})
            items += [{"type": "function_call", "call_id": c.id, "name": c.name, "arguments": _arguments_text(c)}
                      for c in m.tool_calls]
        elif m.role == "tool":
            items.append({"type": "function_call_output", "call_id": m.tool_call_id, "output": m.content})
    return instructions, items


def map_error(err: Exception, who: str, key_var: str) -> ModelError:
    return map_sdk_error(
        openai, err, who, auth_hint=f"check {key_var}",
        not_found=f"{who}: the server does not know this model or endpoint (HTTP 404): check the model name and "
                  "base URL",
        overflow=lambda status, code, lowered: code == "context_length_exceeded" or status == 413 or (
            status == 400 and ("context length" in lowered or "context window" in lowered)))


class OpenAIModel(SdkChatModel[openai.OpenAI]):
    """ChatModel over OpenAI (Chat Completions or Responses) or an OpenAI-compatible server."""

    sdk = openai
    sdk_error = openai.OpenAIError

    @property
    def _compatible(self) -> bool:
        return self.info.provider == "openai-compatible"

    def _connect(self, client_kwargs: dict[str, Any]) -> openai.OpenAI:
        if self.info.base_url:
            client_kwargs["base_url"] = self.info.base_url
        return openai.OpenAI(**client_kwargs)

    def _map_error(self, err: Exception) -> ModelError:
        return map_error(err, self.name, self.key_env)

    def complete(self, request: ModelRequest) -> Completion:
        max_out = min(request.max_output_tokens, self.info.max_output_tokens)
        timeout = request.timeout_s or self.timeout_s
        protocol = self._responses if self.info.api == "responses" else self._chat
        answer, retries, served_double = self._watched(timeout, lambda: protocol(request, max_out, timeout))
        answer.metadata.update(retries=retries, **served_metadata(answer.metadata.pop("reply_model"), served_double))
        return answer

    def _expect(self, reply: Any, attribute: str, what: str) -> None:
        """An HTML page or other text answered with HTTP 200 reaches us as a str, not a response."""
        if isinstance(reply, (str, bytes)) or not hasattr(reply, attribute):
            raise self._not_a_response(reply, what)

    # --- Chat Completions --------------------------------------------------------------------
    def _chat(self, request: ModelRequest, max_out: int, timeout: float | None) -> Completion:
        params: dict[str, Any] = {"model": self.info.model, "messages": to_chat(request.messages)}
        params["max_tokens" if self._compatible else "max_completion_tokens"] = max_out
        if request.tools:
            params["tools"] = [{"type": "function", "function": t.to_dict()} for t in request.tools]
        temperature = request.setting("temperature")
        if temperature is not None:
            params["temperature"] = temperature
        if timeout:
            params["timeout"] = timeout
        reply = self._client.chat.completions.create(**params)
        self._expect(reply, "choices", "Chat Completions")
        if not reply.choices or reply.choices[0].message is None:
            raise ModelOutputError(f"{self.name} returned no choices", billed=None)
        choice = reply.choices[0]
        calls = tuple(ToolCall.from_json_text(c.id, c.function.name, c.function.arguments)
                      for c in (choice.message.tool_calls or ()) if getattr(c, "function", None) is not None)
        u = reply.usage
        usage = (self._usage(u.prompt_tokens, u.completion_tokens, u.prompt_tokens_details)
                 if u is not None and u.prompt_tokens is not None else Usage(reported=False))
        return Completion(text=choice.message.content or "", tool_calls=calls,
                          stop_reason=_CHAT_STOP.get(choice.finish_reason or "", "other"), usage=usage,
                          model=self.name, metadata={"provider_stop_reason": choice.finish_reason,
                                                     "response_id": reply.id, "reply_model": reply.model})

    # --- Responses API -------------------------------------------------------------------------
    def _responses(self, request: ModelRequest, max_out: int, timeout: float | None) -> Completion:
        instructions, items = to_responses_input(request.messages)
        # stateless (no store): reasoning comes back encrypted so the next step can carry it
        params: dict[str, Any] = {"model": self.info.model, "input": items, "max_output_tokens": max_out,
                                  "store": False, "include": ["reasoning.encrypted_content"]}
        if timeout:
            params["timeout"] = timeout
        if instructions:
            params["instructions"] = instructions
        if request.tools:
            params["tools"] = [{"type": "function", "name": t.name, "description": t.description,
                                "parameters": t.parameters, "strict": False} for t in request.tools]
        reply = self._client.responses.create(**params)
        self._expect(reply, "output", "Responses")
        texts, calls, reasoning = [], [], []
        for item in reply.output or ():
            if item.type == "reasoning":
                reasoning.append(item.to_dict(exclude_none=True) if hasattr(item, "to_dict") else dict(item))
            elif item.type == "message":
                texts += [part.text for part in item.content if getattr(part, "type", "") == "output_text"]
            elif item.type == "function_call":
                calls.append(ToolCall.from_json_text(item.call_id, item.name, item.arguments))
        incomplete = getattr(reply.incomplete_details, "reason", None)
        stop: StopReason = (
            "max_tokens" if incomplete == "max_output_tokens" else "refusal" if incomplete == "content_filter"
            else "tool_use" if calls else "end_turn" if reply.status in (None, "completed") else "other")
        u = reply.usage
        usage = (self._usage(u.input_tokens, u.output_tokens, u.input_tokens_details)
                 if u is not None and u.input_tokens is not None else Usage(reported=False))
        meta = {"provider_stop_reason": reply.status or incomplete, "response_id": reply.id,
                "reply_model": reply.model}
        if reasoning:
            meta["reasoning_items"] = reasoning
        return Completion(text="".join(texts), tool_calls=tuple(calls), stop_reason=stop, usage=usage,
                          model=self.name, metadata=meta)

    def _usage(self, input_tokens: int, output_tokens: int, details: Any) -> Usage:
        read = (getattr(details, "cached_tokens", None) or 0) if details is not None else 0
        write = (getattr(details, "cache_write_tokens", None) or 0) if details is not None else 0
        return Usage(input_tokens=input_tokens, output_tokens=output_tokens, cache_read_tokens=read,
                     cache_write_tokens=write, cost_usd=price_usage(self.info, input_tokens, output_tokens, read, write))
