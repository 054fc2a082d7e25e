"""Server-sent events for the three protocols, built from the non-streaming body of the same reply.

A streamed reply is the rendered JSON body (wire.py) cut into the events each protocol sends, so
streaming and non-streaming can never disagree on text, tool calls, stop reason or usage: the
stream is derived from the very body a non-streaming client would get.

- Chat Completions: `data: {chunk}` lines, text and tool arguments in pieces, then `data: [DONE]`;
  usage arrives in a last chunk with no choices when the client asked for it
  (`stream_options.include_usage`), as OpenAI does.
- Responses: typed events (`response.created`, `response.output_item.added`,
  `response.output_text.delta`, `response.function_call_arguments.delta`, ..., `response.completed`)
  with sequence numbers.
- Messages: `message_start`, `content_block_start` / `_delta` / `_stop` per block (text deltas,
  `input_json_delta` for tool input), `message_delta` with the stop reason and output tokens,
  `message_stop`.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

PIECE = 16   # characters per delta: small, so clients really accumulate across events


def _pieces(text: str) -> list[str]:
    return [text[i:i + PIECE] for i in range(0, len(text), PIECE)]


def _sse(data: Any, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    payload = data if isinstance(data, str) else json.dumps(data)
    return f"{head}data: {payload}\n\n".encode()


def stream_body(protocol: str, body: dict, *, include_usage: bool = False) -> bytes:
    """The whole event stream of one rendered reply (sent with a content-length, then closed)."""
    if protocol == "chat":
        return b"".join(_chat_events(body, include_usage))
    if protocol == "responses":
        return b"".join(_responses_events(body))
    return b"".join(_messages_events(body))


# --- OpenAI Chat Completions -------------------------------------------------------------------

def _chat_events(body: dict, include_usage: bool) -> Iterator[bytes]:
    head = {k: body[k] for k in ("id", "created", "model")} | {"object": "chat.completion.chunk"}

    def chunk(delta: dict, finish: str | None = None) -> bytes:
        return _sse({**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    for choice in body["choices"][:1]:
        message = choice["message"]
        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(message.get("content") or ""):
            yield chunk({"content": piece})
        for i, call in enumerate(message.get("tool_calls") or ()):
            args = call["function"]["arguments"]
            yield chunk({"tool_calls": [{"index": i, "id": call["id"], "type": "function",
                                         "function": {"name": call["function"]["name"], "arguments": ""}}]})
            for piece in _pieces(args):
                yield chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
        yield chunk({}, choice["finish_reason"])
    if include_usage and "usage" in body:
        yield _sse({**head, "choices": [], "usage": body["usage"]})
    yield _sse("[DONE]")


# --- OpenAI Responses --------------------------------------------------------------------------

def _responses_events(body: dict) -> Iterator[bytes]:
    seq = iter(range(10**9))

    def event(kind: str, **fields: Any) -> bytes:
        return _sse({"type": kind, "sequence_number": next(seq), **fields}, kind)

    opening = {**copy.deepcopy(body), "status": "in_progress", "output": [], "incomplete_details": None}
    opening.pop("usage", None)
    yield event("response.created", response=opening)
    yield event("response.in_progress", response=opening)
    for index, item in enumerate(body["output"]):
        if item["type"] == "message":
            yield event("response.output_item.added", output_index=index,
                        item={**item, "status": "in_progress", "content": []})
            for c_index, part in enumerate(item["content"]):
                where = {"item_id": item["id"], "output_index": index, "content_index": c_index}
                yield event("response.content_part.added", **where, part={**part, "text": ""})
                for piece in _pieces(part.get("text", "")):
                    yield event("response.output_text.delta", **where, delta=piece, logprobs=[])
                yield event("response.output_text.done", **where, text=part.get("text", ""), logprobs=[])
                yield event("response.content_part.done", **where, part=part)
        elif item["type"] == "function_call":
            yield event("response.output_item.added", output_index=index,
                        item={**item, "status": "in_progress", "arguments": ""})
            where = {"item_id": item["id"], "output_index": index}
            for piece in _pieces(item["arguments"]):
                yield event("response.function_call_arguments.delta", **where, delta=piece)
            yield event("response.function_call_arguments.done", **where, name=item["name"],
                        arguments=item["arguments"])
        else:   # a reasoning item arrives whole
            yield event("response.output_item.added", output_index=index, item=item)
        yield event("response.output_item.done", output_index=index, item=item)
    yield event("response.incomplete" if body["status"] == "incomplete" else "response.completed", response=body)


# --- Anthropic Messages --------------------------------------------------------------------------

def _messages_events(body: dict) -> Iterator[bytes]:
    usage = body.get("usage") or {}
    start = {**body, "content": [], "stop_reason": None, "stop_sequence": None,
             "usage": {**usage, "output_tokens": min(1, usage.get("output_tokens", 0))}}
    yield _sse({"type": "message_start", "message": start}, "message_start")
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            yield _sse({"type": "content_block_start", "index": index, "content_block": {"type": "text", "text": ""}},
                       "content_block_start")
            for piece in _pieces(block["text"]):
                yield _sse({"type": "content_block_delta", "index": index,
                            "delta": {"type": "text_delta", "text": piece}}, "content_block_delta")
        else:
            value = block["input"]
            yield _sse({"type": "content_block_start", "index": index,
                        "content_block": {**block, "input": {}}}, "content_block_start")
            text = json.dumps(value) if isinstance(value, dict) else str(value)
            for piece in _pieces(text):
                yield _sse({"type": "content_block_delta", "index": index,
                            "delta": {"type": "input_json_delta", "partial_json": piece}}, "content_block_delta")
        yield _sse({"type": "content_block_stop", "index": index}, "content_block_stop")
    yield _sse({"type": "message_delta", "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": usage.get("output_tokens", 0)}}, "message_delta")
    yield _sse({"type": "message_stop"}, "message_stop")
