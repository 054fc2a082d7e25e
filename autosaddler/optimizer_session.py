"""The optimizer's sessions as agent sessions with tools (seed: selection, mutation and reflection are
three agent sessions with separate timeouts and separate resource accounting), on the loop every
tool-using session runs (`OptimizerSession`, a testhelix/agent/toolsession.py `ToolSession`).

A session opens with the same messages as before (autosaddler/prompts.py) and may, for at most its
own number of steps, call read-only tools over exactly what the search handed it -- the minibatch
traces, the parent strategy, the history of earlier proposals, the parent candidates. No tool
reaches anything else (no task files, no panels, no other run). A step is one model call; a reply
without tool calls ends the session and its text is the answer. When a session reaches its step
limit without answering, it ends with no answer (recorded as a failure, like a timeout). Every step
is charged to the session's own usage line and to the optimizer's budget, never to the generator's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from concurrent.futures import Executor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from typing import TypedDict

from autosaddler.protocols import Exchange
from autosaddler.traces import OptimizerTrace
from testhelix.agent.budget import Budget, BudgetExhausted
from testhelix.agent.toolsession import ToolSession
from testhelix.llm.base import CallTags, ChatModel, Completion, Message, ModelError, ToolCall, ToolSpec

# Steps per session: selection only compares a few scores; diagnosis reads traces and history.
SESSION_STEPS = {"selection": 3, "diagnosis": 8, "reflection": 4}
TOOL_OUTPUT_CHARS = 8000  # one observation at most this long (cut, and the cut is said)


class CandidateRow(TypedDict):
    """A parent candidate as the selection session sees it (printed as JSON)."""

    node: str
    dev_score: float
    depth: int
    edit: str
    minibatch_successes: int | None


@dataclass(frozen=True)
class SessionMaterial:
    """What the search handed this session: the tools read only this."""

    traces: Sequence[OptimizerTrace] = ()
    strategy_json: str = ""
    history: Sequence[str] = ()
    candidates: Sequence[CandidateRow] = field(default_factory=tuple)


_INDEX = {"type": "object", "properties": {"index": {"type": "integer", "minimum": 0}}, "required": ["index"],
          "additionalProperties": False}
_NONE = {"type": "object", "properties": {}, "additionalProperties": False}


def tools_for(material: SessionMaterial) -> tuple[ToolSpec, ...]:
    tools = []
    if material.traces:
        tools += [ToolSpec("list_traces", "One line per minibatch trace: index, task context, success.", _NONE),
                  ToolSpec("read_trace", "The whole anonymised trace at this index (JSON).", _INDEX)]
    if material.strategy_json:
        tools.append(ToolSpec("read_strategy", "The current (parent) strategy as canonical JSON.", _NONE))
    if material.history:
        tools.append(ToolSpec("read_history", "Earlier proposals of this search and how they fared.", _NONE))
    if material.candidates:
        tools.append(ToolSpec("list_candidates", "The parent candidates with their scores (JSON).", _NONE))
    return tuple(tools)


def observe(call: ToolCall, material: SessionMaterial) -> str:
    """The observation for one tool call; a bad call gets an error observation, never an exception."""
    if call.arguments is None:
        return f"error: {call.error}"
    if call.name == "list_traces":
        rows = [t.prompt_json() for t in material.traces]
        text = "\n".join(f"{i}: context={t.get('context', '?')} success={bool(t.get('success'))}"
                         for i, t in enumerate(rows))
    elif call.name == "read_trace":
        index = call.arguments.get("index")
        if not isinstance(index, int) or not 0 <= index < len(material.traces):
            return f"error: index must be an integer from 0 to {len(material.traces) - 1}"
        text = json.dumps(material.traces[index].prompt_json(), sort_keys=True, default=str)
    elif call.name == "read_strategy" and material.strategy_json:
        text = material.strategy_json
    elif call.name == "read_history" and material.history:
        text = "\n".join(material.history)
    elif call.name == "list_candidates" and material.candidates:
        text = json.dumps(list(material.candidates), sort_keys=True, default=str)
    else:
        return f"error: no tool named {call.name!r} in this session"
    if len(text) > TOOL_OUTPUT_CHARS:
        text = text[:TOOL_OUTPUT_CHARS] + f"\n[cut at {TOOL_OUTPUT_CHARS} of {len(text)} characters]"
    return text


class SessionLine(TypedDict):
    """What only the session loop knows of a session (its calls and tokens come from the ledger)."""

    failures: int
    timeouts: int
    tool_calls: int
    step_limits: int
    elapsed_s: float
    timeout_s: float


def fresh_line(timeout_s: float) -> SessionLine:
    return {"failures": 0, "timeouts": 0, "tool_calls": 0, "step_limits": 0, "elapsed_s": 0.0, "timeout_s": timeout_s}


class _Answered(Exception):
    def __init__(self, text: str):
        super().__init__(text)
        self.text = text


class _NoAnswer(Exception):
    """The session gave up (a timeout, the optimizer's budget, a provider failure it may survive)."""


@dataclass(frozen=True)
class SessionRun:
    """How one session is run: its name and ledger role, its time limit and where its calls go."""

    session: str
    role: str
    timeout_s: float
    pool: Executor             # each call runs here, so that the session can give up at its deadline
    line: SessionLine
    exchanges: list[Exchange]


class OptimizerSession(ToolSession):
    """One optimizer session: up to SESSION_STEPS[session] steps; the first reply without tool calls
    is the answer. Its deadline covers all its steps. `run()` is the answer, or None when the session
    fails, runs out of time or reaches its step limit (each counted on its usage line)."""

    def __init__(self, model: ChatModel, budget: Budget, messages: list[Message], max_tokens: int,
                 material: SessionMaterial, run: SessionRun) -> None:
        super().__init__(model, budget, list(messages), tools_for(material), tags=CallTags(role=run.role),
                         max_output_tokens=max_tokens, step_cap=SESSION_STEPS[run.session])
        self.material, self.run_as = material, run
        self.started = time.monotonic()

    def run(self) -> str | None:
        line = self.run_as.line
        try:
            self.run_steps()
            line["step_limits"] += 1
            line["failures"] += 1
            return None
        except _Answered as answer:
            return answer.text
        except _NoAnswer:
            return None
        finally:
            line["elapsed_s"] += time.monotonic() - self.started

    def query(self, view: list[Message], number: int) -> Completion:
        """One call through the metered door, in the pool so the session can give up at its deadline,
        recorded as one exchange (the prompt as sent at this step, and the reply or the failure)."""
        run, line = self.run_as, self.run_as.line
        exchange: Exchange = {"session": run.session, "step": number,
                              "prompt": [{"role": m.role, "content": m.content} for m in view],
                              "reply": None, "failure": None}
        run.exchanges.append(exchange)
        future = run.pool.submit(super().query, view, number)
        try:
            answer = future.result(timeout=max(0.0, run.timeout_s - (time.monotonic() - self.started)))
        except FutureTimeout:
            line["timeouts"] += 1
            line["failures"] += 1
            exchange["failure"] = f"no answer within {run.timeout_s:g} s"
            raise _NoAnswer() from None
        except BudgetExhausted:
            line["failures"] += 1
            exchange["failure"] = "the optimizer's token budget is spent"
            raise _NoAnswer() from None
        except ModelError as err:
            line["failures"] += 1
            exchange["failure"] = str(err)[:500]
            # A revoked key or unknown model stops the search (exit 2). Otherwise parent selection
            # degrades to the best development score; diagnosis and reflection cannot, and an
            # outage must never become a rejected proposal in the DAG, so the search stops the round.
            if err.fatal or run.session != "selection":
                raise
            raise _NoAnswer() from None
        exchange["reply"] = answer.text
        return answer

    def answered(self, answer: Completion) -> None:
        raise _Answered(answer.text)

    def act(self, call: ToolCall) -> str:
        self.run_as.line["tool_calls"] += 1
        return observe(call, self.material)
