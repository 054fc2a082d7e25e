"""Freezing the search's best strategy (with provenance and content hash) and exporting it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from autosaddler.dag import read_search_run
from testhelix.core.atomic import atomic_path
from testhelix.core.errors import UserError
from testhelix.strategy.model import load_strategy, read_json, validate_strategy_data


def frozen_document(run_dir: Path) -> dict:
    dag, meta = read_search_run(run_dir, "autosaddler freeze")
    if meta.get("_snapshot"):
        raise UserError(f"{run_dir}: the search is still running; freeze it after it finishes")
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
            "edits": [dag.node(n).to_json()["edit"] for n in lineage[1:]],
            "rule": "best development score; ties: fewer edits from the root, then the earliest",
        },
    }


def freeze(run_dir: Path, out: Path) -> dict:
    """Validate first, then write to a temporary file that is linked into place only when complete:
    a failure (an invalid strategy, a full disk) leaves no file behind, so a retry works."""
    doc = frozen_document(run_dir)
    out = Path(out)
    if out.exists():
        if _same_freeze(out, doc):
            return doc | {"repeat": True}     # the same node of the same run: already frozen, nothing written
        raise UserError(f"{out}: exists already and holds another strategy or provenance; frozen strategies are "
                        "never overwritten")
    strategy, problems = validate_strategy_data(doc["strategy"])
    if strategy is None:
        raise UserError(f"{run_dir}: node {doc['provenance']['node']} holds an invalid strategy", problems)
    if strategy.content_hash() != doc["hash"]:
        raise UserError(f"{run_dir}: node {doc['provenance']['node']}: strategy does not hash to its strategy_hash")
    with atomic_path(out, exclusive=True) as tmp:
        tmp.write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
        load_strategy(tmp)  # proves the written file loads and its hash verifies
    return doc


def _same_freeze(path: Path, doc: dict) -> bool:
    try:
        old = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(old, dict) and old.get("hash") == doc["hash"] and old.get("provenance") == doc["provenance"]


def export(frozen: Path, fmt: str) -> str:
    """A frozen strategy as JSON or YAML for other tools (hash verified first)."""
    doc = read_json(frozen)
    if not (isinstance(doc, dict) and "strategy" in doc and "hash" in doc and "provenance" in doc):
        raise UserError(f"{frozen}: not a frozen strategy (needs 'strategy', 'hash' and 'provenance'; make one "
                        "with `autosaddler freeze`)")
    strategy = load_strategy(frozen)  # verifies the recorded hash
    body = {"strategy": strategy.model_dump(mode="json"), "hash": strategy.content_hash(),
            "provenance": doc.get("provenance", {})}
    if fmt == "json":
        return json.dumps(body, indent=2) + "\n"
    if fmt == "yaml":
        return yaml.safe_dump(body, sort_keys=False, allow_unicode=True)
    raise UserError(f"--format: unknown format {fmt!r} (use json or yaml)")
