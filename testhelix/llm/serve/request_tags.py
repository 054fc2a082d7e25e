"""What a served model learns about a request: from its text only, as a real provider would.

In-process, the host hands a model `CallTags` (role, pair, round, step). Those never cross the
wire, so the server reads the role from the system prompt (a request of another package's, such
as AutoSaddler's optimizer sessions, plays the role of the simulated role that recognises it:
sim/contributed.py), the step from the number of assistant turns, and -- for models that play a
task (simulated ones) -- which task from the instruction text in the first user message. Pair and
round stay unknown (None); the simulated models still vary per pair because their seeds include
the opening messages, which carry the pair's direction.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from testhelix.core.agent_roles import CANDIDATE_PHASES
from testhelix.llm.base import CallTags, Message
from testhelix.llm.role_prompts import system_role
from testhelix.llm.sim.contributed import role_for


def infer_tags(messages: Sequence[Message]) -> CallTags:
    system = next((m.content for m in messages if m.role == "system"), "")
    role = system_role(system)
    if role == "other":   # a request of another package's (AutoSaddler's optimizer sessions): its own role
        contributed = role_for(messages)
        role = contributed.name if contributed is not None else role
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
