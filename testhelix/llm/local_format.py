"""How a local GGUF model is asked for a tool call, and how its reply is read back.

One chat handler, `tool_call_handler`, serves both ways of reaching a local model: in process
(testhelix/llm/local.py calls it directly) and behind llama.cpp's OpenAI-compatible server
(`python -m testhelix.llm.local_server` registers it as the chat format `testhelix-tools`). Both
therefore see the same prompt, the same grammar and the same greedy decoding, so a task gives the
same replies either way.

The prompt: the model's own chat template (from the GGUF metadata, ChatML when it has none) over
plain system / user / assistant messages. The tools are listed in the system message with their
JSON Schemas; an earlier tool call is written back as the JSON object the model produced, and a
tool result as a user message naming the call it answers (small models' templates know no tool
role).

The reply: when tools are offered, a GBNF grammar built from a JSON Schema admits exactly one
object `{"tool": NAME, "arguments": {...}}` where NAME is one of the offered tools and the
arguments follow that tool's schema. A small model cannot be trusted to produce a parseable call on
its own (see docs/design.md, "Local models"); the grammar makes every complete reply a valid call.
A reply cut at the token limit is still cut: `read_reply` turns whatever text arrived into either
one OpenAI-style tool call (possibly with unreadable arguments) or plain content, never an exception.

Decoding is greedy (temperature 0) whatever the request asks, so runs are reproducible.
"""

from __future__ import annotations

import json
import time
from typing import Any

CHAT_FORMAT = "testhelix-tools"
# A ChatML template for GGUF files that carry none (SmolLM2's own template is ChatML too).
CHATML_TEMPLATE = ("{% for message in messages %}<|im_start|>{{ message['role'] }}\n{{ message['content'] }}"
                   "<|im_end|>\n{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")
SAMPLING = {"temperature": 0.0, "top_k": 1, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.1, "seed": 0}


def call_schema(tools: list[dict]) -> dict:
    """The JSON Schema of one call to one of `tools` (OpenAI `{"type": "function", ...}` items)."""
    options = []
    for tool in tools:
        fn = tool.get("function", tool)
        params = dict(fn.get("parameters") or {"type": "object"})
        options.append({"type": "object", "properties": {"tool": {"const": fn["name"]}, "arguments": params},
                        "required": ["tool", "arguments"], "additionalProperties": False})
    return options[0] if len(options) == 1 else {"anyOf": options}


def tool_catalogue(tools: list[dict]) -> str:
    lines = ["You act only by calling tools. Reply with one JSON object "
             '{"tool": "<tool name>", "arguments": {...}} and nothing else. The tools:']
    for tool in tools:
        fn = tool.get("function", tool)
        lines.append(f"- {fn['name']}: {fn.get('description', '')} Arguments: "
                     f"{json.dumps(fn.get('parameters') or {}, separators=(',', ':'))}")
    return "\n".join(lines)


def plain_messages(messages: list[dict], tools: list[dict]) -> list[dict]:
    """OpenAI chat messages (with tool calls and tool results) as plain role/content messages."""
    names: dict[str, str] = {}
    out: list[dict] = []
    for m in messages:
        role, content = m.get("role"), m.get("content") or ""
        if role == "assistant":
            parts = [content] if content else []
            for call in m.get("tool_calls") or ():
                fn = call.get("function", {})
                names[call.get("id", "")] = fn.get("name", "")
                try:
                    args = json.loads(fn.get("arguments") or "{}")
                except json.JSONDecodeError:
                    args = fn.get("arguments")
                parts.append(json.dumps({"tool": fn.get("name"), "arguments": args}))
            out.append({"role": "assistant", "content": "\n".join(parts)})
        elif role == "tool":
            name = names.get(m.get("tool_call_id", ""), "the tool")
            out.append({"role": "user", "content": f"Result of {name}:\n{content}"})
        else:
            out.append({"role": role if role in ("system", "user") else "user", "content": content})
    if tools:
        catalogue = tool_catalogue(tools)
        if out and out[0]["role"] == "system":
            out[0] = {"role": "system", "content": out[0]["content"] + "\n\n" + catalogue}
        else:
            out.insert(0, {"role": "system", "content": catalogue})
    # Templates that require alternating turns: merge neighbours with the same role.
    merged: list[dict] = []
    for m in out:
        if merged and merged[-1]["role"] == m["role"] and m["role"] != "system":
            merged[-1] = {"role": m["role"], "content": merged[-1]["content"] + "\n\n" + m["content"]}
        else:
            merged.append(m)
    return merged


def read_reply(text: str, offered: set[str], call_id: str) -> tuple[str, list[dict]]:
    """(content, OpenAI tool calls) for what the model wrote. Text that is not a call object (prose,
    an empty reply) stays content; a call object with unreadable arguments keeps them as raw text
    (the agent loop answers with an error observation); a cut reply that names a tool becomes a call
    to it whose arguments do not parse."""
    stripped = text.strip()
    if not stripped:
        return "", []
    try:
        value = json.loads(stripped)
    except json.JSONDecodeError:
        value = None
    if isinstance(value, dict) and isinstance(value.get("tool"), str):
        args = value.get("arguments")
        raw = json.dumps(args) if isinstance(args, dict) else json.dumps(args) if args is not None else ""
        return "", [_call(call_id, value["tool"], raw)]
    if value is None and stripped.startswith("{"):
        for name in sorted(offered, key=len, reverse=True):
            if f'"tool": "{name}"' in stripped or f'"tool":"{name}"' in stripped:
                start = stripped.find('"arguments"')
                raw = stripped[stripped.find(":", start) + 1:].strip() if start >= 0 else stripped
                return "", [_call(call_id, name, raw)]
    return text, []


def _call(call_id: str, name: str, arguments: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _formatter(llama: Any) -> Any:
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter
    template = llama.metadata.get("tokenizer.chat_template") or CHATML_TEMPLATE

    def token_text(key: str) -> str:
        ident = llama.metadata.get(key)
        return llama._model.token_get_text(int(ident)) if ident is not None else ""
    return Jinja2ChatFormatter(template=template, eos_token=token_text("tokenizer.ggml.eos_token_id"),
                               bos_token=token_text("tokenizer.ggml.bos_token_id"))


def tool_call_handler(llama: Any, messages: list[dict], tools: list[dict] | None = None,
                      max_tokens: int | None = None, **_ignored: Any) -> dict:
    """A llama-cpp-python chat handler: one constrained tool call (or plain text without tools),
    answered as an OpenAI chat completion with the runtime's own token counts."""
    from llama_cpp.llama_grammar import LlamaGrammar
    tools = list(tools or [])
    prompt = _formatter(llama)(messages=plain_messages(messages, tools))
    prompt_tokens = len(llama.tokenize(prompt.prompt.encode("utf-8"), add_bos=False, special=True))
    room = llama.n_ctx() - prompt_tokens
    if room < 16:
        raise ValueError(f"Requested tokens ({prompt_tokens}) exceed context window of {llama.n_ctx()}")
    grammar = LlamaGrammar.from_json_schema(json.dumps(call_schema(tools)), verbose=False) if tools else None
    # llama.cpp reuses the longest prompt prefix it still holds from the instance's previous request,
    # and evaluating a prefix in other batches changes the floating-point results: greedy output would
    # then depend on whatever that instance (a worker thread's, or the server's) answered before. Keep
    # the cache only when this prompt continues the previous request's own text (the next step of the
    # same session); anything else starts from an empty cache, so a reply depends on its session alone.
    previous = getattr(llama, "_testhelix_last_text", None)
    if previous is None or not prompt.prompt.startswith(previous):
        llama.reset()
    out = llama.create_completion(prompt=prompt.prompt, max_tokens=min(max_tokens or room, room), grammar=grammar,
                                  stop=prompt.stop, stream=False, **SAMPLING)
    llama._testhelix_last_text = prompt.prompt + out["choices"][0]["text"]
    return chat_response(out, tools)


def chat_response(out: dict, tools: list[dict]) -> dict:
    """A llama.cpp text completion (`create_completion`'s dict) as an OpenAI chat completion: the
    text read by `read_reply`, the runtime's usage, finish reason `tool_calls` for a complete call."""
    choice = out["choices"][0]
    offered = {t.get("function", t)["name"] for t in tools}
    content, calls = read_reply(choice["text"], offered, call_id=f"call_{str(out['id'])[-12:]}")
    finish = choice.get("finish_reason") or "stop"
    if calls and finish == "stop":
        finish = "tool_calls"
    message: dict[str, Any] = {"role": "assistant", "content": content or None}
    if calls:
        message["tool_calls"] = calls
    return {"id": f"chat{out['id']}", "object": "chat.completion", "created": int(time.time()),
            "model": out.get("model", ""), "usage": out["usage"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}]}


def register() -> None:
    """Make the handler known to llama-cpp-python as the chat format `testhelix-tools` (the server
    picks a chat format by name)."""
    from llama_cpp.llama_chat_format import LlamaChatCompletionHandlerRegistry
    LlamaChatCompletionHandlerRegistry().register_chat_completion_handler(CHAT_FORMAT, tool_call_handler,
                                                                          overwrite=True)
