"""Run configuration (docs/design.md §3): what the pipeline does, apart from the strategy's own fields.

Configurations A–E of the paper are named presets. D differs from C only in K=5 and keeps the same
total per-task budget; E is C run with a frozen, improved strategy file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TypedDict

from testhelix.errors import UserError


@dataclass(frozen=True)
class RunConfig:
    name: str
    pairs: int                       # K
    cross_execution: bool
    semantic_review: bool
    corrective_feedback: bool
    challenge_steps: int             # differential challenge steps (0 disables)
    execution_positive_fallback: bool
    merge_suites: bool
    random_submission: bool          # configuration B
    repetitions: int = 2             # executions that must agree for "reproducible"
    seed: int = 42
    token_cap: int = 400_000         # one per-task inference cap for every role, pair and retry
    agent_time_limit_s: float | None = None  # T; None: the task's declared agent timeout (task.toml)

    @property
    def peer_cross_validation(self) -> bool:
        return self.cross_execution or self.semantic_review or self.corrective_feedback

    def with_overrides(self, **kw) -> RunConfig:
        return replace(self, **kw)


class _Features(TypedDict):
    """The RunConfig fields a preset family sets together (typed, so `**` passes each its type)."""

    cross_execution: bool
    semantic_review: bool
    corrective_feedback: bool
    challenge_steps: int
    execution_positive_fallback: bool
    merge_suites: bool


class _PCVFeatures(_Features):
    random_submission: bool


_PCV = _PCVFeatures(cross_execution=True, semantic_review=True, corrective_feedback=True, challenge_steps=1,
                    execution_positive_fallback=True, merge_suites=True, random_submission=False)
_LOCAL = _Features(cross_execution=False, semantic_review=False, corrective_feedback=False, challenge_steps=0,
                   execution_positive_fallback=False, merge_suites=False)

CONFIGS: dict[str, RunConfig] = {
    "A": RunConfig("A", pairs=1, random_submission=False, **_LOCAL),
    "B": RunConfig("B", pairs=3, random_submission=True, **_LOCAL),
    "C": RunConfig("C", pairs=3, **_PCV),
    "D": RunConfig("D", pairs=5, **_PCV),
    "E": RunConfig("E", pairs=3, **_PCV),
}


def get_config(name: str, **overrides) -> RunConfig:
    try:
        base = CONFIGS[name.upper()]
    except KeyError:
        raise UserError(f"--config: unknown configuration {name!r} (use A, B, C, D or E)") from None
    return base.with_overrides(**overrides) if overrides else base
