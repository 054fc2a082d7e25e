"""Freezing the search's best strategy (with provenance and content hash) and exporting it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from autosaddler.dag import read_search_run
from testhelix.errors import UserError
from testhelix.strategy.model import load_strategy


def frozen_document(run_dir: Path) -> dict:
    dag, meta = read_search_run(run_dir)
    if not dag.developed():
        raise UserError(f"{run_dir}: the search has no developed strategy yet")
    best = dag.best()
    lineage = dag.lineage(best.node_id)
    return {
        "strategy": best.strategy,
        "hash": best.strategy_hash,
        "provenance": {
            "run": str(Path(run_dir).resolve()),
            "node": best.node_id,
            "model": meta.get("model"),
            "optimizer_model": meta.get("optimizer_model"),
            "pack": meta.get("pack"),
            "scores": {"development": best.dev_score, "initial_development": dag.node("n000").dev_score},
            "lineage": lineage,
            "edits": [dag.node(n).edit for n in lineage[1:]],
            "rule": "best development score; ties: fewer edits from the root, then the earliest",
        },
    }


def freeze(run_dir: Path, out: Path) -> dict:
    doc = frozen_document(run_dir)
    out = Path(out)
    if out.exists():
        raise UserError(f"{out}: exists already; frozen strategies are never overwritten")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2) + "\n")
    load_strategy(out)  # proves the written file loads and its hash verifies
    return doc


def export(frozen: Path, fmt: str) -> str:
    """A frozen strategy as JSON or YAML for other tools (hash verified first)."""
    strategy = load_strategy(frozen)
    doc = json.loads(Path(frozen).read_text())
    body = {"strategy": strategy.model_dump(mode="json"), "hash": strategy.content_hash(),
            "provenance": doc.get("provenance", {})}
    if fmt == "json":
        return json.dumps(body, indent=2) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(body, sort_keys=False, allow_unicode=True)
    raise UserError(f"--format: unknown format {fmt!r} (use json or yaml)")
