"""The loop every tool-using session runs: TestHelix's generation and repair sessions
(testhelix/agent/loop.py, `AgentSession`) and AutoSaddler's three optimizer sessions
(autosaddler/optimizer_session.py, `OptimizerSession`).

A step (`step`): `trim` the history into the view sent, `query` the model once through the budget's
metered door (`Budget.complete`: reservation, cap, one ledger row), append the reply, `record` the
step, and `respond`: act on each tool call (`act`) and `observe` its result, one observation per
call. A reply without tool calls goes to `answered` (a format error for an agent, the answer for an
optimizer session). A context-length refusal goes to `refused_context`, then the view is trimmed
again and asked once more. `run_steps` takes steps up to `step_cap`; a session ends earlier by an
exception its subclass names. There is no retry layer here: the provider SDKs retry what a retry
can fix.
"""

from __future__ import annotations

from collections.abc import Sequence

from testhelix.agent.budget import Budget
from testhelix.agent.tools import Submitted, ToolError
from testhelix.llm.base import (
    CallTags,
    ChatModel,
    Completion,
    ContextOverflowError,
    Message,
    ModelRequest,
    ToolCall,
    ToolSpec,
)

SKIPPED_AFTER_SUBMIT = "skipped: the session was already submitted"


class FormatError(Exception):
    """The reply called no tool or a tool call failed (a subclass decides what that costs)."""


class ToolSession:
    """One tool-using session over `model`, metered by `budget`; see the module docstring."""

    def __init__(self, model: ChatModel, budget: Budget, messages: list[Message], tool_specs: Sequence[ToolSpec], *,
                 tags: CallTags, max_output_tokens: int, step_cap: int) -> None:
        self.model, self.budget = model, budget
        self.messages = messages
        self.tool_specs = tuple(tool_specs)
        self.tags, self.max_output_tokens, self.step_cap = tags, max_output_tokens, step_cap
        self.number = 0                # the step being taken

    def run_steps(self) -> None:
        for number in range(1, self.step_cap + 1):
            self.number = number
            self.step(number)

    def step(self, number: int) -> None:
        view, elided = self.trim()
        try:
            answer = self.query(view, number)
        except ContextOverflowError as err:
            self.refused_context(number, err)
            view, elided = self.trim()
            answer = self.query(view, number)
        self.messages.append(answer.as_message())
        self.record(number, answer, elided)
        self.respond(answer)

    # --- named steps a session overrides --------------------------------------------------------
    def trim(self) -> tuple[list[Message], int]:
        """The view sent to the model and how many history messages were elided or dropped."""
        return list(self.messages), 0

    def query(self, view: list[Message], number: int) -> Completion:
        """One metered model call with the session's tools."""
        request = ModelRequest(tuple(view), self.offered_tools(), self.max_output_tokens,
                               tags=CallTags(role=self.tags.role, pair=self.tags.pair, round=self.tags.round,
                                             step=number))
        return self.budget.complete(self.model, request)

    def offered_tools(self) -> tuple[ToolSpec, ...]:
        """The tools this step offers (fixed unless a session says otherwise)."""
        return self.tool_specs

    def refused_context(self, number: int, err: ContextOverflowError) -> None:  # noqa: ARG002 (a hook)
        """The model refused the view as too long: make `trim` shorter, or raise."""
        raise err

    def record(self, number: int, answer: Completion, elided: int) -> None:
        """Note one step (a trajectory, a usage line); nothing by default."""

    def answered(self, answer: Completion) -> None:  # noqa: ARG002 (a hook)
        """A reply without tool calls."""
        raise FormatError()

    def check_time(self) -> None:
        """Before each tool call: raise when the session's time is up."""

    def act(self, call: ToolCall) -> str:
        """Execute one tool call: its observation. Raises ToolError (a malformed or impossible call)
        or Submitted (the session's work is handed in)."""
        raise ToolError(f"no tool named {call.name!r}")

    def observe(self, message: Message) -> None:
        """Add what the model sees next to the history."""
        self.messages.append(message)

    def respond(self, answer: Completion) -> None:
        """Act on every call of one reply; every call gets exactly one observation message."""
        if not answer.tool_calls:
            self.answered(answer)
            return
        failed, submitted = False, None
        for call in answer.tool_calls:
            if submitted is not None:
                self.observe(Message("tool", SKIPPED_AFTER_SUBMIT, tool_call_id=call.id))
                continue
            try:
                self.check_time()
                observation = self.act(call)
            except ToolError as err:
                observation, failed = f"error: {err}", True
            except Submitted as done:
                observation, submitted = "submitted", done
            self.observe(Message("tool", observation, tool_call_id=call.id))
        if submitted is not None:
            raise submitted
        if failed:
            raise FormatError()
