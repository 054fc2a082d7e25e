"""Common random numbers for the simulated models.

Every random choice a simulated model makes is a *keyed draw*: a number in [0, 1) computed from a
digest of who decides and what is decided -- the model's `seed=N` (options.py), the task, the
role, the pair (its planned direction), the round (the feedback the session answers), the step
(the number of the model's own earlier replies in the session) and the name of the decision
(e.g. `("pick", "compose", 1)`: the second test of the first suite). Never the strategy's text and
never the wording of the prompt. So:

- a strategy edit that carries no cue (cues.py) produces byte-identical decisions: the same
  situation gives the same draw;
- a cue acts on top, deterministically: it moves a threshold (a pick is good when its draw is
  below `base_skill + boost`) or changes a pool, and every decision it does not touch keeps its
  draw. Decisions are keyed by name, not by position in a sequence, so one extra guard test does
  not shift the draws of the decisions after it.

Sampling noise (`noise=P`) is drawn per *evaluation*: the host passes the model a sampling seed
per evaluation (testhelix/helix/runner.py derives it from the run's seed and the run label, so a
challenger and a baseline, or a parent and a child, sample separately). Each decision is, with
probability P, replaced by a draw from that evaluation's stream. With P = 0 (the default) the
sampling seed is never read.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")
_SCALE = float(1 << 64)


def unit(*parts: object) -> float:
    """A number in [0, 1) that depends only on `parts`."""
    digest = hashlib.sha256(json.dumps(parts, default=str, separators=(",", ":")).encode()).digest()
    return int.from_bytes(digest[:8], "big") / _SCALE


@dataclass(frozen=True)
class Draws:
    key: tuple                # (seed, task, role, pair, round, step)
    noise: float = 0.0
    sample: int = 0           # the evaluation's sampling seed; read only when noise > 0

    def uniform(self, *name: object) -> float:
        if self.noise > 0 and unit("resample?", self.sample, self.key, name) < self.noise:
            return unit("sample", self.sample, self.key, name)
        return unit("common", self.key, name)

    def below(self, chance: float, *name: object) -> bool:
        """True with probability `chance`; a larger chance keeps every True of a smaller one."""
        return self.uniform(*name) < chance

    def choice(self, items: Sequence[T], *name: object) -> T:
        if not items:
            raise IndexError("choice from an empty sequence")
        return items[min(len(items) - 1, int(self.uniform(*name, "which") * len(items)))]

    def shuffled(self, items: Sequence[T], *name: object) -> list[T]:
        return sorted(items, key=lambda item: self.uniform(*name, str(item)))
