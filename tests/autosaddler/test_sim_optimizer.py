"""The simulated optimizer (autosaddler/sim_optimizer.py): its edit protocol, the three sessions as
simulated roles found through the `testhelix.simulated_roles` entry points, and the same answers in
process and behind `testhelix serve`."""

from __future__ import annotations

import ast
import json
import random
from collections.abc import Sequence
from pathlib import Path

from autosaddler import sim_optimizer
from autosaddler.edits import FieldEdit, LessonEdit, UnparsedEdit, apply_edit, describe, parse_edit
from autosaddler.prompts import history_message, optimizer_messages, reflection_messages, selection_messages
from testhelix.llm.base import Message, ModelRequest
from testhelix.llm.registry import create_model, create_optimizer_model, model_ref
from testhelix.llm.serve.request_tags import infer_tags
from testhelix.llm.serve.server import ModelServer
from testhelix.llm.sim.contributed import UNRECOGNISED, SimulatedRole, simulated_roles
from testhelix.llm.sim.model import request_seed
from testhelix.strategy.model import Strategy, initial_strategy
from testhelix.tasks.task import load_task

TRACES = [{"context": "algorithm", "success": False, "exit": "step_limit", "steps": 12, "elided": 0,
           "failed_initial": False, "passed_repair": True, "review": "revise",
           "instruction_excerpt": "is expected to return 2"}]
SKILLS = ("- boundary-values: pick inputs at and past limits (contexts: algorithm, general)\n"
          "- stateful-sequences: drive operation sequences (contexts: stateful)")


def sessions() -> dict[str, list[Message]]:
    """One request of each session, as the search writes them (autosaddler/prompts.py)."""
    diagnosis = optimizer_messages(initial_strategy().canonical_json(), TRACES, SKILLS)
    diagnosis.append(history_message(["set agentSteps = 16 (rejected)"]))
    draft = {"id": "fail-first", "triggers": ["expected"], "text": "Applicability: a. Action: b. Verification: c.",
             "components": ["generation"], "capabilities": ["reproduction"]}
    return {"optimizer": diagnosis,
            "selection": selection_messages([{"node": "n000", "dev_score": 0.5}, {"node": "n001", "dev_score": 0.75},
                                             {"node": "n002", "dev_score": 0.75}]),
            "reflection": reflection_messages('{"kind": "lesson"}', TRACES, [], draft)}


def test_optimizer_protocol_round_trip():
    msgs = optimizer_messages(initial_strategy().canonical_json(), TRACES, SKILLS)
    seen = set()
    for seed in range(40):
        proposal = parse_edit(sim_optimizer.propose(tuple(msgs), random.Random(seed)))
        assert isinstance(proposal, (FieldEdit, LessonEdit))
        seen.add(proposal.field if isinstance(proposal, FieldEdit) else (proposal.lesson or {})["id"])
        child = apply_edit(initial_strategy(), proposal)     # every proposal is a valid edit of its parent
        if isinstance(proposal, LessonEdit):
            assert proposal.op == "add" and proposal.lesson_id is None and len(child.lessons) == 1
    # the three diagnoses these traces show (no failure on the initial program, a review asking for
    # revision, the step cap), each with guidance, lesson and field advice, and a skill route
    assert {"guidance", "reproduce-report", "described-behaviour", "agentSteps", "skillRoutes"} <= seen
    assert isinstance(parse_edit("no json here"), UnparsedEdit)
    assert isinstance(parse_edit(json.dumps({"kind": "field", "field": "agentSteps"})), UnparsedEdit)


def _trace(context: str, success: bool, *, failed_initial: bool = True, passed_repair: bool = True,
           review: str = "approve", exit_kind: str = "submitted", elided: int = 0, text: str = "") -> dict:
    return {"context": context, "success": success, "exit": exit_kind, "steps": 6, "elided": elided,
            "failed_initial": failed_initial, "passed_repair": passed_repair, "review": review,
            "submission": "consensus", "instruction_excerpt": text}


def _minibatch(texts: list[str]) -> list[dict]:
    """Eight tasks: three failed without failing on the initial program, one failed its own repair."""
    shapes = [dict(success=False, failed_initial=False), dict(success=True), dict(success=False, failed_initial=False),
              dict(success=True), dict(success=False, passed_repair=False, review="revise"), dict(success=True),
              dict(success=False, failed_initial=False, exit_kind="step_limit"), dict(success=True)]
    contexts = ["stateful", "algorithm", "stateful", "cli", "general", "visual", "stateful", "framework"]
    return [{"task": f"task {i + 1}", **_trace(c, text=t, **s)}   # type: ignore[arg-type]
            for i, (c, s, t) in enumerate(zip(contexts, shapes, texts))]


REPORTS = ["With c = LRUCache(2) the key 'a' should stay; instead it was evicted.",
           "parse('1h 30m') is expected to return 5400 but returned 5430."] * 4
DECOYS = ["Calling render(table) with two rows printed one; it should print both.",
          "The route from A to D is expected to cost 7; the program reports 9 instead."] * 4


def _proposal(traces: list[dict], seed: int, history: Sequence[str] = (), strategy: Strategy | None = None) -> str:
    msgs = optimizer_messages((strategy or initial_strategy()).canonical_json(), traces, SKILLS)
    if history:
        msgs.append(history_message(list(history)))
    return sim_optimizer.propose(msgs, random.Random(seed))


def test_it_proposes_guidance_edits_that_address_what_it_diagnosed():
    proposals = [parse_edit(_proposal(_minibatch(REPORTS), seed)) for seed in range(40)]
    guidance = [p for p in proposals if isinstance(p, FieldEdit) and p.field == "guidance"]
    assert len(guidance) >= 5
    shown = ("no_initial_failure", "own_repair_failed", "review_revise", "step_limit")   # what _minibatch holds
    advice = {a.guidance for d in shown for a in sim_optimizer.CATALOGUE[d] if a.kind == "guidance"}
    for edit in guidance:
        assert apply_edit(initial_strategy(), edit).guidance in advice
        assert "failed" in edit.rationale      # the rationale names the diagnosis and its count
    assert {e.value for e in guidance} == advice   # over 40 seeds every diagnosis's guidance comes up
    # guidance goes ahead of the parent's guidance, which it keeps
    parent = initial_strategy().model_copy(update={"guidance": "Keep tests short."})
    for seed in range(40):
        kept = parse_edit(_proposal(_minibatch(REPORTS), seed, strategy=parent))
        if isinstance(kept, FieldEdit) and kept.field == "guidance":
            assert str(kept.value).endswith("Keep tests short.") and str(kept.value) != "Keep tests short."


def test_its_proposals_depend_only_on_the_traces_failure_patterns_and_the_strategy():
    """Decoy traces: the same failure patterns under other task text and other task labels give the
    same proposal for the same random stream; other failure patterns give other proposals."""
    decoys = [dict(t, task=f"task {9 - i}") for i, t in enumerate(_minibatch(DECOYS))][::-1]
    for seed in range(25):
        assert _proposal(_minibatch(REPORTS), seed) == _proposal(decoys, seed)
    all_passed = [dict(t, success=True) for t in _minibatch(REPORTS)]
    assert {_proposal(all_passed, s) for s in range(25)}.isdisjoint({_proposal(_minibatch(REPORTS), s) for s in range(25)})


def test_different_seeds_explore_different_edits_and_repeats_explore():
    first = {describe(parse_edit(_proposal(_minibatch(REPORTS), seed))) for seed in range(12)}
    assert len(first) >= 4
    # a search asking the same parent again with the history of what it proposed: never a repeat
    history: list[str] = []
    for _ in range(6):
        edit = parse_edit(_proposal(_minibatch(REPORTS), 3, history))
        assert isinstance(edit, (FieldEdit, LessonEdit))
        named = describe(edit)
        assert all(not h.startswith(named) for h in history)
        history.append(f"{named}: screened_out (no improvement)")


def test_it_never_reads_the_simulated_agents_vocabulary():
    tree = ast.parse(Path(sim_optimizer.__file__).read_text())
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)} | {
        a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert not any(m and m.startswith("testhelix.llm.sim") for m in imported)
    assert "cues" not in Path(sim_optimizer.__file__).read_text().replace("cues.py", "")


def test_a_rejected_edit_in_the_history_is_not_proposed_again():
    """The history names edits as the search does (edits.describe): an edit named there is avoided."""
    msgs = optimizer_messages(initial_strategy().canonical_json(), TRACES, SKILLS)
    first = parse_edit(sim_optimizer.propose(msgs, random.Random(0)))
    again = [parse_edit(sim_optimizer.propose([*msgs, history_message([describe(first)])], random.Random(seed)))
             for seed in range(20)]
    assert all(describe(edit) != describe(first) for edit in again)


def test_each_session_is_installed_as_a_simulated_role_that_recognises_only_its_own_requests():
    installed: dict[str, object] = {role.name: role for role in simulated_roles()}
    assert installed == {"optimizer": sim_optimizer.DIAGNOSIS, "selection": sim_optimizer.SELECTION,
                         "reflection": sim_optimizer.REFLECTION}
    roles = simulated_roles()
    for name, messages in sessions().items():
        assert isinstance(installed[name], SimulatedRole)
        assert [role.name for role in roles if role.recognises(messages)] == [name]
        assert infer_tags(messages).role == name              # what `testhelix serve` tags the request with


def test_the_sessions_answer_in_their_protocols():
    model = create_optimizer_model(model_ref("sim:strong"), seed=4)
    answers = {name: model.complete(ModelRequest(tuple(messages))) for name, messages in sessions().items()}
    assert isinstance(parse_edit(answers["optimizer"].text), (FieldEdit, LessonEdit))
    assert json.loads(answers["selection"].text)["parent"] in ("n001", "n002")   # a best-scored candidate
    assert json.loads(answers["reflection"].text)["id"] == "fail-first"          # the draft, as given
    assert all(a.metadata["simulated"] and a.model == "sim:strong" for a in answers.values())
    stray = model.complete(ModelRequest((Message("user", "What is the weather?"),)))
    assert stray.text == UNRECOGNISED


def test_a_simulated_model_playing_a_task_answers_a_diagnosis_through_the_same_role():
    task = load_task(Path(__file__).resolve().parents[1] / "fixtures" / "sim_task" / "sim-chunker-m01")
    messages = tuple(sessions()["optimizer"])
    answer = create_model(model_ref("sim:strong"), task=task, seed=2).complete(ModelRequest(messages))
    assert answer.text == sim_optimizer.propose(messages, random.Random(request_seed(2, messages)))
    assert isinstance(parse_edit(answer.text), (FieldEdit, LessonEdit))


def test_a_served_simulated_optimizer_answers_as_the_one_in_process(monkeypatch):
    """`testhelix serve` reads the session from the request text and answers with the same double."""
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "k")
    in_process = create_optimizer_model(model_ref("sim:strong"), seed=7)
    with ModelServer("sim:strong", seed=7) as server:
        served = create_model(model_ref(f"openai-compatible:sim@{server.url}/v1"))
        for messages in sessions().values():
            request = ModelRequest(tuple(messages), max_output_tokens=1024)
            here, there = in_process.complete(request), served.complete(request)
            assert there.text == here.text and there.simulated
