"""Node lines say the edit in words, never raw JSON."""

from autosaddler.edits import in_words, parse_edit


def test_field_edit_names_old_and_new_value():
    assert in_words(parse_edit({"kind": "field", "field": "agentSteps", "value": 16}), {"agentSteps": 12}) \
        == "agentSteps 12 → 16"
    assert in_words(parse_edit({"kind": "field", "field": "agentSteps", "value": 16})) == "agentSteps → 16"


def test_lesson_edits_read_as_sentences():
    lesson = {"id": "l4", "triggers": ["chunk"], "text": "Test the exact text output of every branch, including "
              "the empty input and the boundary between two chunks of equal size, before anything else."}
    added = in_words(parse_edit({"kind": "lesson", "op": "add", "lesson": lesson}))
    assert added.startswith("lesson added: Test the exact text output") and added.endswith("…")
    assert len(added) <= 80 and "{" not in added
    assert in_words(parse_edit({"kind": "lesson", "op": "remove", "lesson_id": "l2"})) == "lesson l2 removed"
    replaced = in_words(parse_edit({"kind": "lesson", "lesson": lesson, "replace": "l1"}))
    assert replaced.startswith("lesson l1 replaced: Test the exact")


def test_an_answer_that_is_no_edit_says_why():
    words = in_words(parse_edit("I think we should do better"))
    assert words.startswith("not an edit: unparsed proposal") and "{" not in words


def test_structured_values_read_as_words():
    edit = parse_edit({"kind": "field", "field": "skillRoutes", "value": {"general": ["boundaries", "errors"]}})
    assert in_words(edit, {"skillRoutes": {}}) == "skillRoutes none → general: boundaries, errors"


def test_an_empty_old_value_is_named_not_left_blank():
    edit = parse_edit({"kind": "field", "field": "guidance", "value": "Reproduce the report."})
    assert in_words(edit, {"guidance": ""}) == "guidance none → Reproduce the report."
