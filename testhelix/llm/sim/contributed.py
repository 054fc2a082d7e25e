"""Simulated roles other packages contribute: how a simulated model answers requests testhelix
does not write itself.

testhelix's simulated models play the agent's roles, which they recognise by the system prompts of
role_prompts.py. A package that sends requests of its own (AutoSaddler's three optimizer sessions)
teaches the simulated models to answer them by declaring one `SimulatedRole` per kind of request
under the `testhelix.simulated_roles` entry-point group (testhelix/core/plugins.py), e.g.

    [project.entry-points."testhelix.simulated_roles"]
    selection = "mypackage.sim:SELECTION"

so testhelix never imports its callers: the simulated model (model.py), the served model's role
reading (serve/request_tags.py) and the model that plays no task (`ContributedRoleModel`, what the
simulated provider gives an optimizer) all ask `role_for`. Installed roles are loaded once, on the
first request no built-in role recognises (a run that sends none never scans the metadata). A role
of a package that is not installed loads by dotted path (`load_role("package.module:OBJECT")`) and
is handed to `role_for` / `ContributedRoleModel` as `roles`.

Roles should recognise disjoint requests; when several recognise one, the first by entry-point name
answers. A role's name is what the request plays (`CallTags.role` in `testhelix serve`) and part of
the seed its answer is drawn with.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from functools import cache
from typing import Protocol, runtime_checkable

from testhelix.core.errors import UserError
from testhelix.core.plugins import SIMULATED_ROLES_GROUP, entry_point_names, load_plugin, missing_members
from testhelix.llm.base import Completion, Message, ModelRequest, Usage
from testhelix.llm.provider_protocol import ModelInfo


@runtime_checkable
class SimulatedRole(Protocol):
    """One kind of request a simulated model can answer, contributed by the package that sends it."""

    name: str

    def recognises(self, messages: Sequence[Message]) -> bool:
        """Whether this request is one of this role's, read from the messages only (as a real model would)."""
        ...

    def answer(self, messages: Sequence[Message], rng: random.Random) -> str:
        """The reply's text; every random choice comes from `rng` (seeded by the caller)."""
        ...


def load_role(spec: str) -> SimulatedRole:
    """The role an entry point of `testhelix.simulated_roles` or a `package.module:OBJECT` path names."""
    obj = load_plugin(spec, group=SIMULATED_ROLES_GROUP, builtins={}, option="simulated role",
                      what="simulated role")
    if not isinstance(obj, SimulatedRole):
        raise UserError(f"simulated role {spec!r}: {obj!r} lacks {', '.join(missing_members(obj, SimulatedRole))} "
                        "(see testhelix/llm/sim/contributed.py)")
    return obj


@cache
def simulated_roles() -> tuple[SimulatedRole, ...]:
    """Every installed role, in entry-point name order (loaded once per process)."""
    return tuple(load_role(name) for name in entry_point_names(SIMULATED_ROLES_GROUP))


def role_for(messages: Sequence[Message], roles: Sequence[SimulatedRole] | None = None) -> SimulatedRole | None:
    """The first role (of `roles`, or else the installed ones) that recognises the request; None if none does."""
    return next((role for role in (simulated_roles() if roles is None else roles) if role.recognises(messages)), None)


UNRECOGNISED = ("[simulated] this simulated model plays no task, and no simulated role recognises the request "
                "(roles come from testhelix.simulated_roles entry points)")


class ContributedRoleModel:
    """A simulated model that plays no task and answers the contributed roles only (a test double:
    the simulated provider's `create_optimizer`). Each answer is drawn with a seed of the model's
    seed, the role's name and the request's text, so one request gets one answer, in process or
    served. Usage is characters / 4 of the request and of the reply, cost None."""

    simulated = True   # base.TestDouble

    def __init__(self, info: ModelInfo, seed: int = 0, roles: Sequence[SimulatedRole] | None = None) -> None:
        self.info = info
        self.name = info.name
        self.context_window = info.context_window
        self.seed = seed
        self.roles = roles

    def complete(self, request: ModelRequest) -> Completion:
        text_in = "\n".join(m.content for m in request.messages)
        role = role_for(request.messages, self.roles)
        if role is None:
            text = UNRECOGNISED
        else:
            digest = hashlib.sha256(f"{self.seed}:{role.name}:{text_in}".encode()).hexdigest()
            text = role.answer(request.messages, random.Random(int(digest[:16], 16)))
        usage = Usage(input_tokens=len(text_in) // 4 + 1,
                      output_tokens=min(request.max_output_tokens, len(text) // 4 + 1), cost_usd=None)
        return Completion(text=text, tool_calls=(), stop_reason="end_turn", usage=usage, model=self.name,
                          metadata={"simulated": True, "seed": self.seed})
