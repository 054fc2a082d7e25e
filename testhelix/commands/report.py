"""`testhelix report RUN_DIR [--json] [--curves OUT.png] [--pack PACK]`: TestPrism metrics of a run.

Reads the run's store (task_outcomes and task_results, grouped by run_label), recomputes every
metric from the recorded outcomes with testhelix.prism.metrics, and prints one Markdown table row
per run_label. Run labels that end in /A ... /E under a shared prefix (one model, five
configurations) also get the paired differences A→B, B→C, C→D and C→E. The report is written to
RUN_DIR/report.md, and the panel-size curves to RUN_DIR/panel_curves.png (and to --curves).
With --pack, the panels of the run's tasks are read from the pack and their AST-feature Jaccard
diversity is reported too (the store keeps outcomes, not programs).
"""

from __future__ import annotations

from pathlib import Path
from statistics import fmean
from typing import Any

import click

from testhelix.commands.plumbing import json_option, print_json
from testhelix.commands.report_selection import render_selection_rules, selection_rules
from testhelix.core import atomic
from testhelix.core.errors import UserError
from testhelix.core.inputs import OutputFile, PackDir, RunDir
from testhelix.helix.external import external_summaries, render_external
from testhelix.helix.promotion import describe, recorded_statuses
from testhelix.llm.registry import is_simulated
from testhelix.prism import panel as P
from testhelix.prism.metric_table import COUNTS, METRICS, Metric, by_indicator
from testhelix.prism.report import collect
from testhelix.store.runs import judged_task_ids
from testhelix.store.runstore import RunStore


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.2f}%"


def _pct_missing(v: float | None, missing: int) -> str:
    return _pct(v) + (f" ({missing} missing)" if missing else "")


def panel_diversity(pack: Path, task_ids: set[str]) -> dict[str, Any]:
    """Mean pairwise AST-feature Jaccard distance of each run task's panel (reference + candidates),
    and the Fig. 3(a) prefix diversity by addition schedule."""
    from testhelix.tasks.task import load_pack

    tasks = [t for t in load_pack(pack) if t.id in task_ids]
    features = {t.id: {c.id: f for c, f in zip(t.candidates, P.program_features(c.artifact for c in t.candidates))}
                for t in tasks}
    per_task = {t.id: round(P.panel_diversity(list(features[t.id].values())), 4) for t in tasks}
    values = list(per_task.values())
    return {"pack": str(pack), "n": len(values), "not_in_pack": len(task_ids - per_task.keys()),
            "mean": round(fmean(values), 4) if values else None, "min": min(values, default=None),
            "max": max(values, default=None), "per_task": per_task,
            "prefix": prefix_diversity_curves(tasks, features)}


def prefix_diversity_curves(tasks: list, features: dict[str, dict[str, frozenset[str]]]) -> dict[str, list[dict]]:
    """Fig. 3(a): for each task, candidates are added to the reference in a uniformly random order
    from the schedule's label pools (seed 42, testhelix.prism.panel.addition_order); the diversity of
    each nested prefix (the mean pairwise AST Jaccard distance, 0 for the reference alone) is averaged
    with equal weight over the tasks that reach k = 1 + j, up to the largest k any task reaches (the
    rule of the expected-joint curves: `tasks` says how many are averaged; past the smallest panel that
    is fewer than all). The pools bound k: with 4 alternatives and 5 invalid candidates per task, as
    in the bundled packs, valid stops at k = 5, invalid at 6 and alternating at 10."""
    out: dict[str, list[dict]] = {}
    for schedule in P.SCHEDULES:
        prefixes = []
        for t in tasks:
            own = features[t.id]
            valid = [c.id for c in t.candidates if c.role == "alternative"]
            invalid = [c.id for c in t.candidates if c.role == "invalid"]
            order = P.addition_order(valid, invalid, schedule, seed=42)
            prefixes.append(P.prefix_diversity(own[t.reference.id], [own[c] for c in order]))
        reach = max((len(p) for p in prefixes), default=0)
        out[schedule] = [{"k": j + 1, "diversity": round(fmean(p[j] for p in prefixes if len(p) > j), 4),
                          "tasks": sum(len(p) > j for p in prefixes), "all_tasks": len(prefixes)}
                         for j in range(reach)]
    return out


def render_curves(curves: dict[str, list[dict]]) -> list[str]:
    """The panel-size curves as text: each point with the number of tasks it averages when that is
    fewer than all, and where and why each schedule ends."""
    if not any(curves.values()):
        return []
    lines = ["## Panel-size curves (expected joint score)", "",
             "The expected Joint Success Function when the suite faces a random panel of size k: the "
             "reference plus k − 1 candidates drawn by the schedule (valid: alternatives only; invalid: invalid "
             "candidates only; alternating: invalid, valid, invalid, ...). A curve ends at the largest k that "
             "some task's panel supplies, never beyond: a larger panel would need candidates no task has. Where "
             "only some tasks' panels are that large, the point averages those tasks alone and says how many "
             "(a different, smaller set than the points before it); nothing is extrapolated.", ""]
    for label, points in curves.items():
        for schedule in P.SCHEDULES:
            pts = [p for p in points if p["schedule"] == schedule]
            if not pts:
                continue
            cells = [f"k={p['k']} {_pct(p['expected_joint'])}"
                     + ("" if p["tasks"] == p["all_tasks"] else f" ({p['tasks']} of {p['all_tasks']} tasks)")
                     for p in pts]
            last = pts[-1]
            lines.append(f"- {label}, {schedule}: " + ", ".join(cells) + f"; ends at k = {last['k']} "
                         f"({last['a']} alternatives and {last['b']} invalid candidates drawn; no task's panel "
                         "supplies the next draw)")
    lines.append("")
    return lines


def _n_cell(r: dict) -> str:
    """N, or finished/planned while a run is incomplete (its rates still divide by planned)."""
    finished, planned = r.get("finished", r["n"]), r.get("planned", r["n"])
    return str(planned) if finished >= planned else f"{finished}/{planned}"
def render_incomplete(inc: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if inc["evaluations"]:
        lines += [f"## Incomplete evaluations: {len(inc['evaluations'])} (not scored; rerun or resume to retry)", "",
                  "| run | task | cause | attempts | last error |", "|---|---|---|---:|---|"]
        lines += [f"| {e['run_label']} | {e['task_id']} | {e['cause']} | {e['attempts']} | "
                  f"{' '.join(str(e['error']).split())[:120].replace('|', '/')} |" for e in inc["evaluations"]]
        lines.append("")
    if inc["calls"]:
        lines += ["## Provider errors in the ledger", "", "| run | failed calls | SDK retries | anomalies |",
                  "|---|---:|---:|---:|"]
        lines += [f"| {c['run_label']} | {c['errors']} | {c['retries']} | {c['anomalies']} |" for c in inc["calls"]]
        lines.append("")
    return lines


def _metric_cell(metric: Metric, row: dict[str, Any]) -> str:
    value = row.get(metric.key)
    if metric.shown == "count":
        return _n_cell(row) if metric.key == "n" else ("—" if value is None else str(value))
    if metric.missing_key:
        return _pct_missing(value, row.get(metric.missing_key) or 0)
    return _pct(value)


def _paired_name(indicator: str) -> str:
    """A paired row's metric: the per-task indicator and the split metric it averages, e.g. `F (RAR)`."""
    return f"{indicator} ({by_indicator(indicator).abbreviation})"


def render_metric_table(runs: list[dict[str, Any]]) -> list[str]:
    """One row per run label, the columns of the metric table (testhelix/prism/metric_table.py)."""
    columns = [COUNTS[0], *METRICS, *COUNTS[1:]]
    lines = ["| run | " + " | ".join(m.label for m in columns) + " |",
             "|---|" + "---:|" * len(columns)]
    lines += ["| " + " | ".join([r["run_label"], *(_metric_cell(m, r) for m in columns)]) + " |" for r in runs]
    return lines


def render_glossary() -> list[str]:
    """The metric key below the table: the same words as the README's glossary."""
    return [f"- {m.label}: {m.meaning}." for m in METRICS]


def render_markdown(data: dict[str, Any]) -> str:
    lines = ["# TestPrism report", "", *render_metric_table(data["runs"])]
    lines += ["", *render_glossary(), "", "Rates are task means over the split; missing coverage is shown as "
              "missing, never as 0.", ""]
    served = data.get("served_by_simulation") or {}
    simulated_runs = [r["run_label"] for r in data["runs"]
                      if is_simulated(r["run_label"].split("/")[0]) or r["run_label"] in served]
    if simulated_runs:
        lines += [f"Runs {', '.join(f'`{label}`' for label in simulated_runs)} used simulated models: "
                  "deterministic test doubles, not real models. "
                  "Their numbers measure the simulation and the harness, not any model's ability.", ""]
    lines += render_incomplete(data.get("incomplete") or {"evaluations": [], "calls": []})
    if data.get("configuration_e"):
        lines += ["## Configuration E: was its strategy promoted?", ""]
        lines += [f"- `{label}`: {describe(status)}" for label, status in sorted(data["configuration_e"].items())]
        lines.append("")
    div = data.get("panel_diversity")
    if div:
        summary = ("no task of the run is in the pack" if div["mean"] is None else
                   f"mean {div['mean']:.3f} (min {div['min']:.3f}, max {div['max']:.3f}) over {div['n']} tasks")
        lines += ["## Panel diversity", "", f"Mean pairwise AST-feature Jaccard distance of each task's panel "
                  f"(reference and candidates) in `{div['pack']}`: {summary}"
                  + (f"; {div['not_in_pack']} run tasks are not in that pack." if div["not_in_pack"] else "."), ""]
        if any(div.get("prefix", {}).values()):
            lines += ["Prefix diversity by addition schedule (Fig. 3(a)): candidates added to the reference in a "
                      "random order (seed 42) from the schedule's pools, mean over tasks at each panel size k", ""]
            for schedule, points in div["prefix"].items():
                lines.append(f"- {schedule}: " + ", ".join(
                    f"k={p['k']} {p['diversity']:.3f}"
                    + ("" if p["tasks"] == p["all_tasks"] else f" ({p['tasks']} of {p['all_tasks']} tasks)")
                    for p in points))
            lines.append("")
    if data["paired"]:
        lines += ["## Paired differences (to − from, percentage points)", "",
                  "| model | step | metric | tasks | from | to | Δ | better | worse | sign-test p |",
                  "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for p in data["paired"]:
            delta = "—" if p["delta"] is None else f"{100 * p['delta']:+.2f}"
            pval = "—" if p["sign_test_p"] is None else f"{p['sign_test_p']:.3g}"
            lines.append(f"| {p['prefix']} | {p['from']}→{p['to']} | {_paired_name(p['metric'])} | {p['n']} "
                         f"| {_pct(p['mean_x'])} | {_pct(p['mean_y'])} | {delta} | {p['improved']} | {p['worsened']} "
                         f"| {pval} |")
        lines.append("")
    lines += render_curves(data.get("curves") or {})
    if data["correlations"]:
        lines += ["## Correlations across configurations", "",
                  "| x | y | n | Pearson r | Spearman ρ |", "|---|---|---:|---:|---:|"]
        for c in data["correlations"]:
            r = "—" if c["pearson_r"] is None else f"{c['pearson_r']:.2f}"
            rho = "—" if c["spearman_rho"] is None else f"{c['spearman_rho']:.2f}"
            lines.append(f"| {c['x']} | {c['y']} | {c['n']} | {r} | {rho} |")
        lines.append("")
    return "\n".join(lines)


@click.command("report")
@click.argument("run_dir", type=RunDir())
@json_option
@click.option("--curves", "curves_png", type=OutputFile(),
              help="Also draw the panel-size curves (expected joint score vs panel size) to this PNG.")
@click.option("--pack", type=PackDir(),
              help="Task pack of the run: adds the AST-feature diversity of the tasks' panels.")
def command(run_dir: Path, as_json: bool, curves_png: Path | None, pack: Path | None) -> None:
    """Print TestPrism metrics per run label of RUN_DIR and write RUN_DIR/report.md."""
    store = RunStore(run_dir, read_only=True)
    try:
        kinds = store.kinds()
        if kinds & {"search", "gtdd"} and not kinds & {"helix", "evaluate"}:
            store.require_kind("helix", "testhelix report")  # a search or GTDD folder: say so in one line
        data = collect(store)
        data["selection_rules"] = selection_rules(store)
        data["configuration_e"] = recorded_statuses(store)
        data["external_agents"] = external_summaries(store)
        run_tasks = judged_task_ids(store)
    finally:
        store.close()
    if not data["runs"] and not data["incomplete"]["evaluations"]:
        raise UserError(f"{run_dir}: the run store has no evaluated tasks (task_results / task_outcomes are empty)")
    if pack is not None:
        data["panel_diversity"] = panel_diversity(pack, run_tasks)
    text = render_markdown(data) + "\n" + "\n".join(render_selection_rules(data["selection_rules"])
                                                   + render_external(data["external_agents"]))
    atomic.write_text(Path(run_dir) / "report.md", text + "\n")
    data["report"] = str(Path(run_dir) / "report.md")
    if any(data["curves"].values()):
        from testhelix.prism.plots import plot_panel_curves

        points = {label: [P.CurvePoint(**p) for p in pts] for label, pts in data["curves"].items()}
        data["figures"] = [str(plot_panel_curves(points, Path(run_dir) / "panel_curves.png"))]
        if curves_png is not None:
            data["figures"].append(str(plot_panel_curves(points, curves_png)))
    elif curves_png is not None:
        raise UserError(f"--curves {curves_png}: no task in the run has recorded panel outcomes to draw")
    if as_json:
        print_json(data)
    else:
        click.echo(text)
        for fig in data.get("figures", []):
            click.echo(f"figure: {fig}")
