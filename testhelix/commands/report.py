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

import json
import re
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from statistics import fmean
from typing import Any

import click

from testhelix import atomic
from testhelix.cliutil import json_option, print_json
from testhelix.commands.report_selection import render_selection_rules, selection_rules
from testhelix.errors import UserError
from testhelix.helix.promotion import describe, recorded_statuses
from testhelix.inputs import OutputFile, PackDir, RunDir
from testhelix.llm.registry import is_simulated
from testhelix.prism import metrics as M
from testhelix.prism import panel as P
from testhelix.store import RunStore

CONFIG_LABEL = re.compile(r"^(?P<prefix>.+)/(?P<config>[A-E])$")
PAIRED_METRICS = ("F", "S", "A", "R")
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
    for label, config in store.query("SELECT run_label, config FROM runs")[1]:
        try:
            planned = (json.loads(config) if isinstance(config, str) else config or {}).get("tasks")
        except (ValueError, AttributeError):
            planned = None
        if isinstance(planned, int) and planned >= 0:
            out[label] = planned
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
    ledger = {r[0]: (r[1], r[2]) for r in store.query(
        "SELECT run_label, sum(coalesce(input_tokens, 0) + coalesce(output_tokens, 0)), count(*) "
        "FROM model_calls GROUP BY run_label")[1]}

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
    from testhelix.prism.plots import POOLED

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
                fill = 0 if metric in ("F", "S") else None
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
def _incomplete(store: RunStore) -> dict[str, Any]:
    """Evaluations the provider prevented and not finished since (never scored), and the ledger's
    provider errors and SDK retries per run label."""
    try:
        pending = store.unresolved_incomplete()
        _, rows = store.query("SELECT run_label, count(*) FILTER (WHERE status = 'error'), sum(coalesce(retries, 0)), "
                              "count(*) FILTER (WHERE anomaly IS NOT NULL) FROM model_calls GROUP BY 1 ORDER BY 1")
    except UserError:            # a store from before these columns existed (opened read-only)
        return {"evaluations": [], "calls": []}
    calls = [{"run_label": r[0], "errors": int(r[1]), "retries": int(r[2] or 0), "anomalies": int(r[3])}
             for r in rows if r[1] or r[2] or r[3]]
    return {"evaluations": pending, "calls": calls}


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


def render_markdown(data: dict[str, Any]) -> str:
    lines = ["# TestPrism report", "",
             "| run | N | Reference Acceptance | Valid Acceptance | Invalid Rejection | H | Joint Success "
             "| ΔC | Entry Coverage | tokens | calls |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in data["runs"]:
        lines.append(
            f"| {r['run_label']} | {_n_cell(r)} | {_pct(r['reference_acceptance'])} | {_pct(r['valid_acceptance'])} "
            f"| {_pct(r['invalid_rejection'])} | {_pct(r['h'])} | {_pct(r['joint_success'])} "
            f"| {_pct_missing(r['delta_c'], r['delta_c_missing'])} "
            f"| {_pct_missing(r['entry_coverage'], r['entry_coverage_missing'])} "
            f"| {'—' if r['tokens'] is None else r['tokens']} | {'—' if r['calls'] is None else r['calls']} |")
    lines += ["", "Rates are task means; VAR and IRR average the defined task rates; H uses both rounded to "
              "two decimals of a percent. Missing coverage is shown as missing, never as 0.", ""]
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
            lines.append(f"| {p['prefix']} | {p['from']}→{p['to']} | {p['metric']} | {p['n']} | {_pct(p['mean_x'])} "
                         f"| {_pct(p['mean_y'])} | {delta} | {p['improved']} | {p['worsened']} | {pval} |")
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
        sql = "SELECT task_id FROM task_results UNION SELECT task_id FROM task_outcomes"
        run_tasks = {row[0] for row in store.query(sql)[1]}
    finally:
        store.close()
    if not data["runs"] and not data["incomplete"]["evaluations"]:
        raise UserError(f"{run_dir}: the run store has no evaluated tasks (task_results / task_outcomes are empty)")
    if pack is not None:
        data["panel_diversity"] = panel_diversity(pack, run_tasks)
    text = render_markdown(data) + "\n" + "\n".join(render_selection_rules(data["selection_rules"]))
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
