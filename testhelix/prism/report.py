"""A run's TestPrism report as plain data (`collect`): every metric recomputed from the outcomes the
run store recorded, grouped by run label, with the paired differences between configurations A-E of
one model, the correlations, the panel-size curves and the evaluations the provider prevented.

`testhelix report` renders it as Markdown (testhelix/commands/report.py); the HTML view
(testhelix/view/helix.py) and MLflow tracking show the same data.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import asdict
from itertools import combinations
from statistics import fmean
from typing import Any

from testhelix.core.errors import UserError
from testhelix.prism import metrics as M
from testhelix.prism import panel as P
from testhelix.prism.metric_table import PAIRED, by_indicator
from testhelix.store.ledger import calls_by_label, trouble_by_label
from testhelix.store.runs import run_records
from testhelix.store.runstore import RunStore

CONFIG_LABEL = re.compile(r"^(?P<prefix>.+)/(?P<config>[A-E])$")
# The per-task indicators compared between configurations: F, A, R, S (the metric table's paired entries).
PAIRED_METRICS = tuple(m.indicator for m in PAIRED if m.indicator)
CORRELATED = (("delta_c", "entry_coverage"), ("delta_c", "reference_acceptance"),
              ("entry_coverage", "reference_acceptance"), ("delta_c", "joint_success"),
              ("entry_coverage", "joint_success"), ("h", "joint_success"))


def _outcomes_by_label(store: RunStore) -> dict[str, dict[str, dict[str, tuple[str, str]]]]:
    grouped: dict[str, dict[str, dict[str, tuple[str, str]]]] = defaultdict(lambda: defaultdict(dict))
    for row in store.task_outcomes():
        where = f"task_outcomes row ({row['run_label']}, {row['task_id']}, {row['program_id']})"
        if row["role"] not in M.ROLES:
            raise UserError(f"{where}: unknown role {row['role']!r}")
        if row["status"] not in M.STATUSES:
            raise UserError(f"{where}: unknown status {row['status']!r}")
        grouped[row["run_label"]][row["task_id"]][row["program_id"]] = (row["role"], row["status"])
    return grouped


def _planned_tasks(store: RunStore) -> dict[str, int]:
    """Tasks each run label set out to judge (the split size its run recorded), where known."""
    out = {}
    for run in run_records(store):
        planned = run.config.get("tasks")
        if isinstance(planned, int) and planned >= 0:
            out[run.run_label] = planned
    return out


def _no_submission_as_error(rec: dict[str, tuple[str, str]] | None) -> dict[str, tuple[str, str]] | None:
    """Older stores recorded a task without a suite as "missing" rows: judged as errors now."""
    if not rec:
        return None
    return {pid: (role, "error" if status == "missing" else status) for pid, (role, status) in rec.items()}


def _panel_sizes(outcomes: dict[str, dict[str, dict[str, tuple[str, str]]]]) -> dict[str, tuple[int, int]]:
    """Per task, the alternatives and invalid candidates seen in any run label (the panel is shared)."""
    seen: dict[str, dict[str, str]] = defaultdict(dict)
    for tasks in outcomes.values():
        for task_id, rec in tasks.items():
            seen[task_id].update({pid: role for pid, (role, _) in rec.items()})
    return {t: (sum(r == "alternative" for r in roles.values()), sum(r == "invalid" for r in roles.values()))
            for t, roles in seen.items()}


def _mean_defined(values: list[Any]) -> tuple[float | None, int]:
    defined = [float(v) for v in values if v is not None]
    return (fmean(defined) if defined else None), len(defined)


def collect(store: RunStore) -> dict[str, Any]:
    """Everything the report shows, as plain data (the --json output)."""
    outcomes = _outcomes_by_label(store)
    planned_by_label = _planned_tasks(store)
    results: dict[str, dict[str, dict]] = defaultdict(dict)
    for row in store.task_results():
        results[row["run_label"]][row["task_id"]] = row
    sizes = _panel_sizes(outcomes)
    ledger = {label: (c.tokens, c.calls) for label, c in calls_by_label(store).items()}

    runs, records = [], {}
    per_task: dict[str, dict[str, dict]] = {}  # run label -> metric -> task -> value
    for label in sorted(outcomes.keys() | results.keys()):
        task_ids = sorted(outcomes[label].keys() | results[label].keys())
        tasks = {}
        for t in task_ids:
            submitted = results[label].get(t, {}).get("submitted")
            tasks[t] = _no_submission_as_error(outcomes[label].get(t)) if submitted is False else \
                (outcomes[label].get(t) or None)
        finished, planned = len(task_ids), max(len(task_ids), planned_by_label.get(label, 0))
        # Fixed denominators: tasks of the split not finished yet count in N with no credit.
        m = M.split_metrics({**tasks, **{f"\0unfinished-{i}": None for i in range(planned - finished)}})
        ind = {t: M.task_indicators(rec or {}) for t, rec in tasks.items()}
        per_task[label] = {
            "F": {t: int(i.F) for t, i in ind.items()}, "S": {t: int(i.S) for t, i in ind.items()},
            "A": {t: i.A for t, i in ind.items()}, "R": {t: i.R for t, i in ind.items()},
        }
        records[label] = [_subset_record(tasks[t], sizes.get(t)) for t in task_ids]
        rows = [results[label].get(t, {}) for t in task_ids]
        delta_c, n_dc = _mean_defined([r.get("delta_c") for r in rows])
        entry, n_entry = _mean_defined([r.get("entry_coverage") for r in rows])
        tokens = [n for r in rows if (n := r.get("tokens")) is not None]
        calls = [n for r in rows if (n := r.get("calls")) is not None]
        led_tokens, led_calls = ledger.get(label, (None, None))
        runs.append({
            "run_label": label, **m.as_dict(), "finished": finished, "planned": planned,
            "delta_c": delta_c, "delta_c_missing": m.n - n_dc,
            "entry_coverage": entry, "entry_coverage_missing": m.n - n_entry,
            # per-task totals recorded with the results; the model-call ledger when there are none
            "tokens": int(sum(tokens)) if tokens else (int(led_tokens) if led_tokens is not None else None),
            "calls": int(sum(calls)) if calls else (int(led_calls) if led_calls is not None else None),
        })
    return {
        "runs": runs,
        "incomplete": _incomplete(store),
        "paired": _paired(per_task),
        "correlations": _correlations(runs),
        "curves": _curves(records),
        "served_by_simulation": store.served_by_simulation(),
    }


def _subset_record(rec: dict | None, size: tuple[int, int] | None) -> P.SubsetRecord | None:
    """Counts for the subset expectation; a missing task keeps its panel size and scores 0."""
    if rec:
        return P.subset_record(rec)
    if size is None:
        return None  # no panel recorded for this task anywhere in the run: it cannot bound a schedule
    return P.SubsetRecord(False, size[0], 0, size[1], 0)


def _curves(records: dict[str, list[P.SubsetRecord | None]]) -> dict[str, list[dict]]:
    def curve(recs: list[P.SubsetRecord | None]) -> list[P.CurvePoint]:
        known = [r for r in recs if r is not None]
        return P.panel_curves(known, unknown_panels=len(recs) - len(known)) if known else []

    out = {label: curve(recs) for label, recs in records.items()}
    from testhelix.prism.plots import POOLED  # imported here: plots.py imports matplotlib

    if len(records) > 1:
        out[POOLED] = curve([r for recs in records.values() for r in recs])
    return {label: [p.__dict__ for p in pts] for label, pts in out.items()}


def _paired(per_task: dict[str, dict[str, dict]]) -> list[dict]:
    by_prefix: dict[str, dict[str, str]] = defaultdict(dict)
    for label in per_task:
        match = CONFIG_LABEL.match(label)
        if match:
            by_prefix[match["prefix"]][match["config"]] = label
    rows = []
    for prefix, configs in sorted(by_prefix.items()):
        for x, y in combinations(sorted(configs), 2):   # every pair of configurations the run holds
            lx, ly = configs[x], configs[y]
            tasks = per_task[lx]["F"].keys() | per_task[ly]["F"].keys()
            for metric in PAIRED_METRICS:
                # F and S count over all tasks (a task one side lacks scores 0); A and R pair defined rates
                fill = 0 if by_indicator(metric).over_all_tasks else None
                xs = {t: per_task[lx][metric].get(t, fill) for t in tasks}
                ys = {t: per_task[ly][metric].get(t, fill) for t in tasks}
                d = M.paired_difference(xs, ys)
                rows.append({"prefix": prefix, "from": x, "to": y, "metric": metric, **d.__dict__})
    return rows


def _correlations(runs: list[dict]) -> list[dict]:
    if len(runs) < 3:
        return []
    configs = {r["run_label"]: r for r in runs}
    return [c.__dict__ for c in P.correlation_table(configs, CORRELATED)]


def _incomplete(store: RunStore) -> dict[str, Any]:
    """Evaluations the provider prevented and not finished since (never scored), and the ledger's
    provider errors and SDK retries per run label."""
    try:
        pending = store.unresolved_incomplete()
        trouble = trouble_by_label(store)
    except UserError:            # a store from before these columns existed (opened read-only)
        return {"evaluations": [], "calls": []}
    calls = [asdict(t) for t in trouble if t.errors or t.retries or t.anomalies]
    return {"evaluations": [asdict(p) for p in pending], "calls": calls}
