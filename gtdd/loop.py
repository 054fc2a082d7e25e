"""One GTDD round, in the event order of docs/design.md §8.

    coding end < commitment < testing start < testing end < audit sampling < audit end
               < acceptance record < population evaluation end

`run_round` below is the whole protocol; each step is a named function further down. What reaches
an agent: the coder gets its reported counterexamples, the public tests' outcome and the aggregate
acceptance bit (through `TrajectoryState`); the tester gets what its policy allows. Audit samples,
family results and population outcomes stay in the `RoundRecord`, which only the harness stores.
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gtdd import acceptance
from gtdd.agents import Coder, CodingRequest, CodingResult, Tester, TestingRequest
from gtdd.commit import Commitment, Workspace
from gtdd.domains.base import HARNESS_ERRORS, Domain, Trace, trace_id
from gtdd.execution import EvaluatorError, Failure, TraceExecutor, source_hash
from gtdd.feedback import POOL_FACTOR, FeedbackRule, ObservedFailure
from gtdd.policies import Policy, Proposals, property_proposals, proposals_from_raw, run_generator, staged_chunk
from gtdd.reduction import Reduction, reduce_failures
from testhelix.core.digest import canonical_json


def run_round(ctx: LoopContext, state: TrajectoryState, t: int) -> RoundRecord:
    events = Events()
    coding = write_candidate(ctx, state, t)                         # the coding session
    events.mark("coding_end")
    commitment = ctx.workspace.commit(t, ctx.execution_config)      # restore protected, hash
    events.mark("commitment")
    proposals, program = propose_traces(ctx, state, commitment, t)  # the tester's policy
    fixed = check_fixed_tests(ctx, state)                           # manifest before re-running them
    dev = evaluate_development(ctx, state, commitment, proposals, t)  # run, reduce, select, grow G
    events.mark("testing_end")
    public = run_public_tests(ctx, commitment)
    randomness = ctx.audit_randomness(t)                            # drawn only now, after testing
    events.mark("audit_sampling")
    audit = acceptance.run_audit(ctx.acceptance, ctx.families, t, randomness,
                                 lambda traces: ctx.executor.failures(commitment.module_source, traces))
    events.mark("audit_end")
    intact = ctx.workspace.verify(commitment, ctx.execution_config)  # a later change voids the round
    decision = acceptance.decide(ctx.acceptance, intact, all(p["passed"] for p in public),
                                 dev.regression_pass, audit)
    events.mark("acceptance_record")
    population = evaluate_population(ctx, state, commitment, dev)  # private; reaches no agent
    events.mark("population_end")
    state.advance(commitment, dev, public, decision.accepted)
    return RoundRecord(block=ctx.block, policy=ctx.policy.name, round=t, commitment=commitment, coding=coding,
                       generator=program, proposals=proposals, development=dev, public=public, audit=audit,
                       decision=decision, population=population, events=events.times,
                       harness_errors=dev.harness_errors + population["harness_errors"],
                       fixed_tests_manifest=fixed)


# --- value types ------------------------------------------------------------------------------

class Events:
    def __init__(self) -> None:
        self._start = time.monotonic()
        self.times: dict[str, float] = {}

    def mark(self, name: str) -> None:
        self.times[name] = round(time.monotonic() - self._start, 4)


@dataclass
class TrajectoryState:
    """What carries over between rounds. JSON round-trips, so a trajectory can resume."""

    module: str
    regression: dict[str, dict] = field(default_factory=dict)  # G_t: trace id -> trace JSON
    reported: list[dict] = field(default_factory=list)  # tau: every counterexample sent to the coder
    reported_ids: set[str] = field(default_factory=set)  # reported reductions and their originals
    passing_ids: set[str] = field(default_factory=set)  # saved tests the last candidate passed
    public_results: list[dict] = field(default_factory=list)
    accepted: bool | None = None
    regression_manifest: str = ""  # digest of G_t as the harness saved it (checked before re-running)
    visible_failures: list[dict] = field(default_factory=list)  # visible fixed tests the module failed

    def advance(self, commitment: Commitment, dev: Development, public: list[dict],
                accepted: bool | None) -> None:
        self.module = commitment.module_source
        for trace in list(dev.new_traces) + [Trace.of(c["ops"], c["family"]) for c in dev.counterexamples]:
            self.regression.setdefault(trace.id, trace.to_json())
        self.reported += dev.counterexamples
        self.reported_ids |= {c["id"] for c in dev.counterexamples} | set(dev.reported_originals)
        self.passing_ids = set(dev.passing_ids)
        self.public_results = public
        self.accepted = accepted
        self.visible_failures = list(dev.visible_failures)
        self.regression_manifest = tests_manifest(self.regression.values())

    def to_json(self) -> dict:
        return {"module": self.module, "regression": self.regression, "reported": self.reported,
                "reported_ids": sorted(self.reported_ids), "passing_ids": sorted(self.passing_ids),
                "public_results": self.public_results, "accepted": self.accepted,
                "regression_manifest": self.regression_manifest, "visible_failures": self.visible_failures}

    @classmethod
    def from_json(cls, d: dict) -> TrajectoryState:
        return cls(d["module"], dict(d["regression"]), list(d["reported"]), set(d["reported_ids"]),
                   set(d["passing_ids"]), list(d["public_results"]), d["accepted"],
                   d.get("regression_manifest", ""), list(d.get("visible_failures", [])))


def tests_manifest(tests: Iterable[Trace | Mapping[str, Any]]) -> str:
    """sha256 over fixed tests (trace JSON objects or Traces), in id order: what a re-run must match."""
    items = sorted((t.to_json() if isinstance(t, Trace) else dict(t) for t in tests), key=lambda d: d["id"])
    return hashlib.sha256(canonical_json(items, ascii_only=True).encode()).hexdigest()


@dataclass(frozen=True, kw_only=True)
class Development:
    new_traces: tuple[Trace, ...]  # V_t
    duplicates: int
    executed: int  # |G_{t-1} u V_t|
    failures: int  # |F_t|
    new_failures: int  # failures among V_t (discovery)
    counterexamples: tuple[dict, ...]  # E_t as the coder sees them
    private_links: tuple[dict, ...]  # reduced id -> original id, kept ops, mechanism (never shown)
    reported_originals: tuple[str, ...]
    passing_ids: tuple[str, ...]
    regressions: int  # saved tests the previous candidate passed and this one fails
    repaired_previous: int  # of last round's counterexamples, how many now pass
    reduction_executions: int
    harness_errors: int = 0
    visible_failures: tuple[dict, ...] = ()  # saved tests this candidate fails, when they are visible

    @property
    def regression_pass(self) -> bool:
        return self.failures == 0


@dataclass(frozen=True, kw_only=True)
class RoundRecord:
    block: int
    policy: str
    round: int
    commitment: Commitment
    coding: CodingResult
    generator: dict | None  # the tester's program and what running it gave
    proposals: Proposals | None
    development: Development
    public: list[dict]
    audit: acceptance.AuditRecord  # private
    decision: acceptance.AcceptanceDecision
    population: dict  # private
    events: dict[str, float]
    harness_errors: int = 0  # executions without a verdict (wall-clock backstop), counted as failures
    fixed_tests_manifest: dict = field(default_factory=dict)


@dataclass
class LoopContext:
    domain: Domain
    executor: TraceExecutor
    coder: Coder
    tester: Tester
    policy: Policy
    workspace: Workspace
    acceptance: acceptance.AcceptanceRule
    families: dict[str, list[Trace]]  # the evaluation population by family
    public_tests: list[Trace]
    block: int
    rounds: int
    k: int
    rule: FeedbackRule
    seed_for: Callable[..., int]  # seed_for(role, round) -> int, deterministic per block/stream
    static_generator: Callable[[Policy], tuple[list, dict]]  # the block's pre-round-1 generator
    audit_randomness: Callable[[int], bytes] = lambda t: acceptance.fresh_randomness()
    execution_config: dict = field(default_factory=dict)
    public_manifest: str = ""  # tests_manifest of public_tests when the run was created
    fixed_tests: str = "hidden"  # visible: the coder sees every saved test's outcome (seed Section 3.2)


# --- steps -----------------------------------------------------------------------------------

def write_candidate(ctx: LoopContext, state: TrajectoryState, t: int) -> CodingResult:
    if t == 1:  # every policy of a block starts from the block's shared first module
        result = CodingResult(state.module, ctx.coder.simulated, ctx.coder.name, note="shared first module")
    else:
        result = ctx.coder.write_module(CodingRequest(
            block=ctx.block, round=t, seed=ctx.seed_for("coder", t), spec=ctx.domain.spec(),
            module_name=ctx.domain.module_name, current_module=state.module,
            counterexamples=tuple(state.reported), public_results=tuple(state.public_results),
            accepted=state.accepted, visible_failures=tuple(state.visible_failures)))
    ctx.workspace.write_module(result.module)
    ctx.workspace.apply_edits(result.edits)
    return result


def check_fixed_tests(ctx: LoopContext, state: TrajectoryState) -> dict:
    """Seed paper §3.1: before fixed tests are re-executed, check them against their manifest --
    the saved regression tests G_{t-1} (each trace's id is its content hash, and the set's digest
    was recorded when it was saved) and the public tests."""
    saved = state.regression.values()
    changed = [d["id"] for d in saved if trace_id(d["ops"]) != d["id"]]
    if changed or (state.regression_manifest and tests_manifest(saved) != state.regression_manifest):
        raise EvaluatorError(f"block {ctx.block} {ctx.policy.name}: the saved regression tests do not match "
                             f"their manifest ({', '.join(changed[:3]) or 'the set changed'}); they were "
                             "altered after they were saved")
    public = tests_manifest(ctx.public_tests)
    if ctx.public_manifest and public != ctx.public_manifest:
        raise EvaluatorError(f"the public tests do not match their manifest {ctx.public_manifest[:12]}")
    return {"regression": state.regression_manifest, "public": public}


def propose_traces(ctx: LoopContext, state: TrajectoryState, commitment: Commitment, t: int
                   ) -> tuple[Proposals | None, dict | None]:
    policy = ctx.policy
    if not policy.tests_in(t, ctx.rounds):
        return None, None
    if policy.source == "property":
        return property_proposals(ctx.domain, policy.traces, ctx.seed_for("property", 0)), None
    if policy.schedule in ("static", "staged"):
        raw, info = ctx.static_generator(policy)
        chunk = raw if policy.schedule == "static" else staged_chunk(raw, t, ctx.rounds)
        return proposals_from_raw(ctx.domain, chunk, len(chunk), info.get("error")), info
    request = TestingRequest(
        block=ctx.block, round=t, seed=ctx.seed_for("tester", t), spec=ctx.domain.spec(),
        families=tuple(ctx.domain.families), traces=policy.traces,
        public_examples=tuple(p.ops for p in ctx.public_tests),
        counterexamples=tuple(state.reported) if policy.sees_history else (),
        module=commitment.module_source if policy.sees_module else None)
    program = ctx.tester.write_generator(request)
    raw, error = ([], "no generator in the response") if program.source is None else run_generator(
        program.source, policy.traces, ctx.seed_for("sample", t))
    info = {"source": program.source, "simulated": program.simulated, "model": program.model,
            "note": program.note, "error": error, "calls": list(program.calls)}
    return proposals_from_raw(ctx.domain, raw, policy.traces, error), info


def evaluate_development(ctx: LoopContext, state: TrajectoryState, commitment: Commitment,
                         proposals: Proposals | None, t: int) -> Development:
    saved = [Trace(tuple(d["ops"]), d["family"], d["id"]) for d in state.regression.values()]
    seen, new, duplicates = set(state.regression), [], 0
    for trace in proposals.valid if proposals else ():
        if trace.id in seen:
            duplicates += 1
        else:
            seen.add(trace.id)
            new.append(trace)
    executed = saved + new
    # The public tests ride along in the same isolated run (they are re-read from the cache later).
    outcomes = ctx.executor.failures(commitment.module_source, executed + ctx.public_tests)[:len(executed)]
    failing = [ObservedFailure(tr, f) for tr, f in zip(executed, outcomes) if f is not None]
    passing = {tr.id for tr, f in zip(executed, outcomes) if f is None}
    counterexamples: list[dict] = []
    links: list[dict] = []
    executions = 0
    if t < ctx.rounds:  # feedback from the last round would reach no coder
        counterexamples, links, executions = select_counterexamples(ctx, state, commitment, failing)
    last = {c["id"] for c in state.reported if c["round"] == t - 1}
    return Development(
        new_traces=tuple(new), duplicates=duplicates, executed=len(executed), failures=len(failing),
        new_failures=sum(1 for c in failing if c.trace.id not in state.regression),
        counterexamples=tuple(counterexamples), private_links=tuple(links),
        reported_originals=tuple(link["original_id"] for link in links), passing_ids=tuple(sorted(passing)),
        regressions=len(state.passing_ids - passing), repaired_previous=len(last & passing),
        reduction_executions=executions,
        harness_errors=sum(1 for f in outcomes if f is not None and f.error in HARNESS_ERRORS),
        visible_failures=tuple(_shown(c.trace, c.failure, t) for c in failing) if ctx.fixed_tests == "visible" else ())


def _shown(trace: Trace, f: Failure, t: int) -> dict:
    """A failing test as the coder sees it: operations, expected and observed replies, status."""
    return {"id": trace.id, "round": t, "family": trace.family, "ops": [dict(op) for op in trace.ops],
            "expected": list(f.expected.replies), "observed": list(f.observed.replies),
            "status": f.observed.error or "ok"}


def select_counterexamples(ctx: LoopContext, state: TrajectoryState, commitment: Commitment,
                           failing: list[ObservedFailure]) -> tuple[list[dict], list[dict], int]:
    """Pool of 4k by the rule, reduce each, choose at most k new ones by the rule again."""
    reported_families = frozenset(c["family"] for c in state.reported)
    fresh = [c for c in failing if c.trace.id not in state.reported_ids]
    pool = ctx.rule.select(fresh, POOL_FACTOR * ctx.k, reported_families)
    reductions = reduce_failures(ctx.executor, commitment.module_source,
                                 [(c.trace, c.failure) for c in pool], ctx.domain.validate, ctx.domain.max_ops)
    by_id: dict[str, Reduction] = {}
    for r in reductions:
        if r.reduced.id not in state.reported_ids:
            by_id.setdefault(r.reduced.id, r)
    chosen_ids = {c.trace.id for c in ctx.rule.select(
        [ObservedFailure(r.reduced, r.failure) for r in by_id.values()], ctx.k, reported_families)}
    shown, links = [], []
    for rid, r in by_id.items():
        if rid in chosen_ids:
            f = r.failure
            shown.append(_shown(r.reduced, f, commitment.round))
            links.append({"id": rid, "original_id": r.original.id, "kept": list(r.kept),
                          "mechanism": f.mechanism, "executions": r.executions})
    return shown, links, sum(r.executions for r in reductions)


def run_public_tests(ctx: LoopContext, commitment: Commitment) -> list[dict]:
    outcomes = ctx.executor.failures(commitment.module_source, ctx.public_tests)
    expected = ctx.executor.reference(ctx.public_tests)
    observed = ctx.executor.candidate(commitment.module_source, ctx.public_tests)
    return [{"id": tr.id, "family": tr.family, "ops": [dict(op) for op in tr.ops], "passed": f is None,
             "expected": list(e.replies), "observed": list(o.replies), "status": o.error or "ok"}
            for tr, f, e, o in zip(ctx.public_tests, outcomes, expected, observed)]


def evaluate_population(ctx: LoopContext, state: TrajectoryState, commitment: Commitment,
                        dev: Development) -> dict:
    population = [t for traces in ctx.families.values() for t in traces]
    outcomes = ctx.executor.failures(commitment.module_source, population)
    seen = state.reported_ids | {c["id"] for c in dev.counterexamples} | set(dev.reported_originals)
    seen |= {t.id for t in ctx.public_tests}
    by_family = {f: 0 for f in ctx.families}
    unseen_size = unseen_failures = 0
    for trace, failure in zip(population, outcomes):
        by_family[trace.family] += failure is not None
        if trace.id not in seen:
            unseen_size += 1
            unseen_failures += failure is not None
    return {"failures": sum(by_family.values()), "size": len(population), "by_family": by_family,
            "harness_errors": sum(1 for f in outcomes if f is not None and f.error in HARNESS_ERRORS),
            "unseen_failures": unseen_failures, "unseen_size": unseen_size,
            "module_hash": source_hash(commitment.module_source)}


def public_examples(domain: Domain, count: int) -> list[Trace]:
    """The public examples: the domain's own when it has them, else `count` seeded traces."""
    own = list(domain.public_examples())
    if own:
        return own[:count] if count else own
    rng = random.Random("gtdd-public-examples")
    return [domain.generate(rng) for _ in range(count)]
