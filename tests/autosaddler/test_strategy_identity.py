"""A strategy's identity survives a schema change: adding a field at its default changes no content hash,
so initial.json, a frozen file, a stored DAG and a release-ledger entry written before the field
existed still load and match (testhelix/strategy/model.py, "Identity")."""

from __future__ import annotations

import json

import pytest
from pydantic import Field

import testhelix.strategy.model as model
from autosaddler.dag import EvolutionDAG, Node
from autosaddler.ledger import ReleaseLedger, check_release, new_entry
from testhelix.core.errors import UserError
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import (
    Strategy,
    initial_strategy,
    load_strategy,
    migrate_strategy_data,
    validate_strategy_data,
)

# The hash README.md and docs/demo-transcript.md quote for strategies/initial.json.
INITIAL_HASH = "f793960f11c03178a8ed381536b06263d9b1d38c3e8a839478be9b5d5cb3bb84"


class WithNewField(Strategy):
    """The Strategy model as it would be after a contributor adds a field with a default."""

    reviewRounds: int = Field(1, strict=True, ge=1, le=3)


@pytest.fixture
def recorded(tmp_path):
    """What was written before the field existed: a frozen file, a stored DAG, a ledger entry."""
    old = initial_strategy()
    old_json = json.loads(old.canonical_json())          # the stored form before schemaVersion existed
    frozen = tmp_path / "frozen.json"
    frozen.write_text(json.dumps({"strategy": old_json, "provenance": {"node": "n000"}, "hash": old.content_hash()}))
    store = RunStore(tmp_path / "run")
    EvolutionDAG().record(store, Node(node_id="n000", iteration=0, strategy_hash=old.content_hash(),
                                      strategy=old_json, edit=None, status="root"), None)
    store.close()
    ledger = ReleaseLedger(tmp_path / "ledger")
    task_ids = ["t1", "t2"]
    ledger.record(new_entry(pack="p", pack_digest="d", split="release", task_ids=task_ids,
                            challenger_hash=old.content_hash(), baseline_hash=old.content_hash(), model="sim",
                            run_dir=tmp_path, gate_id="g1", result={"promoted": False}, reused=False))
    return frozen, tmp_path / "run", ledger, task_ids


def test_a_field_added_at_its_default_keeps_every_recorded_identity(recorded, monkeypatch):
    frozen, run_dir, ledger, task_ids = recorded
    monkeypatch.setattr(model, "Strategy", WithNewField)    # what every loader validates with
    initial = initial_strategy()
    assert isinstance(initial, WithNewField) and initial.reviewRounds == 1
    assert initial.content_hash() == INITIAL_HASH
    assert load_strategy(frozen).content_hash() == INITIAL_HASH        # the frozen hash still verifies
    dag = EvolutionDAG.load(RunStore(run_dir, read_only=True))         # every node still re-hashes
    assert dag.node("n000").strategy_hash == INITIAL_HASH
    replay, _ = check_release(ledger, pack="p", pack_digest="d", split="release", task_ids=task_ids,
                              challenger_hash=initial.content_hash(), baseline_hash=initial.content_hash(),
                              model="sim", allow_reuse=False)
    assert replay is not None and replay.gate_id == "g1"               # the same test, found by its hashes


def test_a_new_field_enters_the_identity_once_it_is_used():
    base = WithNewField()
    used = WithNewField(reviewRounds=2)
    assert base.content_hash() == Strategy().content_hash()
    assert used.content_hash() != base.content_hash()
    assert json.loads(used.canonical_json())["reviewRounds"] == 2


def test_schema_version_is_carried_and_checked():
    assert Strategy().schemaVersion == model.SCHEMA_VERSION
    assert migrate_strategy_data({"rounds": 2}) == {"rounds": 2}      # no version: version 1, nothing to do
    strategy, problems = validate_strategy_data({"schemaVersion": model.SCHEMA_VERSION + 1})
    assert strategy is None and problems[0][0] == "schemaVersion" and "newer" in problems[0][1]
    with pytest.raises(UserError, match="schemaVersion"):
        migrate_strategy_data({"schemaVersion": "1"})


def test_an_older_version_is_migrated_before_validation(monkeypatch):
    """A migration chain step runs on data of its version (a pretend version 2 renamed a field)."""
    monkeypatch.setattr(model, "SCHEMA_VERSION", 2)
    monkeypatch.setitem(model.MIGRATIONS, 1, lambda d: {**{k: v for k, v in d.items() if k != "steps"},
                                                        "agentSteps": d.get("steps", 12), "schemaVersion": 2})
    assert migrate_strategy_data({"steps": 20}) == {"agentSteps": 20, "schemaVersion": 2}
