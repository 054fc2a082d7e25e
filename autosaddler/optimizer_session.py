"""The optimizer's sessions as agent sessions with tools (seed: selection, mutation and reflection are
three agent sessions with separate timeouts and separate resource accounting).

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TypedDict

from autosaddler.traces import OptimizerTrace
from testhelix.llm.base import ToolCall, ToolSpec

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
