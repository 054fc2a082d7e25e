"""Greedy max-min selection of diverse programs by AST-feature Jaccard distance.

Starting from the items that must be in the selection, repeatedly add the pool item whose
distance to its nearest already-selected item is largest (the classic farthest-point heuristic
for the max-min dispersion problem). Ties are broken by a seeded shuffle of the pool, so a given
seed always gives the same panel while different seeds can give different, equally diverse ones.
Hand-written because it is ten lines and no library we depend on offers max-min dispersion.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from testhelix.prism.astfeatures import jaccard_distance


def select_diverse(required: Sequence[str], pool: Sequence[str], k: int,
                   features: Mapping[str, frozenset[str]], seed: str) -> list[str]:
    """Return `required` followed by up to `k - len(required)` pool items in the order chosen."""
    chosen = list(required)
    remaining = [p for p in sorted(pool) if p not in chosen]
    random.Random(seed).shuffle(remaining)
    # nearest[p] = distance from p to its closest chosen item, updated as items are added.
    nearest = {p: min((jaccard_distance(features[p], features[c]) for c in chosen), default=1.0) for p in remaining}
    while len(chosen) < k and remaining:
        best = max(remaining, key=lambda p: nearest[p])  # max() keeps the first of equal values
        chosen.append(best)
        remaining.remove(best)
        for p in remaining:
            nearest[p] = min(nearest[p], jaccard_distance(features[p], features[best]))
    return chosen
