"""The AutoSaddler search loop (docs/design.md §7).

Each round: choose a parent, evaluate it on the next unused proposal minibatch, propose exactly one
edit, validate it, evaluate the child on the same tasks, screen it, and develop a passing child on
the development split. Every step is recorded in the DAG and the store together with the search
state (RNG, minibatch cursor, counters), and every task evaluation is stored as soon as it finishes,
so `autosaddler resume` continues where a killed run stopped and ends with the same DAG.

Provider failures never become scores or rejections: an evaluation the provider prevented raises
`EvaluationIncomplete` (recorded by the evaluator) and a failed optimizer session stops the search
(`optimizer_unavailable`) before anything of the round is recorded, so no parent or child is
screened or ranked on it and `autosaddler resume` redoes the round once the provider recovers.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, ValidationError
from pydantic import Field as PydField

from autosaddler import store as search_store
from autosaddler.config import SearchConfig
from autosaddler.dag import EvolutionDAG, GeneratorUsage, Node
from autosaddler.edits import Edit, RejectedEdit, apply_edit, describe, parse_edit
from autosaddler.protocols import (
    EvaluatesEach,
    Optimizer,
    ParentView,
    RecordsExchanges,
    ResumesUsage,
    ScreenRule,
    StrategyEvaluator,
)
from autosaddler.screen import StrictImprovementNoRegression
from autosaddler.traces import TaskEval, eval_column, optimizer_traces, stored_eval
from testhelix.core.errors import EvaluationIncomplete, UserError
from testhelix.llm.base import ModelError
from testhelix.store.runstore import RunStore
from testhelix.strategy.model import Strategy


@dataclass
class SearchState:
    order: list[str]                 # the proposal tasks in seeded order
    cursor: int = 0                  # next unused position in `order`
    proposals: int = 0               # every proposal, rejected ones included
    iterations: int = 0              # rounds whose child was evaluated
    next_node: int = 1
    rng: list = field(default_factory=list)

    def to_json(self) -> dict:
        return dict(self.__dict__)


@dataclass
class Search:
    config: SearchConfig
    store: RunStore
    evaluator: StrategyEvaluator
    optimizer: Optimizer
    proposal_ids: Sequence[str]
    development_ids: Sequence[str]
    known_task_ids: Sequence[str] = ()
    screen: ScreenRule = field(default_factory=StrictImprovementNoRegression)
    on_step: Callable[[Node], None] = lambda node: None

    # --- the loop -----------------------------------------------------------------------------
    def run(self, initial: Strategy) -> EvolutionDAG:
        dag, state, rng = self._start_or_resume(initial)
        while not self._done(state):
            started = time.monotonic()
            parent_id = self._choose_parent(dag)
            batch = state.order[state.cursor: state.cursor + self.config.train_minibatch_size]
            parent = Strategy.model_validate(dag.node(parent_id).strategy)
            parent_out = self._evaluate(parent, batch, "proposal")
            state.proposals += 1
            try:
                edit = self._propose(parent, parent_out, _history(dag))
            except ModelError as err:
                raise optimizer_unavailable(err) from err
            try:
                child = apply_edit(parent, edit, self.known_task_ids)
            except RejectedEdit as rejected:
                # A rejected node keeps the parent's strategy and the proposal as parsed.
                self._record(dag, state, rng, parent_id=parent_id, strategy=parent, edit=edit,
                             status="rejected", reason=rejected.reason, parent_out=parent_out, child_out={},
                             dev=None, started=started)
                continue
            child_out = self._evaluate(child, batch, "proposal")
            state.iterations += 1
            state.cursor += len(batch)
            passed, why = self.screen.passes(_scores(parent_out), _scores(child_out))
            dev = self._development_score(child) if passed else None
            self._record(dag, state, rng, parent_id=parent_id, strategy=child, edit=edit,
                         status="developed" if passed else "screened_out", reason=why, parent_out=parent_out,
                         child_out=child_out, dev=dev, started=started)
        return dag

    # --- named steps ------------------------------------------------------------------------
    def _start_or_resume(self, initial: Strategy) -> tuple[EvolutionDAG, SearchState, random.Random]:
        saved = self.store.get_state("search")
        if saved is not None:
            dag = EvolutionDAG.load(self.store)
            state = _validated_state(saved, dag, self.proposal_ids, self.config, str(self.store.path))
            rng = random.Random()
            rng.setstate(_rng_from_json(state.rng))
            if isinstance(self.optimizer, ResumesUsage):
                self.optimizer.restore_usage([n.optimizer_usage for n in dag.nodes()])
            return dag, state, rng
        rng = random.Random(self.config.seed)
        state = SearchState(order=_epoch_order(self.proposal_ids, self.config.train_epochs,
                                               self.config.train_minibatch_size, rng))
        dag = EvolutionDAG()
        root = Node(node_id="n000", iteration=0, strategy_hash=initial.content_hash(),
                    strategy=initial.model_dump(mode="json"), edit=None, status="root",
                    dev_score=self._development_score(initial))
        state.rng = _rng_to_json(rng.getstate())
        dag.record(self.store, root, None, {"search": state.to_json()})
        self.on_step(root)
        return dag, state, rng

    def _done(self, state: SearchState) -> bool:
        out_of_tasks = state.cursor + self.config.train_minibatch_size > len(state.order)
        return (state.iterations >= self.config.completed_train_iterations
                or state.proposals >= self.config.max_candidate_proposals or out_of_tasks)

    def _choose_parent(self, dag: EvolutionDAG) -> str:
        views = [ParentView(n.node_id, score, dag.depth(n.node_id), describe(n.edit),
                            sum(n.child_outcomes.values()) if n.child_outcomes else None)
                 for n, score in dag.scored()]
        choice = self.optimizer.select_parent(views)
        if choice not in {v.node_id for v in views}:
            choice = dag.best().node_id  # an invalid choice falls back to the best development score
        return choice

    def _evaluate(self, strategy: Strategy, task_ids: Sequence[str], split: str) -> dict[str, TaskEval]:
        """Stored evaluations are reused; each new one is stored as soon as it finishes."""
        key = strategy.content_hash()
        out: dict[str, TaskEval] = {}
        todo = []
        for task_id in task_ids:
            row = search_store.get_search_eval(self.store, key, task_id)
            if row is None:
                todo.append(task_id)
            else:
                out[task_id] = stored_eval(int(row["success"]), row["trace"],
                                           f"{self.store.path}: search_evals row ({key[:12]}, {task_id})")
        for task_id, result in _each(self.evaluator, strategy, todo):   # concurrent; stored here, one by one
            search_store.put_search_eval(self.store, key, task_id, split, result.success, eval_column(result))
            out[task_id] = result
        return {t: out[t] for t in task_ids}

    def _propose(self, parent: Strategy, outcomes: dict[str, TaskEval], history: list[str]) -> Edit:
        """The optimizer's proposal (an optimizer outside the project may answer with a plain dict:
        it is parsed like a model's answer)."""
        traces = optimizer_traces(outcomes)
        diagnosis = self.optimizer.diagnose(parent, traces, history)
        proposal = self.optimizer.reflect(parent, traces, diagnosis) if diagnosis.wants_lesson else diagnosis.edit
        return parse_edit(proposal)

    def _development_score(self, strategy: Strategy) -> float:
        dev = list(self.development_ids)[: self.config.development_limit or None]
        outcomes = self._evaluate(strategy, dev, "development")
        return sum(o.success for o in outcomes.values()) / len(dev)

    def _record(self, dag: EvolutionDAG, state: SearchState, rng: random.Random, *, parent_id: str,
                strategy: Strategy, edit: Edit | None, status: str, reason: str,
                parent_out: dict[str, TaskEval], child_out: dict[str, TaskEval], dev: float | None,
                started: float) -> None:
        node = Node(node_id=f"n{state.next_node:03d}", iteration=state.proposals,
                    strategy_hash=strategy.content_hash(), strategy=strategy.model_dump(mode="json"), edit=edit,
                    status=status, reason=reason, parent_outcomes=_scores(parent_out), child_outcomes=_scores(child_out),
                    dev_score=dev, optimizer_usage=self.optimizer.usage(),
                    generator_usage=_usage_total(parent_out, child_out), elapsed_s=round(time.monotonic() - started, 3))
        state.next_node += 1
        state.rng = _rng_to_json(rng.getstate())
        state_rows: dict = {"search": state.to_json()}
        # an optimizer without `exchanges()` (a plug-in, a test double) records no transcript
        exchanges = self.optimizer.exchanges() if isinstance(self.optimizer, RecordsExchanges) else []
        if exchanges:
            state_rows[exchanges_key(node.node_id)] = exchanges
        dag.record(self.store, node, parent_id, state_rows)
        self.on_step(node)


def exchanges_key(node_id: str) -> str:
    """The search_state key of a node's optimizer prompts and replies."""
    return f"optimizer-exchanges/{node_id}"


def _epoch_order(task_ids: Sequence[str], epochs: int, size: int, rng: random.Random) -> list[str]:
    """The proposal tasks once per epoch, each epoch shuffled afresh by the seeded RNG and cut to
    whole minibatches, so that no minibatch straddles two epochs or repeats a task."""
    order: list[str] = []
    for _ in range(epochs):
        epoch = sorted(task_ids)
        rng.shuffle(epoch)
        order += epoch[: len(epoch) - len(epoch) % size]
    return order


def optimizer_unavailable(err: ModelError) -> Exception:
    """A failed diagnosis or reflection session: stop the search (exit 2 for auth/config errors)."""
    if err.fatal:
        return err
    return EvaluationIncomplete("the optimizer session", err.cause, str(err))


def _each(evaluator: StrategyEvaluator, strategy: Strategy, task_ids: Sequence[str]) -> Iterator[tuple[str, TaskEval]]:
    """(task id, evaluation) as each finishes: from `evaluate_each` when the evaluator runs tasks
    concurrently, else one `evaluate` call per task."""
    if isinstance(evaluator, EvaluatesEach):
        yield from evaluator.evaluate_each(strategy, task_ids)
        return
    for task_id in task_ids:
        yield task_id, evaluator.evaluate(strategy, [task_id])[task_id]


def _scores(outcomes: dict[str, TaskEval]) -> dict[str, int]:
    return {t: int(o.success) for t, o in outcomes.items()}


def _usage_total(*groups: dict[str, TaskEval]) -> GeneratorUsage:
    """What the generator used over the evaluations (stored with the node); {} when none reported usage."""
    used = [o.usage for g in groups for o in g.values() if o.usage is not None]
    if not used:
        return {}
    return {"tokens": sum(u.tokens for u in used), "calls": sum(u.calls for u in used)}


def _history(dag: EvolutionDAG) -> list[str]:
    """Earlier proposals and their fate, oldest first (what the optimizer learns from)."""
    return [f"{describe(n.edit)}: {n.status} ({n.reason})" for n in dag.nodes() if n.status != "root"]


def _rng_to_json(state: tuple) -> list:
    version, internal, gauss = state
    return [version, list(internal), gauss]


def _rng_from_json(data: list) -> tuple:
    if not data:
        raise UserError("the stored search state has no RNG state")
    return (data[0], tuple(data[1]), data[2])


class _StoredState(BaseModel):
    """The schema of search_state row 'search' (unknown keys refused)."""

    model_config = ConfigDict(extra="forbid", strict=True)
    order: list[str]
    cursor: int = PydField(ge=0)
    proposals: int = PydField(ge=0)
    iterations: int = PydField(ge=0)
    next_node: int = PydField(ge=1)
    rng: list


def _check_order(order: Sequence[str], proposal_ids: Sequence[str], config: SearchConfig, row: str) -> None:
    """`order` has the shape _epoch_order gives: per epoch, distinct proposal tasks cut to whole
    minibatches (so an epoch may leave out up to minibatch size - 1 of them)."""
    known, size = set(proposal_ids), config.train_minibatch_size
    per_epoch = len(known) - len(known) % size
    if len(order) != per_epoch * config.train_epochs:
        raise UserError(f"{row}: 'order' holds {len(order)} tasks; {config.train_epochs} epoch(s) of "
                        f"{per_epoch} proposal tasks (whole minibatches of {size}) hold {per_epoch * config.train_epochs}")
    for epoch in range(config.train_epochs):
        part = order[epoch * per_epoch:(epoch + 1) * per_epoch]
        if len(set(part)) != len(part) or not set(part) <= known:
            raise UserError(f"{row}: epoch {epoch + 1} of 'order' repeats a task or names one outside the "
                            f"proposal split's {len(known)} tasks")


def _validated_state(saved: object, dag: EvolutionDAG, proposal_ids: Sequence[str], config: SearchConfig,
                     where: str) -> SearchState:
    """The stored search state, checked against its schema and against the DAG it belongs to."""
    row = f"{where}: search_state row 'search'"
    try:
        state = _StoredState.model_validate(saved)
    except ValidationError as err:
        problems = [(".".join(str(p) for p in e["loc"]) or "$", e["msg"]) for e in err.errors()]
        raise UserError(f"{row} does not match its schema", problems) from None
    _check_order(state.order, proposal_ids, config, row)
    limit = len(state.order)
    if state.cursor > limit:
        raise UserError(f"{row}: cursor {state.cursor} is out of range (0..{limit})")
    rng = state.rng
    if not (len(rng) == 3 and rng[0] == 3 and isinstance(rng[1], list) and len(rng[1]) == 625
            and all(isinstance(x, int) and 0 <= x < 2 ** 32 for x in rng[1])
            and (rng[2] is None or isinstance(rng[2], float))):
        raise UserError(f"{row}: 'rng' is not a Mersenne Twister state (version 3, 625 words, gauss)")
    nodes = len(dag.nodes())
    if state.next_node != nodes:
        raise UserError(f"{row}: next_node {state.next_node} disagrees with the {nodes} nodes in dag_nodes")
    if state.proposals != nodes - 1 or state.iterations > state.proposals:
        raise UserError(f"{row}: counters (proposals {state.proposals}, iterations {state.iterations}) disagree "
                        f"with the {nodes - 1} proposals in dag_nodes")
    return SearchState(**state.model_dump())
