"""What an experiment stores: the tables, one round's records, model calls, and re-audits.

Only the driver thread calls these (`gtdd experiment --jobs N` runs blocks in worker threads that
hand their records over), so the store has one writer and its contents do not depend on N.

Re-audit: when an experiment is extended with more blocks or policies, the number of trajectories
M -- and with it every audit's error allocation (alpha / (M T) for the repository allocation) --
changes. Audits already recorded were sized for the old M and no longer carry the guarantee, so
`reaudit` draws, for every recorded round whose audit was made under another allocation, a fresh
audit of the same committed candidate with the sizes the new allocation requires and fresh
randomness (drawn now, after the candidate and everything else are fixed, which is all the bound
needs). The new decision replaces the round's acceptance; the superseded audit and decision are kept
in gtdd_superseded_audits (the superseded decision is the one the coder saw at the time).
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from gtdd import acceptance
from gtdd.domains.base import Trace
from gtdd.loop import RoundRecord
from gtdd.policies import POLICIES
from gtdd.store import (
    CounterexampleRow,
    RoundRecords,
    RoundRow,
    audited_rounds,
    put_round,
    supersede_audit,
)
from testhelix.core.digest import canonical_json
from testhelix.store.runstore import RunStore


def record_calls(store: RunStore, block: int, role: str, round_index: int, calls: Iterable[Mapping[str, Any]]) -> None:
    """The ledger rows a role's calls wrote (`Budget.complete`, gtdd/agents.py), stored under the
    experiment's names: the block as task and pair, the role with its policy."""
    for c in calls:
        store.record_model_call({**c, "run_label": "gtdd", "task_id": f"block{block}", "role": role, "pair": block,
                                 "round": round_index})


def save_round(store: RunStore, r: RoundRecord, state_json: str, wall_s: float, agents_simulated: bool) -> None:
    dev, pop, dec = r.development, r.population, r.decision
    simulated = (r.coding.simulated or agents_simulated
                 or bool(r.generator and r.generator.get("simulated")))
    proposals = r.proposals
    detail = {"events": r.events, "coder_note": r.coding.note, "public": [
        {"id": p["id"], "passed": p["passed"]} for p in r.public],
        "protected_changes": [c.__dict__ for c in r.commitment.protected_changes],
        "population_by_family": pop["by_family"], "reduction_executions": dev.reduction_executions,
        "invalid": proposals.invalid if proposals else 0,
        "generator_error": proposals.error if proposals else None,
        "validation_problems": list(proposals.problems) if proposals else [],
        "snapshot_intact": dec.snapshot_intact, "harness_errors": r.harness_errors,
        "fixed_tests_manifest": r.fixed_tests_manifest}
    row = RoundRow(
        block=r.block, policy=r.policy, round=r.round, manifest_hash=r.commitment.manifest_hash,
        module_hash=pop["module_hash"], simulated=simulated,
        proposed=proposals.proposed if proposals else 0, valid=len(proposals.valid) if proposals else 0,
        duplicates=dev.duplicates, executed=dev.executed, failures=dev.failures, new_failures=dev.new_failures,
        counterexamples=len(dev.counterexamples), repaired_previous=dev.repaired_previous,
        regressions=dev.regressions, protected_changes=len(r.commitment.protected_changes),
        public_pass=all(p["passed"] for p in r.public), regression_pass=dev.regression_pass,
        audits_pass=dec.audits_pass, accepted=dec.accepted, population_failures=pop["failures"],
        population_size=pop["size"], failure_rate=pop["failures"] / pop["size"],
        unseen_failures=pop["unseen_failures"], unseen_size=pop["unseen_size"], wall_s=wall_s,
        detail=json.dumps(detail))
    links = {link["id"]: link for link in dev.private_links}
    shown_rows = tuple(CounterexampleRow(r.block, r.policy, r.round, shown["id"], links[shown["id"]]["original_id"],
                                         shown["family"], links[shown["id"]]["mechanism"], json.dumps(shown))
                       for shown in dev.counterexamples)
    generator = None
    if r.generator is not None:  # a static generator's source is kept once, in gtdd_static
        info = {k: v for k, v in r.generator.items() if k not in ("source", "calls")}
        generator = (None if POLICIES[r.policy].static_key else r.generator.get("source"), json.dumps(info))
    put_round(store, RoundRecords(row, canonical_json(r.audit.to_json(), ascii_only=True), shown_rows, generator,
                                  state_json))
    record_calls(store, r.block, f"coder:{r.policy}", r.round, r.coding.calls)
    if r.generator is not None and r.generator.get("calls"):
        record_calls(store, r.block, f"tester:{r.policy}", r.round, r.generator["calls"])


def reaudit(store: RunStore, rule: acceptance.AcceptanceRule, families: dict[str, list[Trace]],
            failures_of: Callable[[str, list[Trace]], list], randomness_for: Callable[[int, str, int], bytes],
            progress: Callable[[str], None]) -> int:
    """Re-audit every recorded round whose audit was sized for another (M, T); returns how many."""
    done = 0
    for recorded in audited_rounds(store):
        old = json.loads(recorded.record)
        if (old["rule"]["trajectories"], old["rule"]["rounds"]) == (rule.trajectories, rule.rounds):
            continue
        block, policy, t = recorded.block, recorded.policy, recorded.round
        module = json.loads(recorded.state)["module"]  # the committed candidate of this round
        audit = acceptance.run_audit(rule, families, t, randomness_for(block, policy, t),
                                     functools.partial(failures_of, module))
        decision = acceptance.decide(rule, json.loads(recorded.detail)["snapshot_intact"], recorded.public_pass,
                                     recorded.regression_pass, audit)
        supersede_audit(store, recorded, old["rule"]["trajectories"], old["rule"]["rounds"],
                        canonical_json(audit.to_json(), ascii_only=True), decision.audits_pass, decision.accepted)
        done += 1
    if done:
        progress(f"re-audited {done} recorded rounds for the new allocation (M = {rule.trajectories}, "
                 f"T = {rule.rounds}, per-audit error {audit.per_audit_error})")
    return done


def audit_seed(seed: int, block: int, policy: str, t: int, trajectories: int, reaudit_round: bool) -> bytes:
    tag = f"/reaudit-M{trajectories}" if reaudit_round else ""
    return hashlib.sha256(f"{seed}/{block}/{policy}/{t}/audit{tag}".encode()).digest()
