"""The shared generation budget, the admission gate, verifier labels and the B.4 diversity criteria
of a panel (seed 000, Appendix B), as plain values and functions used by create.py.

- **Budget**: one per task, 30 generated outputs by default, shared by initial assembly and
  diversity refinement. Every output is charged once when it is produced -- empty, duplicate,
  inapplicable, unlabelled or never selected alike. The existing reference is not charged.
- **Admission gate**, in this order: empty (no file, or only whitespace), exact duplicate (same
  tree digest as the reference, the initial program or an earlier candidate), inapplicable (a
  changed file outside the program's files, or a Python file that does not parse).
- **Label**: the verifier's trusted tests run on the candidate in the sandboxed executor; pass is
  valid and fail is invalid, whatever the generator meant. An error (timeout, nothing collected,
  resource limit) gives no label and the candidate is left out.
- **Diversity (B.4)**: AST-feature Jaccard distance (testhelix/prism/astfeatures.py). A group --
  the five valid programs (reference + four alternatives) or the five invalid ones -- meets the
  criterion when every pair is at distance >= `min_pair` and the mean pairwise distance is >=
  `min_mean`. The seed defines the distance and requires both groups to meet their criterion but
  its text available to this project gives no numeric thresholds; the defaults below are this
  project's choice (they exclude near-copies while admitting a one-operator mutant), not the seed's.
"""

from __future__ import annotations

import ast
import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from testhelix.prism.astfeatures import jaccard_distance

DEFAULT_BUDGET = 30
PANEL_ALTERNATIVES, PANEL_INVALIDS = 4, 5
DEFAULT_MIN_PAIR = 0.02
DEFAULT_MIN_MEAN = 0.05


class BudgetExhausted(Exception):
    """No generated output is left for this task."""


@dataclass
class Budget:
    limit: int = DEFAULT_BUDGET
    used: int = 0

    @property
    def left(self) -> int:
        return self.limit - self.used

    def charge(self) -> int:
        """Charge one produced output; returns its 1-based number. Raises when none is left."""
        if self.used >= self.limit:
            raise BudgetExhausted(f"all {self.limit} generated outputs used")
        self.used += 1
        return self.used


@dataclass(frozen=True)
class Diversity:
    min_pair: float = DEFAULT_MIN_PAIR
    min_mean: float = DEFAULT_MIN_MEAN

    def check(self, features: Sequence[frozenset[str]]) -> tuple[bool, float, float]:
        """(meets the criterion, smallest pair distance, mean pair distance) of one group."""
        pairs = [jaccard_distance(a, b) for a, b in itertools.combinations(features, 2)]
        if not pairs:
            return True, 0.0, 0.0
        low, mean = min(pairs), sum(pairs) / len(pairs)
        return low >= self.min_pair and mean >= self.min_mean, low, mean


def gate(files: Mapping[str, str] | None, program_files: set[str], digest: str | None,
         seen_digests: set[str]) -> str | None:
    """Why the admission gate removes an output (None: admitted). `digest` is the tree digest of the
    reference with `files` applied; `seen_digests` holds the reference, initial and earlier outputs."""
    if not files or all(not text.strip() for text in files.values()):
        return "empty submission"
    outside = sorted(set(files) - program_files)
    if outside:
        return f"not applicable: changes files the program does not have ({', '.join(outside)})"
    for path, text in sorted(files.items()):
        if path.endswith(".py"):
            try:
                ast.parse(text)
            except (SyntaxError, ValueError) as err:
                return f"not applicable: {path} does not parse ({err.__class__.__name__}: {err})"
    if digest in seen_digests:
        return "exact duplicate"
    return None


def label_of(status: str) -> str | None:
    """The verifier's label for a run status: valid, invalid, or None (an error gives no label)."""
    return {"pass": "valid", "fail": "invalid"}.get(status)


def select_group(required: Sequence[str], pool: Sequence[str], size: int, features: Mapping[str, frozenset[str]],
                 criterion: Diversity, seed: str) -> tuple[list[str], bool]:
    """`required` plus pool members up to `size`, chosen for diversity: the farthest-point order
    first, then single swaps that raise the smallest pair distance while the criterion fails.
    Returns (group, meets the criterion); a short group never meets it."""
    from testhelix.pack.diversity import select_diverse

    group = select_diverse(required, pool, size, features, seed)
    if len(group) < size:
        return group, False

    def score(members: Sequence[str]) -> tuple[bool, float, float]:
        return criterion.check([features[m] for m in members])

    best = score(group)
    rng = random.Random(seed)
    improved = not best[0]
    while improved and not best[0]:
        improved = False
        outside = [p for p in pool if p not in group]
        rng.shuffle(outside)
        for i in range(len(required), len(group)):
            for p in outside:
                trial = [*group[:i], p, *group[i + 1:]]
                result = score(trial)
                if result[0] or (result[1], result[2]) > (best[1], best[2]):
                    group, best, improved = trial, result, True
                    break
            if improved:
                break
    return group, best[0]
