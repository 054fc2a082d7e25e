"""Prompt text: what every role sees, and how strategy content enters it.

A session's opening messages, in order:
1. system: the role, the workspace layout and rules, then the skills: the skills the strategy
   routes to this role for the task's context (`route_skills`), or, when the route list is empty,
   the library index (`library_index`) so the agent chooses itself. The system message is the
   stable prefix a provider caches.
2. user: the public task (instruction, context, packages) and the pair's direction.
3. user, only when the strategy's guidance is non-empty: the guidance. Guidance is for the
   candidate's own sessions (generation and repair) only; the planner and the independent
   reviewer never receive it, so the fixed review protocol stays fixed.
4. user, only when lessons are retrieved for the phase: `render_lessons(retrieve_lessons(...))`,
   retrieval seeing only the public task text, the phase and the host's checkpoint. A lesson
   reaches the planner or the reviewer only through its component tags and retrieval. A pair's
   first generation session opens with the preparation checkpoint (the agent reads the task and
   the workspace before it writes): lessons tagged `preparation` are retrieved there against the
   task and the workspace listing (`preparation_checkpoint`) and come before the generation ones.
5. user, in repair/feedback rounds: the corrective feedback.

Nothing here reads hidden task material: the callers pass only the public instruction.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from testhelix.core.agent_roles import CANDIDATE_PHASES
from testhelix.llm.base import Message
from testhelix.llm.role_prompts import (
    CHALLENGE_SYSTEM,
    FEEDBACK_HEADER,
    FEEDBACK_SYSTEM,
    GUIDANCE_HEADER,
    PHASE_NOTES,
    PLANNING_SYSTEM,
    REVIEW_SYSTEM,
    SESSION_SYSTEM,
    SKILLS_HEADER,
)

if TYPE_CHECKING:
    from testhelix.strategy.model import Strategy
    from testhelix.strategy.skills import Skill
    from testhelix.tasks.task import Task

INDEX_HEADER = "## Skill library (pick what fits; none is preloaded)"
LOAD_SKILL_NOTE = "Load a skill's full text with the load_skill tool when it fits the task."


@dataclass(frozen=True)
class PublicTask:
    """The only view of a task an agent or a prompt ever gets."""

    id: str
    instruction: str
    context: str
    packages: tuple[str, ...]

    @classmethod
    def of(cls, task: Task) -> PublicTask:
        return cls(id=task.id, instruction=task.instruction, context=task.context, packages=tuple(task.packages))


def skills_section(skills: list, index: str) -> str:
    if skills:
        parts = [f"### {s.name} (contexts: {', '.join(s.contexts)})\n{s.body}" for s in skills]
        return SKILLS_HEADER + "\n\n" + "\n\n".join(parts)
    return f"{INDEX_HEADER}\n{index}" if index else ""


def preparation_checkpoint(program_files: Sequence[str], suite_files: Sequence[str]) -> str:
    """The host's status at the preparation checkpoint: what the agent finds in its workspace
    (public file names only), before it has written anything."""
    listed = ", ".join(program_files[:20]) + (f" and {len(program_files) - 20} more" if len(program_files) > 20 else "")
    return (f"workspace prepared: program/ holds {listed or 'no files'}; "
            f"suite/ holds {', '.join(suite_files) if suite_files else 'no tests yet'}")


def lessons_message(strategy: Strategy, task: PublicTask, phase: str, checkpoint: str) -> list[Message]:
    from testhelix.strategy.lessons import render_lessons, retrieve_lessons
    text = render_lessons(retrieve_lessons(strategy, task.instruction, phase, checkpoint), phase)
    return [Message("user", text)] if text else []


def strategy_messages(strategy: Strategy, task: PublicTask, phase: str, checkpoint: str = "",
                      preparation: str | None = None) -> list[Message]:
    """The guidance message (candidate phases only, and only when non-empty), then the preparation
    lessons (only when `preparation`, the preparation checkpoint, is given and they are retrieved),
    then the lessons message (only when retrieved for `phase`)."""
    out = []
    if phase in CANDIDATE_PHASES and strategy.guidance.strip():
        out.append(Message("user", f"{GUIDANCE_HEADER}\n{strategy.guidance.strip()}"))
    if preparation is not None:
        out += lessons_message(strategy, task, "preparation", preparation)
    return out + lessons_message(strategy, task, phase, checkpoint)


def routed_skills_text(strategy: Strategy, task: PublicTask, role: str, library: dict[str, Skill] | None) -> str:
    if not library:
        return ""
    from testhelix.strategy.skills import library_index, route_skills
    skills = route_skills(strategy, task.context, role, library)
    return skills_section(skills, "" if skills else library_index(library, role))


def task_message(task: PublicTask, direction: str = "") -> str:
    text = (f"Task context: {task.context}. Program packages: {', '.join(task.packages) or 'see program/'}.\n\n"
            f"{task.instruction.strip()}")
    if direction:
        text += f"\n\nYour direction for this attempt: {direction}"
    return text


def session_messages(strategy: Strategy, task: PublicTask, *, phase: str, direction: str = "", feedback: str = "",
                     checkpoint: str = "", library: dict[str, Skill] | None = None,
                     preparation: str | None = None) -> list[Message]:
    role = "repair" if phase == "repair" else "generation"
    system = SESSION_SYSTEM + "\n" + PHASE_NOTES.get(phase, "")
    skills = routed_skills_text(strategy, task, role, library)
    if skills:
        system += "\n\n" + skills
        if skills.startswith(INDEX_HEADER):
            system += "\n" + LOAD_SKILL_NOTE
    msgs = [Message("system", system), Message("user", task_message(task, direction))]
    msgs += strategy_messages(strategy, task, phase, checkpoint, preparation)
    if feedback.strip():
        msgs.append(Message("user", f"{FEEDBACK_HEADER}\n{feedback.strip()}"))
    return msgs


# --- single-call roles ------------------------------------------------------------------------


def planning_messages(strategy: Strategy, task: PublicTask, k: int, library: dict[str, Skill] | None = None) -> list[Message]:
    system = PLANNING_SYSTEM
    skills = routed_skills_text(strategy, task, "planning", library)
    if skills:
        system += "\n\n" + skills
    msgs = [Message("system", system), Message("user", f"{task_message(task)}\n\nGive {k} directions.")]
    return msgs + strategy_messages(strategy, task, "planning")


def review_messages(strategy: Strategy, task: PublicTask, original_source: str, suite_files: dict[str, str],
                    symptoms: str, reviewer_skills_text: str = "") -> list[Message]:
    system = REVIEW_SYSTEM + (f"\n\n{reviewer_skills_text}" if reviewer_skills_text else "")
    tests = "\n\n".join(f"# file: {name}\n{text}" for name, text in sorted(suite_files.items()))
    body = (f"{task_message(task)}\n\n## Original program\n{original_source}\n\n## Suite\n{tests}\n\n"
            f"## Execution symptoms\n{symptoms}")
    return [Message("system", system), Message("user", body)] + strategy_messages(strategy, task, "review")


def feedback_messages(task: PublicTask, counterexamples: Sequence[Mapping[str, object]]) -> list[Message]:
    body = f"{task_message(task)}\n\n## Reviewed counterexamples\n{json.dumps(list(counterexamples), indent=1)}"
    return [Message("system", FEEDBACK_SYSTEM), Message("user", body)]


def challenge_messages(task: PublicTask, suites_summary: str) -> list[Message]:
    return [Message("system", CHALLENGE_SYSTEM),
            Message("user", f"{task_message(task)}\n\n## Current suites\n{suites_summary}")]
