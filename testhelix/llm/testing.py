"""Test doubles for the `ChatModel` protocol, for your own tests (no network, no task needed).

    from testhelix.llm.testing import FunctionModel, Reply, ScriptedModel, tool_call

    model = ScriptedModel([tool_call("write_file", {"path": "suite/test_x.py", "content": "..."}),
                           tool_call("submit", {"summary": "done"})])
    ... run the agent loop, a single-call role or your own code with `model` ...
    assert model.calls == 2 and model.requests[0].tools

    echo = FunctionModel(lambda request: f"you said: {request.messages[-1].content}")

`ScriptedModel` answers from a list, one item per call; `FunctionModel` answers with whatever a
function of the request gives (the request holds the messages, the tools, the output cap and the
caller's tags). Both keep every request they received (`requests`, `calls`), are safe to call from
several threads, and take the same kinds of replies:

    str                  a text answer (stop reason `end_turn`)
    ToolCall             one tool call (stop reason `tool_use`); `tool_call(name, args)` builds one
    Reply                text and/or several tool calls, optionally a stop reason and usage
    Completion           returned as given, apart from the test-double marks below
    BaseException        raised instead of answering (e.g. a `ModelUnavailable` to test a failure)

Like the simulated models, a test double never passes for a real model: every completion it
returns has `metadata["simulated"] = True` and `metadata["test_double"]` naming its class, and the
default model ids start with `test:`. Usage is `usage` when given (on the model or the `Reply`),
else characters / 4 of the request and of the reply; the cost is unknown (None) unless a given
`Usage` or `Completion` says otherwise.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

from testhelix.llm.base import Completion, ModelRequest, StopReason, ToolCall, Usage

__all__ = ["FunctionModel", "Reply", "ScriptExhausted", "ScriptedModel", "tool_call"]


@dataclass(frozen=True)
class Reply:
    """A scripted answer: text, tool calls, and optionally its stop reason and usage."""

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    stop_reason: StopReason | None = None      # None: tool_use when there are calls, else end_turn
    usage: Usage | None = None


ReplyLike = str | ToolCall | Reply | Completion | BaseException


class ScriptExhausted(AssertionError):
    """A ScriptedModel was called more often than its script has replies."""


def tool_call(name: str, arguments: dict | None = None, *, call_id: str | None = None) -> ToolCall:
    """A well-formed tool call, its arguments also kept as the JSON text a provider would send.
    Without `call_id` the model numbers it when answering (`call-<n>`, `call-<n>-<i>` for several)."""
    args = dict(arguments or {})
    return ToolCall(id=call_id or "", name=name, arguments=args, raw_arguments=json.dumps(args))


class _TestDouble:
    """Request recording and reply building shared by the two doubles."""

    def __init__(self, name: str, context_window: int, usage: Usage | None) -> None:
        self.name = name
        self.context_window = context_window
        self.usage = usage
        self.requests: list[ModelRequest] = []
        self._lock = threading.Lock()

    @property
    def calls(self) -> int:
        """How many times `complete` was called (failed calls included)."""
        return len(self.requests)

    def _record(self, request: ModelRequest) -> int:
        with self._lock:
            self.requests.append(request)
            return len(self.requests)

    def _answer(self, request: ModelRequest, reply: ReplyLike, number: int) -> Completion:
        if isinstance(reply, BaseException):
            raise reply
        marks = {"simulated": True, "test_double": type(self).__name__}
        if isinstance(reply, Completion):
            return replace(reply, metadata={**reply.metadata, **marks})
        if isinstance(reply, str):
            reply = Reply(text=reply)
        elif isinstance(reply, ToolCall):
            reply = Reply(tool_calls=(reply,))
        elif not isinstance(reply, Reply):
            raise TypeError(f"{type(self).__name__}: a reply must be a str, ToolCall, Reply, Completion or "
                            f"exception, got {type(reply).__name__}")
        calls = tuple(c if c.id else replace(c, id=f"call-{number}" if len(reply.tool_calls) == 1
                                             else f"call-{number}-{i}")
                      for i, c in enumerate(reply.tool_calls))
        stop: StopReason = reply.stop_reason or ("tool_use" if calls else "end_turn")
        usage = reply.usage or self.usage or _estimated_usage(request, reply.text, calls)
        return Completion(text=reply.text, tool_calls=calls, stop_reason=stop, usage=usage, model=self.name,
                          metadata=marks)


class ScriptedModel(_TestDouble):
    """Answers call n with the n-th reply of `replies`; one more call raises ScriptExhausted."""

    def __init__(self, replies: Iterable[ReplyLike], *, name: str = "test:scripted",
                 context_window: int = 100_000, usage: Usage | None = None) -> None:
        super().__init__(name, context_window, usage)
        self.replies: tuple[ReplyLike, ...] = tuple(replies)

    @property
    def remaining(self) -> int:
        """Replies not used yet."""
        return max(0, len(self.replies) - self.calls)

    def complete(self, request: ModelRequest) -> Completion:
        number = self._record(request)
        if number > len(self.replies):
            raise ScriptExhausted(f"{self.name}: call {number}, but the script has {len(self.replies)} replies")
        return self._answer(request, self.replies[number - 1], number)


class FunctionModel(_TestDouble):
    """Answers each call with `function(request)` (any reply kind; an exception returned is raised)."""

    def __init__(self, function: Callable[[ModelRequest], ReplyLike], *, name: str = "test:function",
                 context_window: int = 100_000, usage: Usage | None = None) -> None:
        super().__init__(name, context_window, usage)
        self.function = function

    def complete(self, request: ModelRequest) -> Completion:
        number = self._record(request)
        return self._answer(request, self.function(request), number)


def _estimated_usage(request: ModelRequest, text: str, calls: Sequence[ToolCall]) -> Usage:
    """Characters / 4 of the request and of the reply (the output within the request's cap)."""
    request_chars = sum(len(m.content) + sum(len(c.raw_arguments) for c in m.tool_calls)
                        for m in request.messages) + sum(len(json.dumps(t.to_dict())) for t in request.tools)
    reply_chars = len(text) + sum(len(c.raw_arguments) for c in calls)
    return Usage(input_tokens=request_chars // 4 + 1,
                 output_tokens=min(request.max_output_tokens, reply_chars // 4 + 1), cost_usd=None)
