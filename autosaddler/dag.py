"""The evolution DAG: every proposal is a node, every parent relation an edge.

It lives in a networkx DiGraph in memory and is written to the run's DuckDB after every step, in
one transaction per step, so a crash never leaves half a step behind.

A node's `edit` is an `autosaddler.edits.Edit` and is stored as its JSON (`edit.model_dump`).
Stores written before that type stored every edit key with nulls, and a rejected proposal as the
optimizer's raw object; `parse_edit` reads both shapes, so older runs load unchanged.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

import networkx as nx

from autosaddler import store as search_store
from autosaddler.edits import Edit, parse_edit
from testhelix.core.errors import UserError
from testhelix.store.runstore import RunStore

STATUSES = ("root", "rejected", "screened_out", "developed")


class GeneratorUsage(TypedDict, total=False):
    """What the step's task evaluations used (empty when the evaluator reports no usage)."""

    tokens: int
    calls: int


@dataclass(frozen=True)
class Node:
    node_id: str
    iteration: int
    strategy_hash: str
    # the strategy's JSON as recorded; `load` checks it against the Strategy schema and its hash,
    # and it stays JSON so that a stored node reads back byte for byte (its hash is the identity)
    strategy: dict[str, Any]
    edit: Edit | None
    status: str
    reason: str = ""
    parent_outcomes: dict[str, int] = field(default_factory=dict)    # task id -> F_i on the minibatch
    child_outcomes: dict[str, int] = field(default_factory=dict)
    dev_score: float | None = None
    # per session, what the optimizer reported (`OptimizerUsage` from the model-driven optimizer);
    # kept as the stored JSON because a plug-in optimizer and older stores report other shapes
    optimizer_usage: dict[str, Any] = field(default_factory=dict)
    generator_usage: GeneratorUsage = field(default_factory=lambda: GeneratorUsage())
    elapsed_s: float = 0.0

    def __post_init__(self) -> None:
        if self.edit is not None:   # a plain object (a stored row, a test's dict) is parsed once here
            object.__setattr__(self, "edit", parse_edit(self.edit))

    def to_json(self) -> dict:
        """The node as plain JSON values (the edit as its model dump)."""
        row = {f: getattr(self, f) for f in self.__dataclass_fields__}
        row["edit"] = None if self.edit is None else self.edit.model_dump(mode="json")
        return row


_JSON_COLS = ("strategy", "edit", "parent_outcomes", "child_outcomes", "optimizer_usage", "generator_usage")
SESSION_COLUMNS = ("calls", "input_tokens", "output_tokens", "tokens", "cost_usd", "failures", "timeouts",
                   "elapsed_s", "timeout_s")


def session_usage_rows(node: Node) -> dict[str, dict]:
    """The node's per-session optimizer usage (`Node.optimizer_usage` maps a session name to its
    calls, tokens, cost, failures, timeouts, elapsed and limit seconds) as optimizer_sessions rows."""
    rows = {}
    for session, usage in (node.optimizer_usage or {}).items():
        if isinstance(usage, dict):
            rows[session] = {c: usage.get(c) for c in SESSION_COLUMNS}
    return rows


class EvolutionDAG:
    def __init__(self) -> None:
        self.graph: nx.DiGraph[str] = nx.DiGraph()  # node ids; each carries its Node as attribute "node"

    # --- building -----------------------------------------------------------------------------
    def add(self, node: Node, parent_id: str | None) -> None:
        self.graph.add_node(node.node_id, node=node)
        if parent_id is not None:
            self.graph.add_edge(parent_id, node.node_id)

    def record(self, store: RunStore, node: Node, parent_id: str | None, state: dict | None = None) -> None:
        """Add `node` and persist it, its edge and the search state together."""
        self.add(node, parent_id)
        with store.transaction():
            row = {k: (json.dumps(v) if k in _JSON_COLS else v) for k, v in node.to_json().items()}
            search_store.record_node(store, row, parent_id, session_usage_rows(node))
            for key, value in (state or {}).items():
                store.put_state(key, value)
            store.checkpoint()  # the model calls so far served this committed step
        store.publish_snapshot(node.node_id)

    @classmethod
    def load(cls, store: RunStore) -> EvolutionDAG:
        """The stored DAG, checked: every row well-formed, every strategy re-hashes to its
        `strategy_hash`, and the edges form a tree rooted at n000. A violation is a UserError naming
        the row (a tampered or damaged store must never hang, crash or be used silently)."""
        dag = cls()
        for d in search_store.node_rows(store):
            dag.graph.add_node(d["node_id"], node=_node_from_row(store, d))
        dag.graph.add_edges_from(search_store.edge_rows(store))
        _check_tree(store, dag.graph)
        return dag

    # --- reading ------------------------------------------------------------------------------
    def node(self, node_id: str) -> Node:
        return self.graph.nodes[node_id]["node"]

    def nodes(self) -> list[Node]:
        return sorted((d["node"] for _, d in self.graph.nodes(data=True)), key=lambda n: (n.iteration, n.node_id))

    def parent(self, node_id: str) -> str | None:
        preds = list(self.graph.predecessors(node_id))
        return preds[0] if preds else None

    def depth(self, node_id: str) -> int:
        """Number of edits from the root."""
        depth = 0
        while (p := self.parent(node_id)) is not None:
            node_id, depth = p, depth + 1
        return depth

    def lineage(self, node_id: str) -> list[str]:
        chain = [node_id]
        while (p := self.parent(chain[-1])) is not None:
            chain.append(p)
        return list(reversed(chain))

    def developed(self) -> list[Node]:
        return [n for n, _ in self.scored()]

    def scored(self) -> list[tuple[Node, float]]:
        """The developed nodes, each with its development score."""
        return [(n, n.dev_score) for n in self.nodes() if n.dev_score is not None]

    def best(self) -> Node:
        """Best development score; ties: fewer edits from the root, then the earliest."""
        candidates = self.scored()
        if not candidates:
            raise LookupError("no node has a development score yet")
        best, _ = min(candidates, key=lambda ns: (-ns[1], self.depth(ns[0].node_id), ns[0].iteration, ns[0].node_id))
        return best

    def summary(self) -> dict:
        counts = {s: 0 for s in STATUSES}
        for n in self.nodes():
            counts[n.status] = counts.get(n.status, 0) + 1
        best = self.best() if self.developed() else None
        return {"nodes": self.graph.number_of_nodes(), "edges": self.graph.number_of_edges(), "status": counts,
                "best": None if best is None else {"node": best.node_id, "dev_score": best.dev_score,
                                                   "depth": self.depth(best.node_id)}}

    # --- export -------------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"nodes": [n.to_json() for n in self.nodes()],
                "edges": [{"parent": a, "child": b} for a, b in sorted(self.graph.edges())]}

    def write_graphml(self, path: Path) -> None:
        g: nx.DiGraph[str] = nx.DiGraph()
        for n in self.nodes():
            g.add_node(n.node_id, iteration=n.iteration, status=n.status, strategy_hash=n.strategy_hash,
                       edit=json.dumps(n.to_json()["edit"]), reason=n.reason,
                       dev_score=-1.0 if n.dev_score is None else n.dev_score)
        g.add_edges_from(self.graph.edges())
        nx.write_graphml(g, str(path))

    def write_png(self, path: Path) -> None:
        from autosaddler.dag_figure import draw  # Matplotlib is loaded only when a figure is asked for
        draw(self, path)


def read_search_run(run_dir: Path, command: str = "autosaddler dag") -> tuple[EvolutionDAG, dict]:
    """The DAG and the search metadata (models, pack, config) of a run directory, read-only.
    While a search is running this is the snapshot it published after its last step
    (`meta["_snapshot"]` says which)."""
    store = RunStore(run_dir, read_only=True)
    try:
        store.require_kind("search", command)
        dag = EvolutionDAG.load(store)
        meta = store.get_state("meta") or {}
        if not isinstance(meta, dict):
            raise UserError(f"{store.path}: search_state row 'meta' is not an object")
        return dag, ({**meta, "_snapshot": store.snapshot} if store.snapshot else meta)
    finally:
        store.close()


def _node_from_row(store: RunStore, d: dict) -> Node:
    where = f"{store.path}: dag_nodes row {d.get('node_id')!r}"
    d.pop("created_at", None)
    try:
        for k in _JSON_COLS:
            d[k] = json.loads(d[k]) if isinstance(d[k], str) else d[k]
        node = Node(**{k: d[k] for k in Node.__dataclass_fields__})
    except (json.JSONDecodeError, TypeError, KeyError) as err:
        raise UserError(f"{where}: not a valid node ({err})") from None
    if node.status not in STATUSES:
        raise UserError(f"{where}: unknown status {node.status!r}")
    if not isinstance(node.strategy, dict):
        raise UserError(f"{where}: strategy is not an object")
    from testhelix.strategy.model import validate_strategy_data

    strategy, problems = validate_strategy_data(node.strategy)
    if strategy is None:
        raise UserError(f"{where}: stored strategy is invalid", problems)
    if strategy.content_hash() != node.strategy_hash:
        raise UserError(f"{where}: stored strategy hashes to {strategy.content_hash()[:16]}…, not its "
                        f"strategy_hash {str(node.strategy_hash)[:16]}… (edited after it was recorded?)")
    for k in ("parent_outcomes", "child_outcomes", "optimizer_usage", "generator_usage"):
        if not isinstance(getattr(node, k), dict):
            raise UserError(f"{where}: {k} is not an object")
    return node


def _check_tree(store: RunStore, graph: nx.DiGraph) -> None:
    """A tree rooted at n000: the root exists and has no parent, every other node exactly one, no
    edge names an unknown node, and everything is reachable from the root (so no cycle)."""
    if graph.number_of_nodes() == 0:
        return
    where = f"{store.path}:"
    for parent, child in graph.edges():
        for end in (parent, child):
            if "node" not in graph.nodes[end]:
                raise UserError(f"{where} dag_edges row ({parent!r}, {child!r}) names node {end!r}, which is not "
                                "in dag_nodes")
    if "n000" not in graph:
        raise UserError(f"{where} dag_nodes has no root row 'n000'")
    if graph.nodes["n000"]["node"].status != "root" or graph.in_degree("n000"):
        raise UserError(f"{where} dag_nodes row 'n000' is not a root (status root, no parent)")
    for node_id in graph.nodes:
        if node_id != "n000" and graph.in_degree(node_id) != 1:
            raise UserError(f"{where} dag_nodes row {node_id!r} has {graph.in_degree(node_id)} parents in "
                            "dag_edges (a tree node has exactly one)")
    reached = nx.descendants(graph, "n000") | {"n000"}
    stray = sorted(set(graph.nodes) - reached)
    if stray:
        raise UserError(f"{where} dag_nodes row {stray[0]!r} is not reachable from n000 (a cycle in dag_edges?)")
