"""The agent's roles and the pipeline's phases: one vocabulary for skills (which roles a skill
serves), lessons (which phases retrieve them), prompts and the simulated models (which sessions are
the candidate's own)."""

from __future__ import annotations

from typing import Literal, get_args

Role = Literal["planning", "generation", "repair", "review", "feedback", "challenge"]
ROLES: tuple[str, ...] = get_args(Role)
# Roles that write or steer the candidate's tests; a reviewer-only skill never reaches them.
GENERATION_ROLES: tuple[str, ...] = tuple(r for r in ROLES if r != "review")
# The candidate's own agent sessions (guidance reaches these only; they take tool steps).
CANDIDATE_PHASES: tuple[str, ...] = ("generation", "repair")
# The pipeline phases that retrieve lessons (testhelix/agent/prompts.py): a lesson's component tag
# must name one of them, or it would never be retrieved. `preparation` is the checkpoint at the
# opening of a pair's first generation session, where the agent reads the task and the workspace.
LessonPhase = Literal["planning", "preparation", "generation", "repair", "review"]
COMPONENTS: tuple[str, ...] = get_args(LessonPhase)
# Phases that retrieve only lessons tagged with them: an untagged lesson keeps reaching the phases
# it reached before `preparation` existed, so no strategy without such a tag reads differently.
EXPLICIT_ONLY_PHASES: tuple[str, ...] = ("preparation",)
