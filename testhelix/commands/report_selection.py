"""How many tasks each selection rule decided, per run label (the report's selection-rule table)."""

from __future__ import annotations

from testhelix.helix.detail import stored_rule
from testhelix.store.runstore import RunStore

SELECTION_RULES = ("witness-support", "merged", "fallback", "only-qualified", "random", "none")


def selection_rules(store: RunStore) -> dict[str, dict[str, int]]:
    """Per run label, how many tasks each selection rule decided (from the recorded task details)."""
    out: dict[str, dict[str, int]] = {}
    for row in store.task_results():
        rule = stored_rule(row.get("detail")) or "unknown"
        counts = out.setdefault(row["run_label"], {})
        counts[rule] = counts.get(rule, 0) + 1
    return out


def render_selection_rules(rules: dict[str, dict[str, int]]) -> list[str]:
    if not rules:
        return []
    names = list(SELECTION_RULES) + sorted({r for c in rules.values() for r in c} - set(SELECTION_RULES))
    lines = ["## Selection rules (tasks per rule that chose the submitted suite)", "",
             "| run | " + " | ".join(names) + " | submitted |", "|---|" + "---:|" * (len(names) + 1)]
    for label, counts in sorted(rules.items()):
        submitted = sum(n for r, n in counts.items() if r != "none")
        lines.append(f"| {label} | " + " | ".join(str(counts.get(r, 0)) for r in names)
                     + f" | {submitted}/{sum(counts.values())} |")
    return lines + [""]
