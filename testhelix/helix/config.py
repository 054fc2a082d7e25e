"""Run configuration (docs/design.md §3): what the pipeline does, apart from the strategy's own fields.

Configurations A–E of the paper are named presets. D differs from C only in K=5 and keeps the same
total per-task budget; E is C run with a frozen, improved strategy file.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypedDict

from testhelix.core.errors import UserError
from testhelix.strategy.model import check_run_compatibility

if TYPE_CHECKING:
    from testhelix.strategy.model import Strategy


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

    def with_overrides(self, **kw: Any) -> RunConfig:  # any RunConfig fields
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


# Which configurations take K from the strategy. The seed: C and E run "three pairs", which is the
# strategy's eagerly requested initialCandidates, with maxCandidates fixed at the same value. A (one
# pair), B (random submission among three local pairs) and D (the K = 5 ablation of C with the initial
# strategy) fix K by definition, so the strategy's fields do not apply to them.
STRATEGY_SETS_PAIRS = frozenset({"C", "E"})


def with_strategy_pairs(config: RunConfig, strategy: Strategy) -> RunConfig:
    """K for configurations C and E is the strategy's initialCandidates. Refused: a strategy whose
    maxCandidates differs, because the pipeline starts every pair at once and has no rule for adding
    pairs later."""
    if config.name not in STRATEGY_SETS_PAIRS:
        return config
    initial, most = strategy.initialCandidates, strategy.maxCandidates
    if most != initial:
        raise UserError(f"configuration {config.name}: the strategy has initialCandidates={initial} and "
                        f"maxCandidates={most}; the pipeline requests every candidate pair at the start and never "
                        "adds pairs later, so it can honour only equal values (the seed fixes both at 3)")
    return config if config.pairs == initial else config.with_overrides(pairs=initial)


def strategy_run_config(config: RunConfig, strategy: Strategy) -> RunConfig:
    """The configuration `strategy` runs under, checked once where a strategy meets a configuration
    (`testhelix run`'s plans, an evaluator's evaluation): a strategy the configuration would weaken
    is refused (strategy.model ROUNDS_RULE), and C and E take K from it (`with_strategy_pairs`). The
    runner and its jobs trust the result."""
    check_run_compatibility(strategy, config.challenge_steps)
    return with_strategy_pairs(config, strategy)


def get_config(name: str, **overrides: Any) -> RunConfig:
    try:
        base = CONFIGS[name.upper()]
    except KeyError:
        raise UserError(f"--config: unknown configuration {name!r} (use A, B, C, D or E)") from None
    return base.with_overrides(**overrides) if overrides else base
