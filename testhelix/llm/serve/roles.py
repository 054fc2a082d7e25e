"""What a served model learns about a request: from its text only, as a real provider would.

In-process, the host hands a model `CallTags` (role, pair, round, step). Those never cross the
wire, so the server reads the role from the system prompt, the step from the number of assistant
turns, and -- for models that play a task (simulated ones) -- which task from the instruction text
in the first user message. Pair and round stay unknown (None); the simulated models still vary per
pair because their seeds include the opening messages, which carry the pair's direction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from testhelix.llm.base import CallTags, Message
from testhelix.llm.role_prompts import system_role
from testhelix.llm.sim.optimizer import is_optimizer_request
from testhelix.roles import CANDIDATE_PHASES


def infer_tags(messages: Sequence[Message]) -> CallTags:
    system = next((m.content for m in messages if m.role == "system"), "")
    users = "\n".join(m.content for m in messages if m.role == "user")
    role = system_role(system)
    if role == "other":   # the optimizer's three sessions, by the sections they are sent
        role = ("optimizer" if is_optimizer_request(messages) else "selection" if "## Candidates" in users
                else "reflection" if "## Draft lesson" in users else role)
    step = sum(1 for m in messages if m.role == "assistant") + 1 if role in CANDIDATE_PHASES else None
    return CallTags(role=role, step=step)


class TaskIndex:
    """Finds the task a request is about by its instruction text (longest match wins)."""

    def __init__(self, tasks: Sequence[Any]):
        self._by_text = sorted(((t.instruction.strip(), t) for t in tasks if t.instruction.strip()),
                               key=lambda pair: -len(pair[0]))

    def find(self, messages: Sequence[Message]) -> Any | None:
        users = "\n".join(m.content for m in messages if m.role == "user")
        return next((task for text, task in self._by_text if text in users), None)
