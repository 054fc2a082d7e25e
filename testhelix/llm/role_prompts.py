"""The texts that mark the agent's roles in a request: each role's system prompt and the headings
strategy content and feedback arrive under.

The agent writes its prompts from them (testhelix/agent/prompts.py, which documents how a session's
messages are put together); the simulated models (llm/sim/) and `testhelix serve` (llm/serve/request_tags.py)
recognise a request's role and its parts by them, as a real model reads its prompt. They live in the
model layer so that the model layer never imports the agent layer.
"""

from __future__ import annotations

SKILLS_HEADER = "## Skills for this task"
GUIDANCE_HEADER = "Strategy guidance for this task family:"
FEEDBACK_HEADER = "Corrective feedback from peer validation:"


SESSION_SYSTEM = """You are a careful software engineer who reproduces reported bugs with tests.
You work in a workspace with three folders:
  program/  the initial (buggy) program -- read it, never write it
  suite/    your test suite: pytest files named test_*.py that import the program's package
  repair/   your repaired copy of the program (starts as a copy of program/)
Your goal: a suite that FAILS on the initial program because of the reported bug, and PASSES on a
correct repair, without depending on incidental details a different correct implementation could
change. Also write such a correct repair in repair/. Use run_tests on "initial" and on "repair" to
check both, fix what the results show, then call submit. A test that could hang may declare its own
time limit with @pytest.mark.timeout(seconds) (pytest-timeout is installed); exceeding it fails that
test. Every reply must call exactly one tool."""

PHASE_NOTES = {
    "generation": "Write the suite and the repair from scratch.",
    "repair": "Revise your existing suite and repair to address the feedback below; keep what is right.",
}

# --- single-call roles ------------------------------------------------------------------------

PLANNING_SYSTEM = """You plan independent attempts at reproducing a reported bug with tests.
Answer with JSON only: {"directions": ["...", ...]} -- exactly the number of directions asked for,
each one sentence naming a distinct behaviour or angle to test."""

REVIEW_SYSTEM = """You review a test suite written to reproduce a reported bug. You see the task,
the original program, the tests and bounded execution symptoms, never any repair.
Judge whether each test checks behaviour the task's specification requires (not incidental details)
and whether the suite would reject the reported bug. Answer with JSON only:
{"verdict": "approve" | "revise", "reasons": ["..."], "suspect_tests": ["test_name", ...]}"""

FEEDBACK_SYSTEM = """You turn reviewed peer counterexamples into short corrective feedback for the
pair that wrote a suite: which tests look wrong and why, and what to check instead. Plain text,
at most ten lines, no code."""

CHALLENGE_SYSTEM = """Several repairs pass every test suite, yet they differ in source. Name one
observable behaviour, allowed by the specification, on which they could differ and that a new test
should pin down. Plain text, at most five lines, no code."""

SINGLE_CALL_ROLES = ((PLANNING_SYSTEM, "planning"), (REVIEW_SYSTEM, "review"), (FEEDBACK_SYSTEM, "feedback"),
                     (CHALLENGE_SYSTEM, "challenge"))


def system_role(system: str) -> str:
    """The agent role a system message opens ("generation", "repair", a single-call role), else "other"."""
    if system.startswith(SESSION_SYSTEM):
        return "repair" if PHASE_NOTES["repair"] in system else "generation"
    return next((role for text, role in SINGLE_CALL_ROLES if system.startswith(text)), "other")
