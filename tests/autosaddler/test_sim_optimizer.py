"""The simulated optimizer (autosaddler/sim_optimizer.py): its edit protocol, the three sessions as
simulated roles found through the `testhelix.simulated_roles` entry points, and the same answers in
process and behind `testhelix serve`."""

from __future__ import annotations

import json
import random
from pathlib import Path

from autosaddler import sim_optimizer
from autosaddler.edits import FieldEdit, LessonEdit, UnparsedEdit, describe, parse_edit
from autosaddler.prompts import history_message, optimizer_messages, reflection_messages, selection_messages
from testhelix.llm.base import Message, ModelRequest
from testhelix.llm.registry import create_model, create_optimizer_model
from testhelix.llm.serve.roles import infer_tags
from testhelix.llm.serve.server import ModelServer
from testhelix.llm.sim.contributed import UNRECOGNISED, SimulatedRole, simulated_roles
from testhelix.llm.sim.model import request_seed
from testhelix.strategy.model import Strategy, initial_strategy
from testhelix.tasks.task import load_task

TRACES = [{"context": "algorithm", "success": False, "exit": "step_limit", "steps": 12, "elided": 0,
           "failed_initial": False, "passed_repair": True, "review": "revise",
           "instruction_excerpt": "is expected to return 2"}]
SKILLS = "- reproduce-first: start (contexts: algorithm, general)"


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
    for seed in range(30):
        proposal = parse_edit(sim_optimizer.propose(tuple(msgs), random.Random(seed)))
        assert isinstance(proposal, (FieldEdit, LessonEdit))
        seen.add(proposal.field if isinstance(proposal, FieldEdit) else (proposal.lesson or {})["id"])
        if isinstance(proposal, LessonEdit):
            assert proposal.op == "add" and proposal.lesson_id is None
            lesson_strategy = initial_strategy().model_dump(mode="json")
            lesson_strategy["lessons"] = [proposal.lesson]
            Strategy.model_validate(lesson_strategy)        # the proposed lesson passes the schema
    assert seen == {"agentSteps", "fail-first", "described-behaviour", "skillRoutes"}
    assert isinstance(parse_edit("no json here"), UnparsedEdit)
    assert isinstance(parse_edit(json.dumps({"kind": "field", "field": "agentSteps"})), UnparsedEdit)


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
    model = create_optimizer_model("sim:strong", seed=4)
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
    answer = create_model("sim:strong", task=task, seed=2).complete(ModelRequest(messages))
    assert answer.text == sim_optimizer.propose(messages, random.Random(request_seed(2, messages)))
    assert isinstance(parse_edit(answer.text), (FieldEdit, LessonEdit))


def test_a_served_simulated_optimizer_answers_as_the_one_in_process(monkeypatch):
    """`testhelix serve` reads the session from the request text and answers with the same double."""
    monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "k")
    in_process = create_optimizer_model("sim:strong", seed=7)
    with ModelServer("sim:strong", seed=7) as server:
        served = create_model(f"openai-compatible:sim@{server.url}/v1")
        for messages in sessions().values():
            request = ModelRequest(tuple(messages), max_output_tokens=1024)
            here, there = in_process.complete(request), served.complete(request)
            assert there.text == here.text and there.simulated
