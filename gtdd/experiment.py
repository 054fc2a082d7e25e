"""The paired GTDD experiment (seed paper §6): blocks x policies x rounds, resumable, with progress.

Each block starts from one first module written from the spec alone, shared by every policy of
the block, and static generators are requested once per block before round one (static-llm-600
and staged-600 share theirs). Every round is written to the run's DuckDB in one transaction --
round summary, private audit record, counterexamples with their private links, the tester's
program, model calls and the trajectory state -- so an interrupted run resumes at the next round.
Adding policies or blocks to an existing run reuses its first modules and static generators.

Tables (created here, all prefixed gtdd_): gtdd_config, gtdd_blocks, gtdd_static, gtdd_rounds,
gtdd_audits, gtdd_counterexamples, gtdd_generators, gtdd_states.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from testhelix.errors import UserError
from testhelix.store import RunStore

from gtdd import acceptance
from gtdd.agents import Coder, CodingRequest, Tester, TestingRequest, make_coder, make_tester
from gtdd.commit import Workspace
from gtdd.domains.base import Domain, canonical_json
from gtdd.execution import TraceExecutor
from gtdd.feedback import rule_named
from gtdd.loop import LoopContext, RoundRecord, TrajectoryState, public_examples, run_round
from gtdd.policies import POLICIES, Policy, run_generator

SCHEMA = """
CREATE TABLE IF NOT EXISTS gtdd_config (key TEXT PRIMARY KEY, config JSON);
CREATE TABLE IF NOT EXISTS gtdd_blocks (block INTEGER PRIMARY KEY, module TEXT, simulated BOOLEAN,
    note TEXT);
CREATE TABLE IF NOT EXISTS gtdd_static (block INTEGER, key TEXT, traces JSON, info JSON,
    PRIMARY KEY (block, key));
CREATE TABLE IF NOT EXISTS gtdd_rounds (block INTEGER, policy TEXT, round INTEGER,
    manifest_hash TEXT, module_hash TEXT, simulated BOOLEAN, proposed INTEGER, valid INTEGER,
    duplicates INTEGER, executed INTEGER, failures INTEGER, new_failures INTEGER,
    counterexamples INTEGER, repaired_previous INTEGER, regressions INTEGER,
    protected_changes INTEGER, public_pass BOOLEAN, regression_pass BOOLEAN, audits_pass BOOLEAN,
    accepted BOOLEAN, population_failures INTEGER, population_size INTEGER, failure_rate DOUBLE,
    unseen_failures INTEGER, unseen_size INTEGER, wall_s DOUBLE, detail JSON,
    PRIMARY KEY (block, policy, round));
CREATE TABLE IF NOT EXISTS gtdd_audits (block INTEGER, policy TEXT, round INTEGER, record JSON,
    PRIMARY KEY (block, policy, round));
CREATE TABLE IF NOT EXISTS gtdd_counterexamples (block INTEGER, policy TEXT, round INTEGER,
    id TEXT, original_id TEXT, family TEXT, mechanism TEXT, shown JSON,
    PRIMARY KEY (block, policy, round, id));
CREATE TABLE IF NOT EXISTS gtdd_generators (block INTEGER, policy TEXT, round INTEGER,
    source TEXT, info JSON, PRIMARY KEY (block, policy, round));
CREATE TABLE IF NOT EXISTS gtdd_states (block INTEGER, policy TEXT, round INTEGER, state JSON,
    PRIMARY KEY (block, policy, round));
"""
# Settings that must match when a run is resumed or extended (policies and blocks may grow).
FIXED_SETTINGS = ("domain", "rounds", "coder", "tester", "k", "rule", "seed", "public_examples",
                  "per_trace_timeout_s", "acceptance", "audit_seeded")


@dataclass(frozen=True)
class ExperimentConfig:
    policies: tuple[str, ...]
    blocks: int
    rounds: int = 4
    coder: str = "sim:strong"
    tester: str = "sim:strong"
    domain: str = "kvstore"
    k: int = 6
    rule: str = "standard"
    seed: int = 0
    public_examples: int = 2
    per_trace_timeout_s: float = 1.0
    acceptance: dict = field(default_factory=dict)  # AcceptanceRule fields
    audit_seeded: bool = False  # derive audit randomness from the seed (tests); default: the OS

    def __post_init__(self) -> None:
        for name in ("blocks", "rounds", "k"):
            if getattr(self, name) < 1:
                raise UserError(f"--{name} must be at least 1, got {getattr(self, name)}")
        for p in self.policies:
            if p not in POLICIES:
                raise UserError(f"unknown policy {p!r}; known: {', '.join(POLICIES)}")

    def to_json(self) -> dict:
        return dataclasses.asdict(self)


def derive_seed(*parts) -> int:
    return int(hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16], 16)


def load_domain(name: str) -> Domain:
    from gtdd.domains import get_domain

    return get_domain(name)


class Experiment:
    def __init__(self, run_dir: Path, config: ExperimentConfig, domain: Domain | None = None,
                 progress: Callable[[str], None] | None = None, coder: Coder | None = None,
                 tester: Tester | None = None):
        """`domain`, `coder` and `tester` override the configured names (tests inject fakes)."""
        self.run_dir = Path(run_dir)
        self.domain = domain or load_domain(config.domain)
        self.progress = progress or (lambda line: None)
        self.executor = TraceExecutor(self.domain, config.per_trace_timeout_s)
        self.coder = coder or make_coder(config.coder, self.domain, self.executor)  # bad names fail
        self.tester = tester or make_tester(config.tester, self.domain)  # before anything is stored
        self.store = RunStore(self.run_dir, command="gtdd experiment")
        self.store.refuse_other_kinds({"gtdd"}, "gtdd experiment")
        self.store.conn.execute(SCHEMA)
        self.config = self._settle_config(config)
        self.rule = acceptance.AcceptanceRule(**self.config.acceptance)
        self.families = acceptance.population_by_family(self.domain.population())
        self.public = public_examples(self.domain, config.public_examples)

    def _settle_config(self, config: ExperimentConfig) -> ExperimentConfig:
        """First run: fix the acceptance horizon (M = blocks x policies, T = rounds) and store it.
        Later runs: the fixed settings must match; policies and blocks may be added."""
        row = self.store.conn.execute("SELECT config FROM gtdd_config WHERE key = 'experiment'").fetchone()
        if row is None:
            rule = {"trajectories": config.blocks * len(config.policies), "rounds": config.rounds,
                    **config.acceptance}
            config = dataclasses.replace(config, acceptance=acceptance.AcceptanceRule(**rule).to_json())
            self.store.conn.execute("INSERT INTO gtdd_config VALUES ('experiment', ?)",
                                    [json.dumps(config.to_json())])
            return config
        stored = json.loads(row[0])
        wanted = config.to_json()
        if not config.acceptance:
            wanted["acceptance"] = stored["acceptance"]
        changed = [k for k in FIXED_SETTINGS if stored.get(k) != wanted.get(k)]
        if changed:
            raise UserError(f"{self.run_dir}: this run was made with different settings "
                            f"({', '.join(f'{k}={stored.get(k)!r}' for k in changed)}); use another run directory")
        merged = {**stored, "policies": list(dict.fromkeys(stored["policies"] + list(config.policies))),
                  "blocks": max(stored["blocks"], config.blocks)}
        self.store.conn.execute("UPDATE gtdd_config SET config = ? WHERE key = 'experiment'",
                                [json.dumps(merged)])
        return dataclasses.replace(config, acceptance=stored["acceptance"])

    # --- shared per block ---------------------------------------------------------------------
    def first_module(self, block: int) -> str:
        row = self.store.conn.execute("SELECT module FROM gtdd_blocks WHERE block = ?", [block]).fetchone()
        if row:
            return row[0]
        result = self.coder.write_module(CodingRequest(
            block=block, round=1, seed=derive_seed(self.config.seed, block, "first-module"),
            spec=self.domain.spec(), module_name=self.domain.module_name, current_module=None))
        self.store.conn.execute("INSERT INTO gtdd_blocks VALUES (?, ?, ?, ?)",
                                [block, result.module, result.simulated, result.note])
        self._record_calls(block, "first-module", 1, result.calls)
        return result.module

    def static_generator(self, block: int, policy: Policy) -> tuple[list, dict]:
        key = policy.static_key
        row = self.store.conn.execute("SELECT traces, info FROM gtdd_static WHERE block = ? AND key = ?",
                                      [block, key]).fetchone()
        if row:
            return json.loads(row[0]), json.loads(row[1])
        seed = derive_seed(self.config.seed, block, "static", key)
        program = self.tester.write_generator(TestingRequest(
            block=block, round=0, seed=seed, spec=self.domain.spec(), families=tuple(self.domain.families),
            traces=policy.traces, public_examples=tuple(p.ops for p in self.public)))
        raw, error = ([], "no generator in the response") if program.source is None else run_generator(
            program.source, policy.traces, derive_seed(seed, "sample"))
        info = {"source": program.source, "simulated": program.simulated, "model": program.model,
                "note": program.note, "error": error}
        self.store.conn.execute("INSERT INTO gtdd_static VALUES (?, ?, ?, ?)",
                                [block, key, json.dumps(raw), json.dumps(info)])
        self._record_calls(block, f"static-{key}", 0, program.calls)
        return raw, info

    # --- trajectories --------------------------------------------------------------------------
    def run(self) -> dict:
        started = time.monotonic()
        done = ran = 0
        for block in range(self.config.blocks):
            for name in self.config.policies:
                finished, executed = self.run_trajectory(block, POLICIES[name])
                done += finished
                ran += executed
        return {"trajectories": done, "rounds_run": ran, "wall_s": round(time.monotonic() - started, 2),
                "simulated": self.coder.simulated or self.tester.simulated}

    def _last_state(self, block: int, policy: str) -> tuple[int, TrajectoryState | None]:
        row = self.store.conn.execute(
            "SELECT round, state FROM gtdd_states WHERE block = ? AND policy = ? ORDER BY round DESC LIMIT 1",
            [block, policy]).fetchone()
        return (row[0], TrajectoryState.from_json(json.loads(row[1]))) if row else (0, None)

    def run_trajectory(self, block: int, policy: Policy) -> tuple[int, int]:
        last, state = self._last_state(block, policy.name)
        if last >= self.config.rounds:
            return 1, 0
        state = state or TrajectoryState(module=self.first_module(block))
        ctx = self._context(block, policy, state)
        for t in range(last + 1, self.config.rounds + 1):
            started = time.monotonic()
            record = run_round(ctx, state, t)
            self._save(record, state, time.monotonic() - started)
            pop = record.population
            self.progress(f"block {block + 1}/{self.config.blocks}  {policy.name:<22} round {t}/"
                          f"{self.config.rounds}  failure rate {pop['failures'] / pop['size']:.3f}  "
                          f"counterexamples {len(record.development.counterexamples)}  "
                          f"{time.monotonic() - started:.1f} s")
        return 1, self.config.rounds - last

    def _context(self, block: int, policy: Policy, state: TrajectoryState) -> LoopContext:
        cfg = self.config
        public_json = json.dumps([{"ops": list(p.ops), "expected": list(r.replies)} for p, r in
                                  zip(self.public, self.executor.reference(self.public))], indent=1)
        workspace = Workspace.create(self.run_dir / "workspaces" / f"block{block:03d}-{policy.name}",
                                     self.domain.module_name, self.domain.spec(), public_json, state.module)

        def audit_randomness(t: int) -> bytes:
            if cfg.audit_seeded:
                return hashlib.sha256(f"{cfg.seed}/{block}/{policy.name}/{t}/audit".encode()).digest()
            return acceptance.fresh_randomness()

        return LoopContext(
            domain=self.domain, executor=self.executor, coder=self.coder, tester=self.tester,
            policy=policy, workspace=workspace, acceptance=self.rule, families=self.families,
            public_tests=self.public, block=block, rounds=cfg.rounds, k=cfg.k, rule=rule_named(cfg.rule),
            seed_for=lambda role, t: derive_seed(cfg.seed, block, policy.stream, role, t),
            static_generator=lambda p: self.static_generator(block, p),
            audit_randomness=audit_randomness,
            execution_config={"domain": self.domain.name, "module": self.domain.module_name,
                              "python": sys.version.split()[0],
                              "per_trace_timeout_s": cfg.per_trace_timeout_s})

    def _record_calls(self, block: int, role: str, round_index: int, calls) -> None:
        for c in calls:
            self.store.record_model_call({
                "run_label": "gtdd", "task_id": f"block{block}", "role": role, "pair": block,
                "round": round_index, "model": c.get("model"), "input_tokens": c.get("input_tokens"),
                "output_tokens": c.get("output_tokens"), "cost_usd": c.get("cost_usd"),
                "latency_s": c.get("latency_s"), "status": c.get("status"), "error": c.get("error"),
                "simulated": bool(c.get("simulated"))})

    def _save(self, r: RoundRecord, state: TrajectoryState, wall_s: float) -> None:
        dev, pop, dec, key = r.development, r.population, r.decision, [r.block, r.policy, r.round]
        simulated = (r.coding.simulated or self.coder.simulated or self.tester.simulated
                     or bool(r.generator and r.generator.get("simulated")))
        proposals = r.proposals
        detail = {"events": r.events, "coder_note": r.coding.note, "public": [
            {"id": p["id"], "passed": p["passed"]} for p in r.public],
            "protected_changes": [c.__dict__ for c in r.commitment.protected_changes],
            "population_by_family": pop["by_family"], "reduction_executions": dev.reduction_executions,
            "invalid": proposals.invalid if proposals else 0,
            "generator_error": proposals.error if proposals else None,
            "validation_problems": list(proposals.problems) if proposals else [],
            "snapshot_intact": dec.snapshot_intact}
        with self.store.transaction():
            c = self.store.conn
            c.execute("INSERT OR REPLACE INTO gtdd_rounds VALUES (" + ", ".join("?" * 27) + ")", key + [
                r.commitment.manifest_hash, pop["module_hash"], simulated,
                proposals.proposed if proposals else 0, len(proposals.valid) if proposals else 0,
                dev.duplicates, dev.executed, dev.failures, dev.new_failures, len(dev.counterexamples),
                dev.repaired_previous, dev.regressions, len(r.commitment.protected_changes),
                all(p["passed"] for p in r.public), dev.regression_pass, dec.audits_pass, dec.accepted,
                pop["failures"], pop["size"], pop["failures"] / pop["size"], pop["unseen_failures"],
                pop["unseen_size"], wall_s, json.dumps(detail)])
            c.execute("INSERT OR REPLACE INTO gtdd_audits VALUES (?, ?, ?, ?)",
                      key + [canonical_json(r.audit.to_json())])
            links = {link["id"]: link for link in dev.private_links}
            for shown in dev.counterexamples:
                link = links[shown["id"]]
                c.execute("INSERT OR REPLACE INTO gtdd_counterexamples VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          key + [shown["id"], link["original_id"], shown["family"], link["mechanism"],
                                 json.dumps(shown)])
            if r.generator is not None:  # a static generator's source is kept once, in gtdd_static
                info = {k: v for k, v in r.generator.items() if k not in ("source", "calls")}
                source = None if POLICIES[r.policy].static_key else r.generator.get("source")
                c.execute("INSERT OR REPLACE INTO gtdd_generators VALUES (?, ?, ?, ?, ?)",
                          key + [source, json.dumps(info)])
            c.execute("INSERT OR REPLACE INTO gtdd_states VALUES (?, ?, ?, ?)",
                      key + [json.dumps(state.to_json())])
        self._record_calls(r.block, f"coder:{r.policy}", r.round, r.coding.calls)
        if r.generator is not None and r.generator.get("calls"):
            self._record_calls(r.block, f"tester:{r.policy}", r.round, r.generator["calls"])
