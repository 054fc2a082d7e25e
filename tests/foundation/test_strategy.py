import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from testhelix.core.digest import canonical_json
from testhelix.core.paths import strategies_dir
from testhelix.strategy.model import (
    FIXED_FIELDS,
    MUTABLE_FIELDS,
    Strategy,
    initial_strategy,
    schema_json,
    validate_strategy_data,
)

BOUNDS = {
    "initialCandidates": (1, 5), "maxCandidates": (1, 5), "rounds": (1, 4), "agentSteps": (4, 30),
    "repairSteps": (1, 12), "contextTokens": (8000, 64000), "toolOutputChars": (2000, 30000),
    "reviewOutputTokens": (512, 8192),
}


def lesson(**kw):
    base = {"id": "l1", "triggers": ["parser"], "text": "Check the boundary inputs the report names."}
    return {**base, **kw}


def errors(data, **kw):
    strategy, problems = validate_strategy_data(data, known_task_ids=kw.get("ids", ()))
    return strategy, dict(problems)


def test_initial_strategy_matches_the_seed():
    s = initial_strategy()
    assert (s.initialCandidates, s.maxCandidates, s.rounds, s.agentSteps, s.repairSteps) == (3, 3, 2, 12, 5)
    assert (s.contextTokens, s.toolOutputChars, s.reviewOutputTokens) == (18000, 10000, 2048)
    assert s.guidance == "" and s.lessons == () and s.skillRoutes == {}


def test_nine_mutable_fields_and_candidate_counts_fixed():
    assert len(MUTABLE_FIELDS) == 9
    assert set(FIXED_FIELDS) == {"initialCandidates", "maxCandidates", "schemaVersion"}


@pytest.mark.parametrize("field", sorted(BOUNDS))
def test_every_scalar_bound(field):
    lo, hi = BOUNDS[field]
    extra = {"maxCandidates": 5} if field == "initialCandidates" else {}
    if field == "maxCandidates":
        extra = {"initialCandidates": 1}
    assert errors({field: lo, **extra})[0] is not None
    assert errors({field: hi, **extra})[0] is not None
    assert field in errors({field: lo - 1, **extra})[1]
    assert field in errors({field: hi + 1, **extra})[1]


def test_max_candidates_not_below_initial():
    s, probs = errors({"initialCandidates": 4, "maxCandidates": 3})
    assert s is None and "maxCandidates" in probs


def test_guidance_length_and_prose_rules():
    assert errors({"guidance": "x" * 2000})[0] is not None
    assert "guidance" in errors({"guidance": "x" * 2001})[1]
    assert errors({"guidance": "Use:\n```\nassert f(1) == 2\n```"})[1]["guidance"] == "contains a code block"
    assert errors({"guidance": "Prefer this:\n\n    assert f(1) == 2\n"})[1]["guidance"] == "contains a code block"
    assert "task identifier" in errors({"guidance": "as in task my-task", }, ids=["my-task"])[1]["guidance"]
    assert "task identifier" in errors({"guidance": "recall katas-lru_cache-m03"})[1]["guidance"]
    assert "task identifier" in errors({"guidance": "see django__django-11099"})[1]["guidance"]


def test_lesson_rules():
    assert errors({"lessons": [lesson()]})[0] is not None
    assert "lessons[0].triggers" in errors({"lessons": [lesson(triggers=[])]})[1]
    assert "lessons[0].triggers" in errors({"lessons": [lesson(triggers=[f"t{i}" for i in range(9)])]})[1]
    assert "lessons[0].text" in errors({"lessons": [lesson(text="x" * 1001)]})[1]
    assert "lessons[0].text" in errors({"lessons": [lesson(text="~~~\ncode\n~~~")]})[1]
    assert "lessons[0].components[0]" in errors({"lessons": [lesson(components=["deploy"])]})[1]
    assert "lessons[0].id" in errors({"lessons": [lesson(id="has space")]})[1]
    many = [lesson(id=f"l{i}") for i in range(17)]
    assert "lessons" in errors({"lessons": many})[1]
    assert "lessons" in errors({"lessons": [lesson(), lesson()]})[1]


def test_unknown_and_extra_fields_rejected():
    assert "extra" in errors({"extra": 1})[1]
    assert validate_strategy_data([1, 2])[1] == [("$", "a strategy is a JSON object")]


def test_skill_routes_rules():
    from testhelix.strategy.skills import load_library

    lib = load_library()
    generation = sorted(n for n, s in lib.items() if not s.reviewer_only)
    reviewer = sorted(n for n, s in lib.items() if s.reviewer_only)
    assert validate_strategy_data({"skillRoutes": {"cli": generation[:4]}})[0] is not None
    assert "skillRoutes.cli" in dict(validate_strategy_data({"skillRoutes": {"cli": generation[:5]}})[1])
    assert "skillRoutes.cli" in dict(validate_strategy_data({"skillRoutes": {"cli": ["no-such-skill"]}})[1])
    msg = dict(validate_strategy_data({"skillRoutes": {"cli": reviewer[:1]}})[1])["skillRoutes.cli"]
    assert "reviewer-only" in msg
    assert "skillRoutes.gui (key)" in dict(validate_strategy_data({"skillRoutes": {"gui": []}})[1])


def test_hash_ignores_key_order_and_whitespace():
    a = Strategy.model_validate(json.loads('{"rounds": 3, "agentSteps": 10}'))
    b = Strategy.model_validate(json.loads('{ "agentSteps" : 10,\n "rounds":3 }'))
    assert a.content_hash() == b.content_hash()
    assert a.content_hash() != Strategy().content_hash()


@given(st.dictionaries(st.sampled_from(["b", "a", "c"]), st.integers()))
def test_canonical_json_is_order_free(d):
    assert canonical_json(d) == canonical_json(dict(reversed(list(d.items()))))


def test_schema_file_is_fresh():
    assert (strategies_dir() / "schema.json").read_text() == schema_json(), \
        "strategies/schema.json is stale: run `testhelix strategy schema --out strategies/schema.json`"


def test_schema_marks_mutability():
    props = json.loads(schema_json())["properties"]
    assert props["initialCandidates"]["x-mutable"] is False
    assert props["guidance"]["x-mutable"] is True
