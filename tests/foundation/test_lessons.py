import pytest

from testhelix.strategy.lessons import render_lesson, render_lessons, retrieve_lessons
from testhelix.strategy.model import Lesson, Strategy


def mk(lesson_id, triggers, text="Write one test per boundary named in the report.", components=()):
    return Lesson(id=lesson_id, triggers=tuple(triggers), text=text, components=tuple(components))


def strat(*lessons):
    return Strategy(lessons=tuple(lessons))


def test_trigger_must_match_public_text_or_checkpoint():
    s = strat(mk("a", ["capacity"]), mk("b", ["timezone"]))
    assert [lesson.id for lesson in retrieve_lessons(s, "The cache capacity is wrong", "generation")] == ["a"]
    assert [lesson.id for lesson in retrieve_lessons(s, "nothing", "generation", checkpoint="timezone mismatch")] == ["b"]
    assert retrieve_lessons(s, "unrelated", "generation") == []


def test_component_tags_restrict_phase():
    s = strat(mk("a", ["cache"], components=["repair"]))
    assert retrieve_lessons(s, "cache", "generation") == []
    assert [lesson.id for lesson in retrieve_lessons(s, "cache", "repair")] == ["a"]


def test_at_most_two_more_hits_first_then_order():
    s = strat(mk("a", ["x"]), mk("b", ["x", "y"]), mk("c", ["x"]))
    assert [lesson.id for lesson in retrieve_lessons(s, "x y", "generation")] == ["b", "a"]


@pytest.mark.parametrize("phase,budget", [("generation", 1600), ("planning", 1200)])
def test_character_budgets(phase, budget):
    long_text = "Check each boundary value and the error path carefully. " * 16  # ~900 chars
    s = strat(mk("a", ["k"], long_text[:990]), mk("b", ["k"], long_text[:990]), mk("c", ["k"], "short advice"))
    chosen = retrieve_lessons(s, "k", phase)
    assert sum(len(render_lesson(lesson)) for lesson in chosen) <= budget
    assert len(chosen) == 2 and chosen[0].id == "a" and chosen[1].id == "c"


_RETRIEVE = """
import json, sys
from testhelix.strategy.lessons import retrieve_lessons
from testhelix.strategy.model import Lesson, Strategy
lessons = [Lesson(id=f"l{i}", triggers=tuple(t), text="Check the boundary the report names.")
           for i, t in enumerate([["t"], ["t"], ["t"], ["u"], ["t"], ["t", "u"], ["t"], ["t"]])]
print(json.dumps([lesson.id for lesson in retrieve_lessons(Strategy(lessons=tuple(lessons)), "t u", "review")]))
"""


def test_deterministic():
    """The same choice in separate processes with different hash seeds (no set or dict order
    leaks into it), and the documented order: more matched triggers first, then strategy order."""
    import json
    import os
    import subprocess
    import sys

    outputs = {tuple(json.loads(subprocess.run([sys.executable, "-c", _RETRIEVE], check=True, capture_output=True,
                                               text=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout))
               for seed in ("0", "1", "12345")}
    assert outputs == {("l5", "l0")}          # two hits first, then the first of six tied lessons


def test_rendering_three_parts():
    plain = render_lesson(mk("a", ["cache"]))
    assert "Applies when:" in plain and "Do:" in plain and "Verify:" in plain
    labelled = render_lesson(mk("b", ["x"], "Applicability: parsers\nAction: test empty input\nVerification: the "
                                            "initial program raises"))
    assert "Applies when: parsers" in labelled and "Do: test empty input" in labelled
    assert render_lessons([], "generation") == ""


def test_unknown_phase():
    with pytest.raises(ValueError):
        retrieve_lessons(Strategy(), "x", "deploy")


def test_component_tags_are_the_phases_that_retrieve_lessons_and_others_are_refused(tmp_path):
    import json

    from click.testing import CliRunner
    from pydantic import ValidationError

    from testhelix.commands.cli import cli
    from testhelix.core.agent_roles import COMPONENTS

    # every phase that asks for lessons (testhelix/agent/prompts.py) is a tag, and nothing else is
    assert set(COMPONENTS) == {"planning", "preparation", "generation", "repair", "review"}
    for phase in COMPONENTS:
        s = strat(mk("a", ["cache"], components=[phase]))
        assert [lesson.id for lesson in retrieve_lessons(s, "cache", phase)] == ["a"]
    with pytest.raises(ValidationError, match="'setup' is not a pipeline phase"):
        mk("a", ["cache"], components=["setup"])
    with pytest.raises(ValueError, match="phase must be one of"):
        retrieve_lessons(strat(), "x", "setup")
    # a strategy file with such a tag: a clear error, exit 2
    from testhelix.strategy.model import Strategy as S
    doc = json.loads(S().model_dump_json())
    doc["lessons"] = [{"id": "a", "triggers": ["cache"], "text": "Check the cache bound.",
                       "components": ["setup"]}]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(cli, ["strategy", "validate", str(path)])
    assert result.exit_code == 2 and "setup" in result.output and "Traceback" not in result.output
    # a preparation lesson validates
    doc["lessons"][0]["components"] = ["preparation"]
    path.write_text(json.dumps(doc))
    result = CliRunner().invoke(cli, ["strategy", "validate", str(path)])
    assert result.exit_code == 0, result.output


def test_preparation_retrieves_only_lessons_tagged_with_it_within_the_agent_turn_limits():
    """An untagged lesson keeps its former phases (no strategy without a preparation tag reads
    differently); a preparation lesson obeys the turn's two-lesson, 1,600-character limits."""
    assert retrieve_lessons(strat(mk("a", ["cache"])), "cache", "preparation") == []
    long_text = "Read the program files the task names before writing a test. " * 15
    s = strat(mk("a", ["cache"], long_text[:990], ["preparation"]), mk("b", ["cache"], long_text[:990], ["preparation"]),
              mk("c", ["cache"], "short", ["preparation"]), mk("d", ["cache"], "short", ["preparation"]))
    chosen = retrieve_lessons(s, "cache", "preparation")
    assert [lesson.id for lesson in chosen] == ["a", "c"]
    assert sum(len(render_lesson(lesson)) for lesson in chosen) <= 1600
