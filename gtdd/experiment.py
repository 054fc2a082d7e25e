"""The paired GTDD experiment (docs/design.md §8): blocks x policies x rounds, resumable, with progress.

Each block starts from one first module written from the spec alone, shared by every policy of
the block, and static generators are requested once per block before round one (static-llm-600
and staged-600 share theirs). Every round is written to the run's DuckDB in one transaction --
round summary, private audit record, counterexamples with their private links, the tester's
program, model calls and the trajectory state -- so an interrupted run resumes at the next round.

Resuming and extending (`_settle_config`): the same command resumes exactly. Adding blocks or
policies reuses the first modules and static generators and changes the number of trajectories M,
so the error allocation is recomputed for the new M and every recorded round is re-audited under it
(gtdd.records.reaudit). Changing the number of rounds T, the acceptance settings or anything else
that shaped the recorded rounds is refused with a message that says why and what to run instead, as
is resuming under another execution configuration (sandbox, limits, Python: the commitment).

`--jobs N` runs blocks in N threads (each block's policies in order); the work is in sandboxed
child processes, every seed is per block, and only the driver writes the store, so the stored
results are the same for every N.

Tables: see gtdd/schema.py.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import queue
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from gtdd import acceptance, records
from gtdd import store as gtdd_store
from gtdd.agents import ROUND_TOKEN_CAP, Coder, CodingRequest, Tester, TestingRequest
from gtdd.commit import Workspace
from gtdd.domains.base import Domain
from gtdd.execution import CandidateRunner, EvaluatorError, TraceExecutor
from gtdd.feedback import rule_named
from gtdd.loop import LoopContext, TrajectoryState, public_examples, run_round, tests_manifest
from gtdd.policies import POLICIES, Policy, run_generator
from gtdd.role_players import make_coder, make_tester
from testhelix.core.errors import UserError
from testhelix.llm.registry import model_ref
from testhelix.run.setup import ModelSettings
from testhelix.store.runstore import RunStore

# Settings that shaped the recorded rounds: a resumed or extended run must keep them.
FIXED_SETTINGS = ("domain", "coder", "tester", "k", "rule", "seed", "public_examples", "per_trace_timeout_s",
                  "audit_seeded", "stop_at_first_acceptance", "fixed_tests")
# Acceptance settings chosen before development, with the value a run stored before the setting existed.
CHOSEN_ACCEPTANCE = {"allocation": "repository", "alpha": "0.05", "tolerance": "0.05", "failures_allowed": 0,
                     "require_regression": True, "rule": "audit", "family_tolerances": {}}
FIXED_TESTS = ("hidden", "visible")
# Seed Section 6 where this machine allows it; docs/gtdd.md lists every remaining difference and why.
PRESETS = {"section-6": {
    "policies": "public-only,static-property,static-llm,dynamic-blind,dynamic-informed",
    "blocks": 30, "rounds": 4, "k": 6, "rule": "standard", "public_examples": 1, "acceptance_rule": "none",
    "per_trace_timeout": 0.5, "fixed_tests": "hidden", "stop_at_first_acceptance": False}}


class ExperimentSummary(TypedDict):
    """What `Experiment.run` did: complete trajectories, rounds run now, recorded rounds re-audited."""

    trajectories: int
    rounds_run: int
    reaudited: int
    wall_s: float
    simulated: bool


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
    stop_at_first_acceptance: bool = False  # a trajectory ends at its first accepted candidate
    fixed_tests: str = "hidden"  # visible: the coder sees every saved test's outcome (seed Section 3.2)
    audit_seeded: bool = False  # derive audit randomness from the seed (tests); default: the OS
    jobs: int = 1  # blocks run concurrently; not a setting of the results
    round_token_cap: int = ROUND_TOKEN_CAP  # tokens a model-driven coder or tester may spend per round

    def __post_init__(self) -> None:
        for name in ("blocks", "rounds", "k", "jobs", "round_token_cap"):
            if getattr(self, name) < 1:
                raise UserError(f"--{name} must be at least 1, got {getattr(self, name)}")
        if self.fixed_tests not in FIXED_TESTS:
            raise UserError(f"--fixed-tests {self.fixed_tests!r}: expected one of {', '.join(FIXED_TESTS)}")
        if self.stop_at_first_acceptance and self.acceptance.get("rule") == "none":
            raise UserError("--stop-at-first-acceptance needs an acceptance rule; --acceptance-rule none "
                            "makes no decision to stop at")
        for p in self.policies:
            if p not in POLICIES:
                raise UserError(f"unknown policy {p!r}; known: {', '.join(POLICIES)}")

    def to_json(self) -> dict:
        return {k: v for k, v in dataclasses.asdict(self).items() if k != "jobs"}


def derive_seed(*parts: object) -> int:
    return int(hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:16], 16)


def load_domain(name: str) -> Domain:
    from gtdd.domains import get_domain

    return get_domain(name)


@dataclass
class BlockPlan:
    """What the driver read from the store for one block before handing it to a worker."""

    block: int
    first_module: str | None
    static: dict[str, tuple[list, dict]]
    last: dict[str, tuple[int, TrajectoryState | None]]


class Experiment:
    def __init__(self, run_dir: Path, config: ExperimentConfig, domain: Domain | None = None,
                 progress: Callable[[str], None] | None = None, coder: Coder | None = None,
                 tester: Tester | None = None, sandbox: str | None = None, models: ModelSettings | None = None,
                 runner: CandidateRunner | None = None):
        """`domain`, `coder`, `tester` and `runner` override the configured names and the sandbox
        (tests inject fakes); `sandbox` and `models` are the command's --sandbox and model options
        (testhelix/run/setup.py)."""
        self.run_dir = Path(run_dir)
        self.domain = domain or load_domain(config.domain)
        self.progress = progress or (lambda line: None)
        self.executor = TraceExecutor(self.domain, config.per_trace_timeout_s, sandbox, runner)
        models = models or ModelSettings()
        # the experiment's edge: each role's model name (given or recorded) resolved once; bad names
        # fail before anything is stored
        self.coder = coder or make_coder(model_ref(config.coder), self.domain, self.executor, models,
                                         config.round_token_cap)
        self.tester = tester or make_tester(model_ref(config.tester), self.domain, models, config.round_token_cap)
        self.public = public_examples(self.domain, config.public_examples)
        self.execution_config = self.executor.execution_config()
        # bad acceptance settings are refused before anything is stored
        acceptance.AcceptanceRule(**config.acceptance).check_families(list(self.domain.families))
        self.store = RunStore(self.run_dir, command="gtdd experiment", allowed={"gtdd"})
        try:
            self.store.refuse_other_kinds({"gtdd"}, "gtdd experiment")
            self.config, self.extended = self._settle_config(config)
        except BaseException:
            self.store.close()  # a refused resume must not keep the run's store locked
            raise
        self.rule = acceptance.AcceptanceRule(**self.config.acceptance)
        self.families = acceptance.population_by_family(self.domain.population())

    # --- settings: first run, resume, extension -------------------------------------------------
    def _stored(self, key: str) -> Any:  # a JSON value, None when not stored
        return gtdd_store.config_value(self.store, key)

    def _put(self, key: str, value: Any) -> None:
        gtdd_store.put_config_value(self.store, key, value)

    def _settle_config(self, config: ExperimentConfig) -> tuple[ExperimentConfig, bool]:
        """First run: fix the acceptance horizon (M = blocks x policies, T = rounds), the execution
        configuration and the public tests' manifest. Later runs: see the module docstring."""
        public = tests_manifest(self.public)
        stored = self._stored("experiment")
        if stored is None:
            rule = {**config.acceptance, "trajectories": config.blocks * len(config.policies), "rounds": config.rounds}
            config = dataclasses.replace(config, acceptance=acceptance.AcceptanceRule(**rule).to_json())
            self._put("experiment", config.to_json())
            self._put("execution", self.execution_config)
            self._put("public_tests", public)
            return config, False
        self._refuse_changes(stored, config, public)
        policies = list(dict.fromkeys(stored["policies"] + list(config.policies)))
        blocks = max(stored["blocks"], config.blocks)
        rule = {**stored["acceptance"], "trajectories": blocks * len(policies)}
        extended = rule["trajectories"] != stored["acceptance"]["trajectories"]
        self._put("experiment", {**stored, "policies": policies, "blocks": blocks, "acceptance": rule})
        return dataclasses.replace(config, acceptance=rule), extended

    def _refuse_changes(self, stored: dict, config: ExperimentConfig, public: str) -> None:
        where = self.run_dir
        if config.rounds != stored["rounds"]:
            raise UserError(
                f"{where}: this run has {stored['rounds']} rounds per trajectory; it cannot be extended to "
                f"{config.rounds}: the rounds already recorded depend on T (the last round gets no feedback, "
                f"staged policies spread their traces over T-1 rounds, the audits are sized for T). Resume "
                f"it with --rounds {stored['rounds']}, or start a new run directory with --rounds {config.rounds}")
        defaults = {"stop_at_first_acceptance": False, "fixed_tests": "hidden"}  # runs stored before these
        changed = [k for k in FIXED_SETTINGS if stored.get(k, defaults.get(k)) != config.to_json().get(k)]
        chosen = {k: stored["acceptance"].get(k, old) for k, old in CHOSEN_ACCEPTANCE.items()}
        wanted = {k: config.acceptance.get(k, chosen[k]) for k in CHOSEN_ACCEPTANCE}
        changed += [f"acceptance {k}" for k in CHOSEN_ACCEPTANCE if str(wanted[k]) != str(chosen[k])]
        if changed:
            values = ", ".join(f"{k}={stored.get(k, chosen.get(k.split()[-1]))!r}" for k in changed)
            raise UserError(f"{where}: this run was made with different settings ({values}); these shaped the "
                            "recorded rounds and acceptance is fixed before development, so rerun with the "
                            "stored values to resume or extend it, or use another run directory")
        execution = self._stored("execution")
        if execution is not None and execution != self.execution_config:
            keys = sorted(k for k in set(execution) | set(self.execution_config)
                          if execution.get(k) != self.execution_config.get(k))
            raise UserError(f"{where}: the execution configuration differs from the one this run committed "
                            f"to ({', '.join(keys)}): verdicts from both would be mixed. Resume it where it was "
                            "made (same sandbox, limits, Python), or start a new run directory")
        if self._stored("public_tests") not in (None, public):
            raise UserError(f"{where}: the public tests differ from their recorded manifest; use the same "
                            "domain version, or start a new run directory")

    # --- trajectories --------------------------------------------------------------------------
    def run(self) -> ExperimentSummary:
        started = time.monotonic()
        reaudited = 0
        if self.extended:
            reaudited = records.reaudit(self.store, self.rule, self.families, self.executor.failures,
                                        self._reaudit_randomness, self.progress)
        plans = [self._plan(block) for block in range(self.config.blocks)]
        outbox: queue.Queue = queue.Queue()
        done = ran = 0
        with ThreadPoolExecutor(max_workers=self.config.jobs, thread_name_prefix="gtdd-block") as pool:
            futures = [pool.submit(self._run_block, plan, outbox.put) for plan in plans]
            pending = set(futures)
            while pending or not outbox.empty():
                try:
                    self._write(*outbox.get(timeout=0.2))  # the driver is the store's only writer
                except queue.Empty:
                    pass
                for f in [f for f in pending if f.done()]:
                    pending.discard(f)
                    finished, executed = f.result()  # re-raises a worker's error here
                    done += finished
                    ran += executed
        return {"trajectories": done, "rounds_run": ran, "reaudited": reaudited,
                "wall_s": round(time.monotonic() - started, 2),
                "simulated": self.coder.simulated or self.tester.simulated}

    def _reaudit_randomness(self, block: int, policy: str, t: int) -> bytes:
        if self.config.audit_seeded:
            return records.audit_seed(self.config.seed, block, policy, t, self.rule.trajectories, True)
        return acceptance.fresh_randomness()

    def _plan(self, block: int) -> BlockPlan:
        static: dict[str, tuple[list, dict]] = {}
        for stored in gtdd_store.static_tests(self.store, block):
            raw, info = json.loads(stored.traces), json.loads(stored.info)
            if info.get("manifest") not in (None, _raw_manifest(raw)):
                raise EvaluatorError(f"block {block}: the static tests {stored.key!r} do not match their manifest")
            static[stored.key] = (raw, info)
        last: dict[str, tuple[int, TrajectoryState | None]] = {}
        for name in self.config.policies:
            r = gtdd_store.last_state(self.store, block, name)
            last[name] = (r[0], TrajectoryState.from_json(json.loads(r[1]))) if r else (0, None)
        return BlockPlan(block, gtdd_store.block_module(self.store, block), static, last)

    def _write(self, kind: str, *args: Any) -> None:
        if kind == "progress":
            self.progress(args[0])
        elif kind == "first_module":
            block, result = args
            gtdd_store.put_block(self.store, gtdd_store.BlockRow(block, result.module, result.simulated, result.note))
            records.record_calls(self.store, block, "first-module", 1, result.calls)
        elif kind == "static":
            block, key, raw, info, calls = args
            gtdd_store.put_static(self.store, gtdd_store.StaticRow(block, key, json.dumps(raw), json.dumps(info)))
            records.record_calls(self.store, block, f"static-{key}", 0, calls)
        elif kind == "round":
            record, state_json, wall_s = args
            records.save_round(self.store, record, state_json, wall_s, self.coder.simulated or self.tester.simulated)

    def _run_block(self, plan: BlockPlan, emit: Callable) -> tuple[int, int]:
        done = ran = 0
        for name in self.config.policies:
            finished, executed = self._run_trajectory(plan, POLICIES[name], emit)
            done += finished
            ran += executed
        return done, ran

    def _first_module(self, plan: BlockPlan, emit: Callable) -> str:
        if plan.first_module is None:
            result = self.coder.write_module(CodingRequest(
                block=plan.block, round=1, seed=derive_seed(self.config.seed, plan.block, "first-module"),
                spec=self.domain.spec(), module_name=self.domain.module_name, current_module=None))
            plan.first_module = result.module
            emit(("first_module", plan.block, result))
        return plan.first_module

    def static_generator(self, plan: BlockPlan, policy: Policy, emit: Callable) -> tuple[list, dict]:
        key = policy.static_key
        if key is None:  # the loop asks only static and staged LLM policies, and each of them names one
            raise ValueError(f"policy {policy.name!r} has no static generator")
        if key in plan.static:
            return plan.static[key]
        seed = derive_seed(self.config.seed, plan.block, "static", key)
        program = self.tester.write_generator(TestingRequest(
            block=plan.block, round=0, seed=seed, spec=self.domain.spec(), families=tuple(self.domain.families),
            traces=policy.traces, public_examples=tuple(p.ops for p in self.public)))
        raw, error = ([], "no generator in the response") if program.source is None else run_generator(
            program.source, policy.traces, derive_seed(seed, "sample"))
        info = {"source": program.source, "simulated": program.simulated, "model": program.model,
                "note": program.note, "error": error, "manifest": _raw_manifest(raw)}
        plan.static[key] = (raw, info)
        emit(("static", plan.block, key, raw, info, program.calls))
        return raw, info

    def _run_trajectory(self, plan: BlockPlan, policy: Policy, emit: Callable) -> tuple[int, int]:
        last, state = plan.last[policy.name]
        stopped = self.config.stop_at_first_acceptance and state is not None and state.accepted
        if last >= self.config.rounds or stopped:
            return 1, 0
        state = state or TrajectoryState(module=self._first_module(plan, emit))
        ctx = self._context(plan, policy, state, emit)
        for t in range(last + 1, self.config.rounds + 1):
            started = time.monotonic()
            record = run_round(ctx, state, t)
            emit(("round", record, json.dumps(state.to_json()), time.monotonic() - started))
            pop = record.population
            emit(("progress", f"block {plan.block + 1}/{self.config.blocks}  {policy.name:<22} round {t}/"
                              f"{self.config.rounds}  failure rate {pop['failures'] / pop['size']:.3f}  "
                              f"counterexamples {len(record.development.counterexamples)}  "
                              f"{time.monotonic() - started:.1f} s"))
            if self.config.stop_at_first_acceptance and record.decision.accepted:
                return 1, t - last  # the trajectory delivers its first accepted candidate
        return 1, self.config.rounds - last

    def _context(self, plan: BlockPlan, policy: Policy, state: TrajectoryState, emit: Callable) -> LoopContext:
        cfg, block = self.config, plan.block
        public_json = json.dumps([{"ops": list(p.ops), "expected": list(r.replies)} for p, r in
                                  zip(self.public, self.executor.reference(self.public))], indent=1)
        workspace = Workspace.create(self.run_dir / "workspaces" / f"block{block:03d}-{policy.name}",
                                     self.domain.module_name, self.domain.spec(), public_json, state.module)

        def audit_randomness(t: int) -> bytes:
            if cfg.audit_seeded:
                return records.audit_seed(cfg.seed, block, policy.name, t, self.rule.trajectories, False)
            return acceptance.fresh_randomness()

        return LoopContext(
            domain=self.domain, executor=self.executor, coder=self.coder, tester=self.tester,
            policy=policy, workspace=workspace, acceptance=self.rule, families=self.families,
            public_tests=self.public, block=block, rounds=cfg.rounds, k=cfg.k, rule=rule_named(cfg.rule),
            seed_for=lambda role, t: derive_seed(cfg.seed, block, policy.stream, role, t),
            static_generator=lambda p: self.static_generator(plan, p, emit),
            audit_randomness=audit_randomness, execution_config=self.execution_config,
            public_manifest=tests_manifest(self.public), fixed_tests=cfg.fixed_tests)


def _raw_manifest(raw: list) -> str:
    return hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()
