"""Lesson retrieval (docs/design.md §2): which learned lessons enter a prompt, and how they read.

Retrieval sees only public information: the task text, the phase, and the host's execution
checkpoint (a short status such as "initial program passes the suite"). A lesson applies when one
of its literal triggers occurs in that text (case-insensitive) and its components, if any, include
the phase; the `preparation` phase retrieves only lessons tagged with it (roles.EXPLICIT_ONLY_PHASES).
At most two lessons are chosen, within 1,600 characters for an agent turn (preparation included)
and 1,200 for planning; the order is deterministic (more matched triggers first, then strategy order).
"""

from __future__ import annotations

import re

from testhelix.core.agent_roles import COMPONENTS, EXPLICIT_ONLY_PHASES
from testhelix.strategy.model import Lesson, Strategy

PHASES = COMPONENTS  # one list: a lesson's component tags are exactly the phases that retrieve lessons
MAX_LESSONS_PER_TURN = 2
CHAR_BUDGET = {"planning": 1200}
DEFAULT_CHAR_BUDGET = 1600
_PARTS = re.compile(r"(?im)^\s*(applicability|action|verification)\s*:\s*")


def render_lesson(lesson: Lesson) -> str:
    """Applicability / action / observable verification, from labelled text or from triggers."""
    labelled = _split_labelled(lesson.text)
    if labelled:
        applies, action, verify = labelled
    else:
        applies = "the task mentions " + ", ".join(repr(t) for t in lesson.triggers)
        action, verify = lesson.text.strip(), "the suite fails on the initial program and passes on the repair"
    return f"Lesson {lesson.id}\n- Applies when: {applies}\n- Do: {action}\n- Verify: {verify}"


def _split_labelled(text: str) -> tuple[str, str, str] | None:
    pieces = _PARTS.split(text)
    if len(pieces) < 7:
        return None
    found = {pieces[i].lower(): pieces[i + 1].strip() for i in range(1, len(pieces) - 1, 2)}
    if set(found) != {"applicability", "action", "verification"}:
        return None
    return found["applicability"], found["action"], found["verification"]


def _matches(lesson: Lesson, haystack: str) -> int:
    return sum(1 for t in lesson.triggers if t.lower() in haystack)


def retrieve_lessons(strategy: Strategy, task_text: str, phase: str, checkpoint: str = "") -> list[Lesson]:
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {PHASES}, got {phase!r}")
    haystack = f"{task_text}\n{checkpoint}".lower()
    scored = []
    for order, lesson in enumerate(strategy.lessons):
        if (lesson.components or phase in EXPLICIT_ONLY_PHASES) and phase not in lesson.components:
            continue
        hits = _matches(lesson, haystack)
        if hits:
            scored.append((-hits, order, lesson))
    budget = CHAR_BUDGET.get(phase, DEFAULT_CHAR_BUDGET)
    chosen: list[Lesson] = []
    used = 0
    for _, _, lesson in sorted(scored, key=lambda s: (s[0], s[1])):
        size = len(render_lesson(lesson))
        if used + size > budget:
            continue
        chosen.append(lesson)
        used += size
        if len(chosen) == MAX_LESSONS_PER_TURN:
            break
    return chosen


def render_lessons(lessons: list[Lesson], phase: str) -> str:
    if not lessons:
        return ""
    body = "\n\n".join(render_lesson(lesson) for lesson in lessons)
    return f"Lessons learned for the {phase} phase (apply them where they fit):\n\n{body}"
