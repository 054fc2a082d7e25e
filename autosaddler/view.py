"""The search report (`autosaddler view`): the evolution DAG as a clickable SVG graph, each node's
edit as a diff against its parent, the optimizer's rationale, minibatch outcomes per task with
regressions highlighted, usage per optimizer session, the development score over iterations,
proposals by field or lesson and their fate, and the release gates of the run directory. Each node's
panel (view_node.py) shows the usage of its own step, the optimizer's prompts and replies, and links
to the agent trajectories behind its minibatch and development scores; a search box finds nodes.

The page is built from testhelix.view's escaped building blocks; node positions come from
networkx's multipartite layout (one column per depth), drawn by hand as SVG.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import networkx as nx

from autosaddler.dag import EvolutionDAG, Node
from autosaddler.edits import FieldEdit, LessonEdit, describe
from autosaddler.view_gate import gate_section
from autosaddler.view_node import development_evidence, minibatch_links, node_exchanges, node_usage
from testhelix.core.errors import UserError
from testhelix.store.gates import gate_decisions
from testhelix.store.ledger import usage_by_role
from testhelix.store.runs import has_rows
from testhelix.store.runstore import RunStore
from testhelix.view import write_page
from testhelix.view.html import (
    Markup,
    cost,
    diff,
    join,
    line_chart,
    number,
    page,
    pct,
    pre,
    pretty_json,
    section,
    simulated_sentence,
    table,
    tag,
)
from testhelix.view.source import open_run
from testhelix.view.trajectories import TrajectoryPages

COLOURS = {"root": "#4c72b0", "rejected": "#c44e52", "screened_out": "#aaaaaa", "developed": "#55a868"}
SESSIONS = {"selection": "selection", "optimizer": "diagnosis", "reflection": "reflection"}  # ledger role -> session


def render_search_report(run_dir: Path, out: Path) -> dict:
    run_dir, out = Path(run_dir), Path(out)
    with open_run(run_dir) as opened:
        store = opened.store
        if not has_rows(store, "dag_nodes"):
            raise UserError(f"{run_dir}: no search node recorded yet"
                            + (" (the search is still evaluating the initial strategy; try again later)"
                               if opened.live else " (for a helix run use `testhelix view`)"))
        dag = EvolutionDAG.load(store)
        meta = store.get_state("meta") or {}
        if not isinstance(meta, dict):
            raise UserError(f"{store.path}: search_state row 'meta' is not an object")
        sessions = _session_ledger(store)
        gates = has_rows(store, "gate_results")
        models = [meta.get("model", ""), meta.get("optimizer_model", "")] + ([g.model for g in gate_decisions(store)]
                                                                            if gates else [])
        pages = TrajectoryPages(out, run_dir)
        body = [_summary(dag, meta), _dag_section(dag, store, pages), _learning_curve(dag), _proposals(dag),
                _usage(dag, sessions)]
        nav = [("summary", "summary"), ("dag", "evolution DAG"), ("dev", "learning curve"),
               ("proposals", "proposals"), ("usage", "optimizer usage")]
        if gates:
            body.append(gate_section(store, run_dir))
            nav.append(("gate", "release gate"))
        sentence = simulated_sentence(models, store.served_by_simulation().values())
        text = page(f"AutoSaddler search: {run_dir.name}", body, simulated=sentence,
                    live=opened.live, subtitle=f"run directory {run_dir}", nav=nav)
    write_page(out, text)
    s = dag.summary()
    return {"out": str(out), "bytes": out.stat().st_size, "nodes": s["nodes"], "edges": s["edges"],
            "best": s["best"], "simulated": bool(sentence), "in_progress": opened.live is not None,
            "trajectory_pages": pages.written}


# --- sections ------------------------------------------------------------------------------------
def _summary(dag: EvolutionDAG, meta: dict) -> Markup:
    s = dag.summary()
    best = s["best"]
    rows = [["execution model", meta.get("model", "—")], ["optimizer model", meta.get("optimizer_model", "—")],
            ["pack", meta.get("pack", "—")], ["preset", meta.get("preset", "—")],
            ["nodes / edges", f"{s['nodes']} / {s['edges']}"],
            ["status", ", ".join(f"{k} {v}" for k, v in s["status"].items())],
            ["best (development)", "—" if best is None else
             f"{best['node']}: {pct(best['dev_score'])} at depth {best['depth']} (initial {pct(_root_dev(dag))})"]]
    cfg = meta.get("config") or {}
    keys = ("train_minibatch_size", "completed_train_iterations", "max_candidate_proposals", "development_limit",
            "helix_config", "seed")
    rows += [[k, cfg[k]] for k in keys if k in cfg]
    return section("summary", "Summary", table(None, rows, class_="kv", id="summary-table"),
                   tag("p", "Freezing picks the best development score; ties go to fewer edits from the root, then "
                            "the earliest. The development split ranks candidates, so it is an optimization signal; "
                            "only the release gate is independent evidence.", class_="muted"))


def _root_dev(dag: EvolutionDAG) -> float | None:
    roots = [n for n in dag.nodes() if n.status == "root"]
    return roots[0].dev_score if roots else None


def layout(dag: EvolutionDAG) -> dict[str, tuple[float, float]]:
    """Pixel positions: one column per depth from the root (networkx shortest paths), the nodes of a
    column in iteration order, columns centred on the tallest."""
    roots = [n.node_id for n in dag.nodes() if dag.parent(n.node_id) is None]
    depth: dict[str, int] = {}
    for root in roots:
        for nid, d in nx.single_source_shortest_path_length(dag.graph, root).items():
            depth.setdefault(nid, d)
    columns: dict[int, list[str]] = defaultdict(list)
    for n in dag.nodes():  # iteration order
        columns[depth.get(n.node_id, 0)].append(n.node_id)
    tallest = max(len(c) for c in columns.values())
    pos = {}
    for d, ids in columns.items():
        offset = (tallest - len(ids)) * 80 / 2
        for i, nid in enumerate(ids):
            pos[nid] = (70.0 + 170 * d, 50.0 + offset + 80 * i)
    return pos


def _radius(node: Node) -> float:
    return 10 + 16 * node.dev_score if node.dev_score is not None else 9


def _dag_section(dag: EvolutionDAG, store: RunStore, pages: TrajectoryPages | None) -> Markup:
    pos = layout(dag)
    width = max(x for x, _ in pos.values()) + 110
    height = max(y for _, y in pos.values()) + 60
    parts: list[Any] = [Markup('<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" '
                               'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
                               'fill="#8a94a3"/></marker></defs>')]
    for a, b in sorted(dag.graph.edges()):
        (x1, y1), (x2, y2) = pos[a], pos[b]
        ra, rb = _radius(dag.node(a)), _radius(dag.node(b))
        length = max(((x2 - x1) ** 2 + (y2 - y1) ** 2) ** 0.5, 1)
        ux, uy = (x2 - x1) / length, (y2 - y1) / length
        parts.append(tag("line", class_="edge", x1=f"{x1 + ux * ra:.1f}", y1=f"{y1 + uy * ra:.1f}",
                         x2=f"{x2 - ux * (rb + 2):.1f}", y2=f"{y2 - uy * (rb + 2):.1f}", marker_end="url(#arrow)",
                         data_parent=a, data_child=b))
    best = dag.best().node_id if dag.developed() else None
    for n in dag.nodes():
        x, y = pos[n.node_id]
        label = pct(n.dev_score) if n.dev_score is not None else n.status.replace("_", " ")
        parts.append(tag("g", tag("title", f"{n.node_id} ({n.status}) {describe(n.edit)}"),
                         tag("circle", cx=f"{x:.1f}", cy=f"{y:.1f}", r=f"{_radius(n):.1f}", fill=COLOURS.get(n.status, "#777")),
                         tag("text", n.node_id + (" ★" if n.node_id == best else ""), x=f"{x:.1f}",
                             y=f"{y - _radius(n) - 4:.1f}", text_anchor="middle"),
                         tag("text", label, x=f"{x:.1f}", y=f"{y + _radius(n) + 12:.1f}", text_anchor="middle"),
                         class_="node" + (" selected" if n.node_id == best else ""), data_node=n.node_id,
                         data_status=n.status, data_dev="" if n.dev_score is None else f"{n.dev_score:.6g}",
                         data_text=f"{n.node_id} {n.status} {describe(n.edit)} {n.reason}".lower(),
                         tabindex=0))
    svg = tag("svg", *parts, viewBox=f"0 0 {width:.0f} {height:.0f}", width=f"{width:.0f}", height=f"{height:.0f}",
              class_="dag", id="dag-svg", role="img")
    legend = tag("div", *(tag("span", tag("span", "", class_="swatch", style=f"background:{c}"), s.replace("_", " "))
                          for s, c in COLOURS.items()),
                 " · size and label: development score · ★ best · click a node", class_="legend")
    details = tag("div", *(_detail(dag, n, store, pages, hidden=n.node_id != (best or dag.nodes()[0].node_id))
                           for n in dag.nodes()), class_="details")
    search = tag("p", tag("label", "Find a node (id, status or edit): ", tag(
        "input", type="search", id="node-search", placeholder="e.g. n012, rejected, agentSteps, lesson",
        size=40)), tag("span", "", id="node-search-count", class_="muted"))
    return section("dag", "Evolution DAG", legend, search, tag("div", svg, details, class_="dagwrap"))


def _detail(dag: EvolutionDAG, n: Node, store: RunStore, pages: TrajectoryPages | None, hidden: bool) -> Markup:
    parent_id = dag.parent(n.node_id)
    parent = dag.node(parent_id) if parent_id else None
    facts: list[list[object]] = [
        ["status", n.status], ["reason", n.reason or "—"], ["iteration", n.iteration],
        ["parent", parent_id or "— (the initial strategy)"], ["edits from the root", dag.depth(n.node_id)],
        ["development score", pct(n.dev_score) if n.dev_score is not None else "not evaluated (only children "
         "that pass the screen are)"], ["strategy hash", n.strategy_hash[:16]], ["elapsed", f"{n.elapsed_s:.1f} s"]]
    parts: list[Any] = [tag("h3", f"{n.node_id}: {describe(n.edit)}"), table(None, facts, class_="kv")]
    if n.edit:
        rationale = n.edit.rationale if isinstance(n.edit, (FieldEdit, LessonEdit)) else ""
        parts += [tag("h3", "Optimizer's diagnosis and rationale"),
                  pre(rationale or "(the optimizer gave no rationale)", cls="rationale")]
        if parent is not None and n.strategy_hash != parent.strategy_hash:
            parts += [tag("h3", f"The edit as a diff against {parent_id}"),
                      diff(pretty_json(parent.strategy), pretty_json(n.strategy), f"{parent_id}", n.node_id)]
        else:
            parts += [tag("h3", "The proposed edit (not applied)"),
                      pre(pretty_json(n.edit.model_dump(mode="json", exclude_none=True, exclude={"rationale"})))]
    parts += [_minibatch(n, parent, pages), development_evidence(store, pages, n), node_usage(dag, n),
              node_exchanges(store, n), tag("details", tag("summary", "whole strategy"), pre(pretty_json(n.strategy)))]
    return tag("div", *parts, class_="detail", data_node=n.node_id, id=f"detail-{n.node_id}", hidden=hidden)


def _minibatch(n: Node, parent: Node | None, pages: TrajectoryPages | None) -> Markup:
    parent_id = parent.node_id if parent is not None else None
    tasks = sorted(n.parent_outcomes.keys() | n.child_outcomes.keys())
    if not tasks:
        return tag("p", "No minibatch for this node.", class_="muted")
    rows, regressions = [], 0
    for t in tasks:
        p, c = n.parent_outcomes.get(t), n.child_outcomes.get(t)
        change, cls = "", None
        if p is not None and c is not None and p != c:
            change, cls = ("regression", "regression") if p > c else ("new success", "gain")
            regressions += p > c
        rows.append([t, ("—" if p is None else p, "num"), ("—" if c is None else c, "num"), (change, cls),
                     *minibatch_links(pages, parent, n, t)])
    ps, cs = sum(n.parent_outcomes.values()), sum(n.child_outcomes.values())
    head = (f"Minibatch: parent {parent_id} {ps} → child {cs} successes on {len(tasks)} tasks, {regressions} "
            f"regression(s). The screen passes a child only with strictly more successes and no regression.")
    return join([tag("h3", "Minibatch outcomes per task"), tag("p", head),
                 table(["task", f"parent {parent_id}", f"child {n.node_id}", "change", "parent's agent runs",
                        "child's agent runs"], rows,
                       class_="minibatch", id=f"minibatch-{n.node_id}")])


def _learning_curve(dag: EvolutionDAG) -> Markup:
    """Every evaluated node in node order: its minibatch success rate (every child that was
    evaluated, screened out or not), its development score (children that passed the screen), and the
    best development score so far. A rejected proposal was never evaluated; it is drawn at 0 in its
    own series so that the curve shows every proposal."""
    order = sorted(dag.nodes(), key=lambda m: (m.iteration, m.node_id))
    minibatch: list[tuple[float, float]] = []
    developed: list[tuple[float, float]] = []
    rejected: list[tuple[float, float]] = []
    best: list[tuple[float, float]] = []
    running = None
    rows = []
    for i, n in enumerate(order):
        mb = (sum(n.child_outcomes.values()) / len(n.child_outcomes)) if n.child_outcomes else None
        if mb is not None:
            minibatch.append((i, mb))
        if n.dev_score is not None:
            developed.append((i, n.dev_score))
            running = n.dev_score if running is None else max(running, n.dev_score)
        if n.status == "rejected":
            rejected.append((i, 0.0))
        if running is not None:
            best.append((i, running))
        rows.append([n.node_id, (i, "num"), n.status, (pct(mb) if mb is not None else "—", "num"),
                     (pct(n.dev_score) if n.dev_score is not None else "—", "num"), describe(n.edit)])
    title = "Learning curve: every node, in order"
    if not minibatch and not developed:
        return section("dev", title, tag("p", "No node evaluated yet."))
    chart = line_chart({"minibatch success (every evaluated child)": minibatch, "development score": developed,
                        "best development so far": best, "rejected (not evaluated; drawn at 0)": rejected},
                       "node (in order)", "success rate", chart_id="dev-chart")
    return section("dev", title, chart,
                   tag("p", "The minibatch rate is on the parent's few tasks (the screen); the development score "
                            "on the development split, for children that passed the screen.", class_="muted"),
                   table(["node", "order", "status", "minibatch success", "development score", "edit"], rows,
                         id="dev-table"))


def proposal_kind(n: Node) -> str:
    e = n.edit
    if isinstance(e, FieldEdit):
        return f"field {e.field}"
    if isinstance(e, LessonEdit):
        return f"lesson {e.op}"
    return "unparsed proposal"


def _proposals(dag: EvolutionDAG) -> Markup:
    fates = ("rejected", "screened_out", "developed")
    counts: dict[str, Counter] = defaultdict(Counter)
    best: dict[str, float] = {}
    lessons = []
    for n in dag.nodes():
        if n.status == "root":
            continue
        kind = proposal_kind(n)
        counts[kind][n.status] += 1
        if n.dev_score is not None:
            best[kind] = max(best.get(kind, 0.0), n.dev_score)
        if isinstance(n.edit, LessonEdit):
            lesson = n.edit.lesson or {}
            lessons.append([n.node_id, n.edit.op, lesson.get("id") or n.edit.lesson_id,
                            ", ".join(map(str, lesson.get("triggers") or [])), n.status, n.reason])
    rows = [[kind, *((c[f], "num") for f in fates), (sum(c.values()), "num"), (pct(best.get(kind)), "num")]
            for kind, c in sorted(counts.items())]
    parts = [table(["proposal", "rejected", "screened out", "developed", "total", "best development"], rows,
                   id="proposals-table")]
    if lessons:
        parts += [tag("h3", "Lessons proposed"), table(["node", "op", "lesson", "triggers", "fate", "reason"], lessons)]
    return section("proposals", "Proposals by field or lesson, and their fate", *parts)


def _session_ledger(store: RunStore) -> list[dict]:
    return [{"session": SESSIONS.get(role, role), "calls": u.calls, "input": u.input_tokens,
             "output": u.output_tokens, "cost": u.cost_usd, "unknown": u.cost_unknown, "not_ok": u.not_ok}
            for role, u in usage_by_role(store, "optimizer").items()]


def _usage(dag: EvolutionDAG, sessions: list[dict]) -> Markup:
    rows = [[s["session"], (s["calls"], "num"), (number(s["input"]), "num"), (number(s["output"]), "num"),
             (cost(s["cost"], s["unknown"]), "num")] for s in sessions]
    gen_tokens = sum((n.generator_usage or {}).get("tokens", 0) for n in dag.nodes())
    return section("usage", "Usage and cost per optimizer session",
                   table(["session", "calls", "input tokens", "output tokens", "cost"], rows, id="sessions-table")
                   if rows else tag("p", "No optimizer call recorded.", class_="muted"),
                   tag("p", f"Per proposal, see each node's panel. Execution-model tokens recorded with the "
                            f"nodes' minibatch evaluations, summed: {number(gen_tokens)}. "
                            "Cost is unknown, never 0, when a model has no price.",
                       class_="muted"))

