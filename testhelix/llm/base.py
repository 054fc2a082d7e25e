"""The provider-neutral chat-model interface: messages, tool specifications, completions, usage.

Every model TestHelix talks to (Anthropic, OpenAI, an OpenAI-compatible server, a simulated model)
implements the small `ChatModel` protocol below. The agent loop, the budget and the response cache
only ever see these neutral types; each provider module translates them to and from its SDK.

Usage is normalised the same way for every provider: `input_tokens` INCLUDES the tokens read from
and written to the prompt cache (Anthropic reports them separately, OpenAI already includes cached
tokens), `cache_read_tokens` / `cache_write_tokens` are the cached parts of that input, and
`cost_usd` is `None` whenever the price is unknown (an OpenAI-compatible server, a simulated
model, a model without prices in models.toml) -- never a made-up 0.

Errors: providers let their SDK retry transient failures (408/409/429/5xx, timeouts) with the SDK's
own `max_retries`; what is left after that surfaces as one of the `ModelError` subclasses here, so
callers never import an SDK to handle failures.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from testhelix.llm.ratelimit import RateLimiter

# The header `testhelix serve` puts on every reply a simulated model gave (llm/serve/server.py); the
# SDK-backed models read it (callwatch.py) and label such a reply simulated.
SIMULATED_HEADER = "x-testhelix-simulated"

Role = Literal["system", "user", "assistant", "tool"]
StopReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "other"]


@dataclass(frozen=True)
class ToolSpec:
    """A tool the model may call: a name, a description and a JSON Schema for its arguments."""

    name: str
    description: str
    parameters: dict[str, Any]

    def to_dict(self) -> dict:
        return {"name": self.name, "description": self.description, "parameters": self.parameters}


@dataclass(frozen=True)
class ToolCall:
    """One tool call requested by the model.

    `arguments` is the parsed JSON object, or None when the model sent something that is not a JSON
    object; then `error` says what was wrong and `raw_arguments` keeps what was sent, so the agent
    loop can answer with an error observation (the call is still charged).
    """

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    error: str | None = None

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "arguments": self.arguments,
                "raw_arguments": self.raw_arguments, "error": self.error}

    @classmethod
    def from_dict(cls, d: dict) -> ToolCall:
        return cls(id=d["id"], name=d["name"], arguments=d.get("arguments"),
                   raw_arguments=d.get("raw_arguments", ""), error=d.get("error"))

    @classmethod
    def from_json_text(cls, call_id: str, name: str, text: str | None) -> ToolCall:
        """Parse arguments sent as a JSON string (OpenAI style); keep failures as data, not raises."""
        raw = text or ""
        try:
            value = json.loads(raw) if raw.strip() else {}
        except json.JSONDecodeError as err:
            return cls(id=call_id, name=name, arguments=None, raw_arguments=raw,
                       error=f"arguments are not valid JSON: {err.msg} at position {err.pos}")
        if not isinstance(value, dict):
            return cls(id=call_id, name=name, arguments=None, raw_arguments=raw,
                       error=f"arguments must be a JSON object, got {type(value).__name__}")
        return cls(id=call_id, name=name, arguments=value, raw_arguments=raw)


@dataclass(frozen=True)
class Message:
    """One neutral chat message.

    - system / user: `content` is text.
    - assistant: `content` is the text part (may be empty) and `tool_calls` the requested calls.
    - tool: the observation for the call `tool_call_id` (one message per call).
    """

    role: Role
    content: str
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    # Provider items an assistant turn must carry back on the next request (OpenAI Responses
    # reasoning items, which reasoning models need between tool steps); other providers ignore them.
    reasoning_items: tuple[dict, ...] = ()

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            d["tool_calls"] = [c.to_dict() for c in self.tool_calls]
        if self.tool_call_id is not None:
            d["tool_call_id"] = self.tool_call_id
        if self.reasoning_items:
            d["reasoning_items"] = list(self.reasoning_items)
        return d

    @classmethod
    def from_dict(cls, d: dict) -> Message:
        return cls(role=d["role"], content=d.get("content", ""),
                   tool_calls=tuple(ToolCall.from_dict(c) for c in d.get("tool_calls", ())),
                   tool_call_id=d.get("tool_call_id"), reasoning_items=tuple(d.get("reasoning_items", ())))


@dataclass(frozen=True)
class Usage:
    """Provider-reported usage, normalised (see module docstring).

    `reported` is False when the provider sent no usage at all (some OpenAI-compatible servers):
    the token fields are then meaningless and the budget keeps its conservative reservation.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float | None = None
    reported: bool = True

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def to_dict(self) -> dict:
        return {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
                "cache_read_tokens": self.cache_read_tokens, "cache_write_tokens": self.cache_write_tokens,
                "cost_usd": self.cost_usd, "reported": self.reported}

    @classmethod
    def from_dict(cls, d: dict) -> Usage:
        return cls(input_tokens=d.get("input_tokens", 0), output_tokens=d.get("output_tokens", 0),
                   cache_read_tokens=d.get("cache_read_tokens", 0), cache_write_tokens=d.get("cache_write_tokens", 0),
                   cost_usd=d.get("cost_usd"), reported=d.get("reported", True))


@dataclass(frozen=True)
class Completion:
    """What one model call returned. `metadata` carries provider extras, e.g. `simulated: True`."""

    text: str
    tool_calls: tuple[ToolCall, ...]
    stop_reason: StopReason
    usage: Usage
    model: str
    metadata: dict[str, Any] = field(default_factory=dict)
    cache_hit: bool = False

    @property
    def simulated(self) -> bool:
        return bool(self.metadata.get("simulated"))

    def as_message(self) -> Message:
        return Message(role="assistant", content=self.text, tool_calls=self.tool_calls,
                       reasoning_items=tuple(self.metadata.get("reasoning_items", ())))

    def to_dict(self) -> dict:
        return {"text": self.text, "tool_calls": [c.to_dict() for c in self.tool_calls],
                "stop_reason": self.stop_reason, "usage": self.usage.to_dict(), "model": self.model,
                "metadata": self.metadata}

    @classmethod
    def from_dict(cls, d: dict, cache_hit: bool = False) -> Completion:
        return cls(text=d["text"], tool_calls=tuple(ToolCall.from_dict(c) for c in d["tool_calls"]),
                   stop_reason=d["stop_reason"], usage=Usage.from_dict(d["usage"]), model=d["model"],
                   metadata=dict(d.get("metadata", {})), cache_hit=cache_hit)


@dataclass(frozen=True)
class CallTags:
    """Who is calling (for the ledger and for simulated models); never sent to a real provider."""

    role: str = "generation"
    pair: int | None = None
    round: int | None = None
    step: int | None = None


@dataclass(frozen=True)
class ModelRequest:
    """One chat request. `settings` are sampling options that change the answer (e.g. temperature)."""

    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    max_output_tokens: int = 4096
    settings: tuple[tuple[str, Any], ...] = ()
    tags: CallTags = CallTags()
    timeout_s: float | None = None     # this call's client timeout, set by the Budget from the deadline

    def setting(self, name: str, default: Any = None) -> Any:
        return dict(self.settings).get(name, default)


@runtime_checkable
class ChatModel(Protocol):
    """A chat model with tools. `name` is the canonical id (`provider:model...`)."""

    name: str
    context_window: int

    def complete(self, request: ModelRequest) -> Completion: ...


@runtime_checkable
class TestDouble(Protocol):
    """A model that is a test double (`simulated = True`: the simulated models and the doubles of
    testing.py); the agent loop labels its trajectories simulated. A reply a served double gave is
    labelled by `Completion.simulated` instead."""

    simulated: bool


def is_test_double(model: object) -> bool:
    return isinstance(model, TestDouble) and bool(model.simulated)


@runtime_checkable
class RateLimited(Protocol):
    """A model that draws on a process-wide rate limiter before each call (the SDK-backed models:
    sdk_model.py; simulated models and test doubles have none). The Budget asks with isinstance."""

    rate_limiter: RateLimiter | None


# --- errors -------------------------------------------------------------------------------------

class ModelError(Exception):
    """A model call failed after the SDK's own retries.

    `billed` says whether the provider may have charged for the request: False for an HTTP error
    response (the request was refused), None when unknown (timeout, dropped connection) -- the budget
    then keeps the conservative reservation.
    """

    retryable = False
    fatal = False             # True: the job must stop at once (exit 2); nothing later can succeed
    default_cause = "error"

    def __init__(self, message: str, *, billed: bool | None = False, status: int | None = None,
                 cause: str | None = None):
        super().__init__(message)
        self.billed = billed
        self.status = status
        self.cause = cause or self.default_cause
        self.retries: dict = {}   # the SDK's retries behind this failure (count, causes, wait_s)


class ModelAuthError(ModelError):
    """Missing or rejected credentials: fail fast, retrying cannot help."""

    fatal = True
    default_cause = "auth"


class ModelConfigError(ModelError):
    """The model or endpoint is misconfigured (unknown model, 404): fail fast."""

    fatal = True
    default_cause = "config"


class ContextOverflowError(ModelError):
    """The request does not fit the model's context window."""

    default_cause = "context"


class ModelBadRequest(ModelError):
    """The provider rejected the request as malformed (4xx other than auth/limits)."""

    default_cause = "bad_request"


class ModelUnavailable(ModelError):
    """Rate limits, server errors or timeouts that outlasted the SDK's retries."""

    retryable = True
    default_cause = "unavailable"

    def __init__(self, message: str, *, billed: bool | None = False, status: int | None = None,
                 cause: str | None = None):
        super().__init__(message, billed=billed, status=status,
                         cause=cause or (unavailable_cause(status) if status else None))


class ModelOutputError(ModelError):
    """The provider answered with something the adapter cannot read."""

    default_cause = "malformed_response"


def unavailable_cause(status: int | None) -> str:
    """A short cause name for an HTTP status that outlasted the retries."""
    return {408: "timeout", 409: "conflict", 429: "rate_limited", 529: "overloaded"}.get(
        status or 0, "server_error" if (status or 0) >= 500 else "unavailable")
