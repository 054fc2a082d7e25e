"""The reflection prompt's rules for lesson text: nothing task-specific, no solutions or hidden patches."""

from autosaddler.prompts import DRAFT_LESSON, EXISTING_LESSONS, REFLECTION_SYSTEM, heading, reflection_messages


def test_reflection_forbids_copying_solutions_and_keeps_its_sections():
    assert "Never copy a solution, a reference repair or a hidden patch into a lesson" in " ".join(REFLECTION_SYSTEM.split())
    assert "preparation" in REFLECTION_SYSTEM
    body = reflection_messages("diagnosis", [], ["a"], {"id": "x"})[1].content
    assert heading(EXISTING_LESSONS) in body and heading(DRAFT_LESSON) in body
