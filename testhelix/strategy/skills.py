"""The curated skills library (skills/<name>/SKILL.md with YAML front matter) and routing.

Routing gives a role the skills that the strategy's `skillRoutes` names for the task's context.
Reviewer-only skills never reach candidate generation; an empty route list leaves the choice to
the agent, which then sees the library index instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import yaml

from testhelix.core.agent_roles import GENERATION_ROLES, ROLES
from testhelix.core.errors import UserError
from testhelix.core.paths import skills_dir
from testhelix.tasks.model import CONTEXTS


class RoutesSkills(Protocol):
    """What routing reads of a strategy (the Strategy model has it; this module must not import it,
    since the Strategy's validators read the skill library)."""

    @property
    def skillRoutes(self) -> Mapping[Any, Sequence[str]]: ...

_FRONT = re.compile(r"\A---\n(.*?)\n---\n(.*)\Z", re.S)
_NAME = re.compile(r"^[a-z][a-z0-9-]{1,63}$")


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    contexts: tuple[str, ...]
    roles: tuple[str, ...]
    reviewer_only: bool
    body: str


def parse_skill(path: Path) -> Skill:
    text = path.read_text()
    m = _FRONT.match(text)
    if not m:
        raise UserError(f"{path}: missing YAML front matter between '---' lines")
    try:
        meta = yaml.safe_load(m.group(1)) or {}
    except yaml.YAMLError as err:
        raise UserError(f"{path}: front matter is not valid YAML: {err}") from None
    if not isinstance(meta, dict):
        raise UserError(f"{path}: front matter must be a mapping of fields (name, description, contexts, roles), "
                        f"got a {type(meta).__name__}")
    problems = []
    name = meta.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        problems.append(("name", f"must be a lower-case slug, got {name!r}"))
    elif name != path.parent.name:
        problems.append(("name", f"{name!r} differs from its folder {path.parent.name!r}"))
    if not isinstance(meta.get("description"), str) or not meta["description"].strip():
        problems.append(("description", "must be a non-empty string"))
    contexts = meta.get("contexts") or []
    bad = [c for c in contexts if c not in CONTEXTS] if isinstance(contexts, list) else [contexts]
    if bad or not contexts:
        problems.append(("contexts", f"must be a non-empty list from {CONTEXTS}, got {contexts!r}"))
    roles = meta.get("roles") or []
    bad = [r for r in roles if r not in ROLES] if isinstance(roles, list) else [roles]
    if bad or not roles:
        problems.append(("roles", f"must be a non-empty list from {ROLES}, got {roles!r}"))
    if not isinstance(meta.get("reviewer_only", False), bool):
        problems.append(("reviewer_only", "must be true or false"))
    body = m.group(2).strip()
    n_lines = len(body.splitlines())
    if not 40 <= n_lines <= 150:
        problems.append(("body", f"must have 40-150 lines, has {n_lines}"))
    if problems or not isinstance(name, str):   # a name that is not a str is always among the problems
        raise UserError(f"{path}: invalid skill", problems)
    return Skill(name=name, description=meta["description"].strip(), contexts=tuple(contexts),
                 roles=tuple(roles), reviewer_only=bool(meta.get("reviewer_only", False)), body=body)


def load_library(root: Path | None = None) -> dict[str, Skill]:
    root = Path(root) if root else skills_dir()
    if not root.is_dir():
        raise UserError(f"{root}: skills folder does not exist")
    skills = [parse_skill(p) for p in sorted(root.glob("*/SKILL.md"))]
    return {s.name: s for s in skills}


def route_skills(strategy: RoutesSkills, context: str, role: str, library: dict[str, Skill]) -> list[Skill]:
    """The skills the strategy routes to `role` on a task of `context` (in route order)."""
    # a task's context is any text; one the strategy does not route gets no skills
    names = strategy.skillRoutes.get(context, ())
    chosen = []
    for name in names:
        skill = library.get(name)
        if skill is None:
            raise UserError(f"skillRoutes.{context}: unknown skill {name!r}")
        if skill.reviewer_only and role in GENERATION_ROLES:
            raise UserError(f"skillRoutes.{context}: reviewer-only skill {name!r} cannot be routed to {role}")
        chosen.append(skill)
    return chosen


def reviewer_skills(library: dict[str, Skill], context: str) -> list[Skill]:
    """Skills the independent reviewer loads: those for review that fit the context."""
    return [s for s in library.values() if "review" in s.roles and (context in s.contexts or "general" in s.contexts)]


def library_index(library: dict[str, Skill], role: str = "generation") -> str:
    """One line per skill the role may load; shown when the route list is empty."""
    lines = [f"- {s.name}: {s.description} (contexts: {', '.join(s.contexts)})"
             for s in library.values() if not (s.reviewer_only and role in GENERATION_ROLES)]
    return "\n".join(lines)
