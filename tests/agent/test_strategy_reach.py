"""Where strategy content may go: guidance only to the candidate's sessions, lessons only by
component and retrieval, skills loadable by the agent through `load_skill` (never the
reviewer-only skill), and the lenient JSON reading of single-call answers."""

from __future__ import annotations

from testhelix.agent import prompts
from testhelix.agent.budget import Budget, MemoryLedger
from testhelix.agent.calls import parse_json_object
from testhelix.agent.loop import ELIDED, SessionConfig, run_agent_session
from testhelix.agent.prompts import PublicTask
from testhelix.llm.base import Usage
from testhelix.llm.testing import ScriptedModel, tool_call
from testhelix.strategy.model import Strategy, initial_strategy
from testhelix.strategy.skills import load_library

GUIDANCE = "Reproduce the exact scenario of the bug report before anything else."


def lesson(lesson_id: str, components: list[str]) -> dict:
    return {"id": lesson_id, "triggers": ["chunk"], "components": components,
            "text": f"Applicability: lesson {lesson_id}.\nAction: check the boundary the report names.\n"
                    "Verification: the suite fails on the initial program."}


def with_fields(**fields) -> Strategy:
    return Strategy.model_validate(initial_strategy().model_dump(mode="json") | fields)


def reviewer_prompt(strategy, task) -> list:
    return prompts.review_messages(strategy, PublicTask.of(task), "source", {"test_a.py": "def test_a(): pass"},
                                   "initial program: fail")


def planner_prompt(strategy, task) -> list:
    return prompts.planning_messages(strategy, PublicTask.of(task), 3)


def test_guidance_reaches_candidate_sessions_only(sim_task):
    guided = with_fields(guidance=GUIDANCE)
    public = PublicTask.of(sim_task)
    for phase in ("generation", "repair"):
        text = "\n".join(m.content for m in prompts.session_messages(guided, public, phase=phase))
        assert GUIDANCE in text, phase
    assert reviewer_prompt(guided, sim_task) == reviewer_prompt(initial_strategy(), sim_task)
    assert planner_prompt(guided, sim_task) == planner_prompt(initial_strategy(), sim_task)


def test_lessons_reach_the_reviewer_and_planner_only_through_their_component(sim_task):
    assert "chunk" in sim_task.instruction.lower()  # the trigger matches, so only the component decides
    foreign = with_fields(lessons=[lesson("cand", ["generation", "repair"])])
    assert reviewer_prompt(foreign, sim_task) == reviewer_prompt(initial_strategy(), sim_task)
    assert planner_prompt(foreign, sim_task) == planner_prompt(initial_strategy(), sim_task)
    own = with_fields(lessons=[lesson("rev", ["review"]), lesson("plan", ["planning"])])
    review_text = "\n".join(m.content for m in reviewer_prompt(own, sim_task))
    plan_text = "\n".join(m.content for m in planner_prompt(own, sim_task))
    assert "Lesson rev" in review_text and "Lesson plan" not in review_text
    assert "Lesson plan" in plan_text and "Lesson rev" not in plan_text


def test_a_preparation_lesson_opens_the_first_generation_session_only(sim_task, executor, tmp_path):
    """The preparation checkpoint: the first generation session's opening prompt carries the
    preparation lesson (retrieved against the task and the workspace listing, before the
    generation lessons); a repair session and a later round do not; an untagged lesson is not
    shown twice."""
    prep = {"id": "prep", "triggers": ["program/"], "components": ["preparation"],
            "text": "Applicability: any task.\nAction: read the program module the report names first.\n"
                    "Verification: the test imports that module."}
    strategy = with_fields(lessons=[prep, lesson("both", [])])
    model = scripted([("submit", {"summary": "done"})])
    _session(sim_task, executor, tmp_path / "g", model, strategy=strategy)
    opening = [m.content for m in model.requests[0].messages if m.role == "user"]
    prep_msgs = [i for i, text in enumerate(opening) if "Lesson prep" in text]
    gen_msgs = [i for i, text in enumerate(opening) if "Lesson both" in text]
    assert len(prep_msgs) == 1 and len(gen_msgs) == 1 and prep_msgs[0] < gen_msgs[0]
    assert opening[prep_msgs[0]].startswith("Lessons learned for the preparation phase")
    assert "Lesson both" not in opening[prep_msgs[0]]
    # the trigger matched the host's workspace listing, not the task text
    assert "program/" not in sim_task.instruction
    later = scripted([("submit", {})])
    run_agent_session(later, Budget(10**6, sink=MemoryLedger()), SessionConfig(
        task=sim_task, strategy=strategy, workspace_root=tmp_path / "g2", executor=executor, round=1))
    repair = scripted([("submit", {})])
    _session(sim_task, executor, tmp_path / "r", repair, phase="repair", strategy=strategy)
    for other in (later, repair):
        assert "Lesson prep" not in "\n".join(m.content for m in other.requests[0].messages)
    # without a preparation lesson the opening is exactly what it was
    plain = prompts.session_messages(initial_strategy(), PublicTask.of(sim_task), phase="generation",
                                     preparation=prompts.preparation_checkpoint(["a.py"], []))
    assert plain == prompts.session_messages(initial_strategy(), PublicTask.of(sim_task), phase="generation")


def scripted(calls) -> ScriptedModel:
    """Replays (tool, arguments) calls, one per reply; keeps every request it receives."""
    return ScriptedModel([tool_call(name, args) for name, args in calls], usage=Usage(10, 5))


def _session(task, executor, root, model, phase="generation", strategy=None):
    return run_agent_session(model, Budget(10**6, sink=MemoryLedger()), SessionConfig(
        task=task, strategy=strategy or initial_strategy(), workspace_root=root, executor=executor,
        phase=phase, library=load_library()))


def test_load_skill_gives_the_agent_a_skill_but_never_the_reviewer_only_one(sim_task, executor, tmp_path):
    library = load_library()
    model = scripted([("load_skill", {"name": "boundary-values"}), ("load_skill", {"name": "suite-review"}),
                      ("submit", {"summary": "done"})])
    result = _session(sim_task, executor, tmp_path / "g", model)
    assert result.submitted
    assert "load_skill" in [t.name for t in model.requests[0].tools]
    system = model.requests[0].messages[0].content
    assert prompts.INDEX_HEADER in system and prompts.LOAD_SKILL_NOTE in system
    assert "suite-review" not in system                      # reviewer-only: not even in the index
    observations = [m.content for m in model.requests[2].messages if m.role == "tool"]
    assert library["boundary-values"].body[:200] in observations[0]
    assert observations[1].startswith("error: load_skill: no skill 'suite-review'")
    assert library["suite-review"].body[:200] not in "\n".join(observations)
    # a repair session may load skills too
    repair = scripted([("load_skill", {"name": "minimal-repair"}), ("submit", {})])
    assert _session(sim_task, executor, tmp_path / "r", repair, phase="repair").submitted
    assert library["minimal-repair"].body[:200] in repair.requests[1].messages[-1].content


def test_a_loaded_skill_counts_against_the_context_like_any_observation(sim_task, executor, tmp_path):
    """With the smallest context, an old skill text is elided from what the model sees next."""
    tight = with_fields(contextTokens=8000, toolOutputChars=30000)
    calls = [("load_skill", {"name": n}) for n in ("boundary-values", "error-paths", "stateful-sequences",
                                                     "framework-contracts", "cli-behaviour")]
    model = scripted(calls + [("submit", {})])
    run_agent_session(model, Budget(10**6, sink=MemoryLedger()), SessionConfig(
        task=sim_task, strategy=tight, workspace_root=tmp_path / "w", executor=executor, library=load_library(),
        max_output_tokens=4096))
    last = model.requests[-1].messages
    tool_msgs = [m for m in last if m.role == "tool"]
    assert any(m.content.startswith(ELIDED) for m in tool_msgs) or "were dropped" in "\n".join(
        m.content for m in last if m.role == "user")


def test_no_library_or_a_route_no_load_skill_tool(sim_task, executor, tmp_path):
    model = scripted([("load_skill", {"name": "boundary-values"}), ("submit", {})])
    run_agent_session(model, Budget(10**6, sink=MemoryLedger()), SessionConfig(
        task=sim_task, strategy=initial_strategy(), workspace_root=tmp_path / "w", executor=executor))
    assert "load_skill" not in [t.name for t in model.requests[0].tools]
    assert model.requests[1].messages[-1].content.startswith("error: unknown tool 'load_skill'")
    # a learned route for the task's context preloads its skills instead
    routed = with_fields(skillRoutes={sim_task.context: ["boundary-values"]})
    model = scripted([("submit", {})])
    _session(sim_task, executor, tmp_path / "routed", model, strategy=routed)
    assert "load_skill" not in [t.name for t in model.requests[0].tools]
    assert "### boundary-values" in model.requests[0].messages[0].content


def test_parse_json_object_takes_the_first_object_of_prose_with_two():
    text = 'I propose {"kind": "field", "field": "agentSteps", "value": 16} and not {"kind": "lesson"}.'
    assert parse_json_object(text) == {"kind": "field", "field": "agentSteps", "value": 16}
    assert parse_json_object('```json\n{"verdict": "approve", "reasons": ["a } b"]}\n``` trailing }') == {
        "verdict": "approve", "reasons": ["a } b"]}
    assert parse_json_object("no object here") is None
    assert parse_json_object('{"broken": ') is None
    assert parse_json_object("") is None and parse_json_object(None) is None  # type: ignore[arg-type]
