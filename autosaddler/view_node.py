"""Parts of a node's panel on the search page (autosaddler/view.py): what the node's own step used,
the optimizer's prompts and replies (folded), and links to the agent trajectories behind its
minibatch and development scores.

Usage: each node records what ITS step used (`ModelOptimizer.usage()` starts afresh per step), so
the panel shows the node's own numbers as stored, and a running total in node order.
"""

from __future__ import annotations

from typing import Any

from autosaddler.dag import EvolutionDAG, Node
from autosaddler.search import exchanges_key
from autosaddler.store import development_successes
from testhelix.store.runstore import RunStore
from testhelix.view.html import Markup, join, number, pre, table, tag
from testhelix.view.trajectories import TrajectoryPages


def search_label(strategy_hash: str) -> str:
    """The run label a search evaluation of this strategy ran under (autosaddler/evaluator.py)."""
    return f"search/{strategy_hash[:12]}"


def node_usage(dag: EvolutionDAG, n: Node) -> Markup:
    order = sorted(dag.nodes(), key=lambda m: (m.iteration, m.node_id))
    upto = order[: order.index(n) + 1] if n in order else [n]
    rows = []
    for session, own in sorted((n.optimizer_usage or {}).items()):
        so_far = sum(int((m.optimizer_usage or {}).get(session, {}).get("tokens") or 0) for m in upto)
        rows.append([session, (own.get("calls", 0), "num"), (number(own.get("tokens", 0)), "num"),
                     (own.get("failures", 0), "num"), (number(so_far), "num")])
    gen = n.generator_usage or {}
    return join([tag("h3", "Usage for this proposal"),
                 table(["optimizer session", "calls", "tokens", "failures", "tokens so far (all nodes)"], rows,
                       class_="node-usage", data_node=n.node_id) if rows else
                 tag("p", "No optimizer session (the initial strategy).", class_="muted"),
                 tag("p", f"Execution model on the minibatch: {number(gen.get('tokens'))} tokens in "
                          f"{number(gen.get('calls'))} calls.", class_="muted")])


def node_exchanges(store: RunStore, n: Node) -> Markup:
    """The optimizer's prompts and replies of this node's step, each folded."""
    recorded = store.get_state(exchanges_key(n.node_id))
    if not isinstance(recorded, list) or not recorded:
        return Markup("") if n.edit is None else tag(
            "p", "No optimizer prompt recorded for this node (recorded by searches from this version on).",
            class_="muted")
    parts: list[Any] = [tag("h3", "Optimizer prompts and replies")]
    for i, ex in enumerate(recorded, 1):
        if not isinstance(ex, dict):
            continue
        prompt = [tag("div", tag("div", str(m.get("role", "")), class_="role"), pre(str(m.get("content", ""))),
                      class_=f"msg {m.get('role', '')}")
                  for m in ex.get("prompt") or () if isinstance(m, dict)]
        answer = (pre(str(ex["reply"])) if ex.get("reply") is not None
                  else tag("p", f"no reply: {ex.get('failure') or 'failed'}", class_="muted"))
        parts.append(tag("details", tag("summary", f"{i}. {ex.get('session', '?')} session"
                                                    + ("" if ex.get("reply") is not None else " (failed)")),
                         tag("details", tag("summary", f"prompt ({len(prompt)} messages)"), *prompt),
                         tag("div", tag("div", "reply", class_="role"), answer, class_="msg assistant"),
                         class_="exchange"))
    return join(parts)


def _link(pages: TrajectoryPages | None, label: str, task_id: str) -> Markup | str:
    target = pages.link(label, task_id) if pages is not None else None
    return tag("a", "trajectories", href=target, class_="trajectory") if target else "—"


def minibatch_links(pages: TrajectoryPages | None, parent: Node | None, n: Node, task_id: str) -> list[Any]:
    """Links to the parent's and the child's trajectories on one minibatch task."""
    return [_link(pages, search_label(parent.strategy_hash), task_id) if parent is not None else "—",
            _link(pages, search_label(n.strategy_hash), task_id) if n.child_outcomes else "—"]


def development_evidence(store: RunStore, pages: TrajectoryPages | None, n: Node) -> Markup:
    """The development tasks behind the node's score, each with its outcome and trajectories."""
    if n.dev_score is None:
        return Markup("")
    rows = development_successes(store, n.strategy_hash)
    if not rows:
        return tag("p", "The development evaluations behind this score are not in this store.", class_="muted")
    label = search_label(n.strategy_hash)
    body = [[r.task_id, (r.success, "num"), _link(pages, label, r.task_id)] for r in rows]
    return join([tag("h3", "Development tasks behind the score"),
                 table(["task", "success", "agent runs"], body, class_="dev-evidence", data_node=n.node_id)])
