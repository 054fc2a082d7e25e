"""The helix-run part of a report: metrics per model and configuration, the task × configuration
matrix of F and S, how suites were selected, tokens and cost per task, links to trajectories."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Any

from testhelix.helix.detail import stored_rule
from testhelix.prism.metric_table import COUNTS, METRICS, Metric, by_indicator
from testhelix.store.ledger import usage_by_task
from testhelix.store.runs import run_records
from testhelix.store.runstore import RunStore
from testhelix.view.html import Markup, cost, join, number, pct, section, table, tag
from testhelix.view.trajectories import TrajectoryPages

FIXED_N = ("Fixed-N convention: every rate over all N divides by N, the fixed number of tasks of the run label; "
           "a task without a submitted suite counts as a failure, never as missing. Missing coverage is shown "
           "as missing, never as 0.")


def _metric_cell(metric: Metric, r: dict) -> tuple[str, str]:
    value = r.get(metric.key)
    if metric.shown == "count":
        return (number(value), "num")
    text = pct(value, 2 if metric.key == "h" else 1)
    missing = r.get(metric.missing_key) if metric.missing_key else 0
    return (text + (f" ({missing} missing)" if missing else ""), "num")


def run_configs(store: RunStore) -> dict[str, dict]:
    return {run.run_label: run.config for run in run_records(store, kind="helix")}


def helix_models(store: RunStore) -> list[str]:
    labels = [r["run_label"] for r in store.task_results()]
    return sorted({c.get("model", "") for c in run_configs(store).values()} | {lbl.split("/")[0] for lbl in labels})


def collect_helix(store: RunStore) -> dict[str, Any]:
    """Everything the helix part shows, as plain data (also what MLflow tracking logs)."""
    from testhelix.prism.report import collect  # imported here: the report's statistics import scipy

    data = collect(store)
    configs = run_configs(store)
    results = store.task_results()
    usage = {key: {"input_tokens": u.input_tokens, "output_tokens": u.output_tokens, "calls": u.calls,
                   "cost_usd": u.cost_usd, "cost_unknown": u.cost_unknown, "simulated": u.simulated}
             for key, u in usage_by_task(store).items()}
    rules: dict[str, Counter] = defaultdict(Counter)
    per_task: dict[str, dict[str, dict]] = defaultdict(dict)
    for r in results:
        rule = stored_rule(r["detail"]) or ("not submitted" if not r["submitted"] else "unrecorded")
        rules[r["run_label"]][rule if r["submitted"] else "not submitted"] += 1
        per_task[r["task_id"]][r["run_label"]] = {"F": r["F"], "S": r["S"], "submitted": bool(r["submitted"]),
                                                  "rule": rule, "tokens": r["tokens"], "calls": r["calls"]}
    return {"runs": data["runs"], "paired": data["paired"], "configs": configs,
            "rules": {k: dict(v) for k, v in rules.items()}, "per_task": dict(per_task),
            "usage": {f"{k[0]}|{k[1]}": v for k, v in usage.items()}}


def helix_sections(store: RunStore, pages: TrajectoryPages | None) -> list[Markup]:
    data = collect_helix(store)
    labels = [r["run_label"] for r in data["runs"]]
    return [_metrics(data), _matrix(data, labels, pages), _rules(data, labels), _usage(data, labels)]


def _metrics(data: dict) -> Markup:
    rows = []
    for r in data["runs"]:
        cfg = data["configs"].get(r["run_label"], {})
        rows.append([r["run_label"], cfg.get("model", r["run_label"].split("/")[0]), cfg.get("config", "—"),
                     *(_metric_cell(m, r) for m in (COUNTS[0], *METRICS, *COUNTS[1:]))])
    paired = []
    for p in data["paired"]:
        if by_indicator(p["metric"]).over_all_tasks:
            delta = "—" if p["delta"] is None else f"{100 * p['delta']:+.1f}"
            name = f"{p['metric']} ({by_indicator(p['metric']).abbreviation})"
            paired.append([p["prefix"], f"{p['from']}→{p['to']}", name, (p["n"], "num"), (pct(p["mean_x"]), "num"),
                           (pct(p["mean_y"]), "num"), (delta, "num"), (p["improved"], "num"), (p["worsened"], "num")])
    body = [table(["run label", "model", "config", *(m.label for m in (COUNTS[0], *METRICS, *COUNTS[1:]))], rows,
                  id="metrics"),
            tag("ul", join([tag("li", f"{m.label}: {m.meaning}.") for m in METRICS]), class_="muted"),
            tag("p", FIXED_N, class_="muted")]
    if paired:
        body += [tag("h3", "Paired differences between configurations (points)"),
                 table(["model", "step", "metric", "tasks", "from", "to", "Δ", "better", "worse"], paired)]
    return section("helix-metrics", "Metrics per model and configuration", *body)


def _matrix(data: dict, labels: list[str], pages: TrajectoryPages | None) -> Markup:
    rows = []
    for task in sorted(data["per_task"]):
        cells: list[Any] = [task]
        for label in labels:
            rec = data["per_task"][task].get(label)
            if rec is None:
                cells.append(("not run", "na"))
                continue
            text = f"F{rec['F']} S{rec['S']}" if rec["submitted"] else "no suite"
            link = pages.link(label, task) if pages else None
            content = join([text, " ", tag("a", "trajectories", href=link, class_="traj")]) if link else text
            cls = "ok" if rec["S"] else ("fonly" if rec["F"] else "bad")
            cells.append((tag("span", content, data_task=task, data_label=label, data_f=rec["F"], data_s=rec["S"]), cls))
        rows.append(cells)
    legend = tag("p", "Each cell: F = 1 when the submitted suite fails on the initial program and passes on the reference; "
                      "S = 1 for joint success (also every valid candidate passes and every invalid one fails). "
                      "Green: S=1; yellow: F=1 only; red: neither.", class_="muted")
    return section("helix-matrix", "Task × configuration: F and S",
                   table(["task", *labels], rows, id="matrix"), legend)


def _rules(data: dict, labels: list[str]) -> Markup:
    names = sorted({rule for label in labels for rule in data["rules"].get(label, {})})
    rows = [[label, *((data["rules"].get(label, {}).get(n, 0), "num") for n in names)] for label in labels]
    return section("helix-rules", "How the submitted suite was chosen (selection rule)",
                   table(["run label", *names], rows, id="rules"),
                   tag("p", "witness-support: the suite with the most peer witnesses; fallback: an approved suite with "
                            "reproducible initial failure and a passing own repair; only-qualified: the single locally "
                            "qualified suite; merged: compatible suites sharing passing witnesses, merged; random: "
                            "configuration B's uniform choice; not submitted: no eligible suite.", class_="muted"))


def _usage(data: dict, labels: list[str]) -> Markup:
    rows: list[list] = []
    total: Counter[str] = Counter()
    unknown_total = False
    for task in sorted(data["per_task"]):
        for label in labels:
            u = data["usage"].get(f"{label}|{task}")
            if u is None:
                continue
            total.update({"in": u["input_tokens"], "out": u["output_tokens"], "calls": u["calls"]})
            unknown_total |= u["cost_unknown"]
            rows.append([task, label, (number(u["input_tokens"]), "num"), (number(u["output_tokens"]), "num"),
                         (u["calls"], "num"), (cost(u["cost_usd"], u["cost_unknown"], local=label.startswith("local:")), "num")])
    rows.append([tag("strong", "total"), "", (number(total["in"]), "num"), (number(total["out"]), "num"),
                 (total["calls"], "num"), ("unknown (no price)" if unknown_total else "see rows", "num")])
    return section("helix-usage", "Tokens and cost per task",
                   table(["task", "run label", "input tokens", "output tokens", "model calls", "cost"], rows, id="usage"),
                   tag("p", "From the model-call ledger (provider-reported usage). Cost is unknown, never 0, when a "
                            "model has no price.", class_="muted"))

