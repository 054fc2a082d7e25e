"""The minibatch screen: a child passes only with strictly more successes than its parent on the
same tasks and no regression (no task the parent solved that the child fails)."""

from __future__ import annotations


class StrictImprovementNoRegression:
    def passes(self, parent: dict[str, int], child: dict[str, int]) -> tuple[bool, str]:
        if set(parent) != set(child):
            raise ValueError("parent and child were evaluated on different tasks")
        regressions = sorted(t for t in parent if parent[t] and not child[t])
        gained = sum(child.values()) - sum(parent.values())
        if regressions:
            return False, f"{len(regressions)} regression(s)"
        if gained <= 0:
            return False, f"no strict improvement ({sum(child.values())} vs {sum(parent.values())} successes)"
        return True, f"+{gained} successes, no regressions"
