"""Strategy content in prompts, the single-call roles, and how the simulated models react to both."""

from __future__ import annotations

from testhelix.agent import prompts
from testhelix.agent.budget import Budget, MemoryLedger
from testhelix.agent.calls import corrective_feedback, differential_challenge, plan_directions, review_suite
from testhelix.agent.prompts import PublicTask, session_messages
from testhelix.llm.base import Usage
from testhelix.llm.registry import create_model, model_ref
from testhelix.llm.role_prompts import GUIDANCE_HEADER
from testhelix.llm.sim.cues import read_cues
from testhelix.llm.testing import ScriptedModel
from testhelix.strategy.model import Strategy, initial_strategy
from testhelix.strategy.skills import Skill

LIBRARY = {
    "reproduce-first": Skill("reproduce-first", "start from the report", ("algorithm", "general"), ("generation",),
                             False, "Reproduce the reported call first."),
    "ui-snapshots": Skill("ui-snapshots", "visual checks", ("visual",), ("generation",), False, "Compare images."),
    "review-panel": Skill("review-panel", "reviewer checklist", ("general",), ("review",), True, "Judge tests."),
}
USEFUL = {"id": "report-first", "triggers": ["expected"],
          "text": "Applicability: a report states an expected value.\nAction: reproduce the exact scenario of the bug "
                  "report and assert the expected value.\nVerification: the suite fails on the initial program."}
HARMFUL = {"id": "messages", "triggers": ["expected"],
           "text": "Applicability: errors.\nAction: assert the exact message text of every error.\nVerification: done."}


def strategy(**fields) -> Strategy:
    data = initial_strategy().model_dump(mode="json") | fields
    return Strategy.model_validate(data, context={"skills": LIBRARY})


def test_guidance_lessons_and_skills_enter_the_prompt_as_designed(sim_task):
    public = PublicTask.of(sim_task)
    plain = session_messages(initial_strategy(), public, phase="generation", library=LIBRARY)
    assert [m.role for m in plain] == ["system", "user"]                       # no empty guidance/lessons
    assert prompts.INDEX_HEADER in plain[0].content and "review-panel" not in plain[0].content
    rich = session_messages(strategy(guidance="Reproduce the bug report first.", lessons=[USEFUL],
                                     skillRoutes={"algorithm": ["reproduce-first"]}),
                            public, phase="generation", library=LIBRARY)
    assert [m.role for m in rich] == ["system", "user", "user", "user"]
    assert rich[2].content.startswith(GUIDANCE_HEADER)
    assert "Lesson report-first" in rich[3].content
    assert "### reproduce-first (contexts: algorithm, general)" in rich[0].content
    assert sim_task.instruction.strip() in rich[1].content
    # a lesson restricted to another phase is not retrieved
    other = dict(USEFUL, components=["review"])
    assert len(session_messages(strategy(lessons=[other]), public, phase="generation")) == 2


def test_strategy_text_reaches_the_simulation_only_as_documented_cues(sim_task):
    public = PublicTask.of(sim_task)

    def cues(**fields):
        msgs = tuple(session_messages(strategy(**fields), public, phase="generation", library=LIBRARY))
        return read_cues(msgs, sim_task.context)

    assert cues().counts == ()
    assert cues(lessons=[USEFUL])["reproduce"] == 1 and cues(lessons=[USEFUL]).pick_boost > 0
    assert cues(lessons=[HARMFUL])["messages"] == 1 and cues(lessons=[HARMFUL]).pick_boost == 0
    assert cues(skillRoutes={"algorithm": ["reproduce-first"]})["reproduce"] == 1
    # a skill routed to a context it does not list is noise: it carries no cue
    assert cues(skillRoutes={"visual": ["ui-snapshots"]}).counts == ()
    assert cues(guidance="Keep the suite minimal.").extra_guards == -1
    assert cues(guidance="Add a regression test next to the fix.").extra_guards == 1


def test_single_call_roles_with_a_simulated_model(sim_task):
    ledger = MemoryLedger()
    budget = Budget(100000, task_id=sim_task.id, sink=ledger)
    model = create_model(model_ref("sim:strong"), task=sim_task, seed=2)
    plan = plan_directions(model, budget, sim_task, initial_strategy(), 3)
    assert plan.parsed and len(set(plan.directions)) == 3
    suite = {"test_reproduction.py": "def test_clamp_wrong_expectation():\n    assert clamp(5, 0, 3) == 5\n\n"
                                     "def test_keeps_last_partial_chunk():\n    assert True\n"}
    verdicts = [review_suite(create_model(model_ref("sim:strong"), task=sim_task, seed=s), budget, sim_task, initial_strategy(),
                             "source", suite, "fails on initial") for s in range(8)]
    assert all(v.parsed for v in verdicts)
    flagged = sum("test_clamp_wrong_expectation" in v.suspect_tests for v in verdicts)
    assert flagged >= 5 and all(v.verdict == "revise" for v in verdicts if v.suspect_tests)
    text = corrective_feedback(model, budget, sim_task, [{"test": "test_clamp_wrong_expectation", "peer": 1}])
    assert "test_clamp_wrong_expectation" in text
    assert differential_challenge(model, budget, sim_task, "suite A and B pass on repairs 1 and 2")
    assert [r["role"] for r in ledger.rows] == ["planning"] + ["review"] * 8 + ["feedback", "challenge"]
    assert all(r["simulated"] and r["cost_usd"] is None for r in ledger.rows)


def test_unparsed_replies_are_charged_and_marked(sim_task):
    chatty = ScriptedModel(["I think it is fine."] * 2, context_window=10000, usage=Usage(50, 7))
    budget = Budget(10000)
    review = review_suite(chatty, budget, sim_task, initial_strategy(), "src", {"t.py": ""}, "")
    plan = plan_directions(chatty, budget, sim_task, initial_strategy(), 2)
    assert review.verdict == "unparsed" and not plan.parsed and len(plan.directions) == 2
    assert budget.used == 114
