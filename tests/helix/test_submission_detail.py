"""The submission detail is typed, and task_results.detail is written and read as it always was."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from testhelix.helix.detail import BudgetUse, HelixEvent, PairSummary, SubmissionDetail, stored_rule


def detail() -> SubmissionDetail:
    pair = PairSummary(pair=0, direction="the exact scenario", sessions=["submitted"], qualified=True,
                       initial=["fail"], repair=["pass"], approved=None, suspect_tests=[])
    return SubmissionDetail(submission="only-qualified", pair=0, support=0, pairs=[pair],
                            events=[HelixEvent.model_validate({"step": "qualify", "pair": 0, "initial": ("fail",)})],
                            budget=BudgetUse(cap=1000, used=120, refused=0), elided=2, simulated=True)


def test_the_column_keeps_its_keys_their_order_and_an_events_own_fields():
    column = detail().stored_json()
    assert column == json.dumps({
        "submission": "only-qualified", "pair": 0, "support": 0,
        "pairs": [{"pair": 0, "direction": "the exact scenario", "sessions": ["submitted"], "qualified": True,
                   "initial": ["fail"], "repair": ["pass"], "approved": None, "suspect_tests": []}],
        "events": [{"step": "qualify", "pair": 0, "initial": ["fail"]}],
        "budget": {"cap": 1000, "used": 120, "refused": 0}, "elided": 2, "simulated": True})
    assert SubmissionDetail.model_validate_json(column) == detail().model_copy(
        update={"events": [HelixEvent.model_validate({"step": "qualify", "pair": 0, "initial": ["fail"]})]})


def test_a_pair_summary_with_an_unknown_field_is_refused():
    with pytest.raises(ValidationError, match="task_id\n  Extra inputs are not permitted"):
        PairSummary.model_validate({"pair": 0, "direction": "d", "sessions": [], "qualified": False, "initial": [],
                                    "repair": [], "approved": None, "suspect_tests": [], "task_id": "t1"})


@pytest.mark.parametrize(("column", "rule"), [
    ('{"submission": "merged", "pairs": []}', "merged"),        # text, extra fields of any age ignored
    ({"submission": "fallback"}, "fallback"),                   # already decoded by the database
    ('{"pairs": []}', None), (None, None), ("not json", None), ("[1, 2]", None), ('{"submission": 3}', None),
])
def test_the_reports_read_the_rule_from_any_stored_detail(column: object, rule: str | None):
    assert stored_rule(column) == rule
