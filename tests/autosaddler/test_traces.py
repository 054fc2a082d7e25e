"""The optimizer's traces are typed: stored in search_evals as they always were, validated when read
back, and printed to the optimizer key for key as before."""

from __future__ import annotations

import json

import pytest

from autosaddler.traces import OptimizerTrace, PublicTrace, TaskEval, eval_column, optimizer_traces, stored_eval
from testhelix.core.errors import UserError
from testhelix.helix.results import Usage

TRACE = PublicTrace(context="cli", success=0, exit="step_limit", steps=4, elided=1, failed_initial=True,
                    passed_repair=False, review="revise", submission="fallback", instruction_excerpt="Parse flags.")


def test_the_stored_column_keeps_its_shape_and_reads_back():
    ev = TaskEval(success=0, trace=TRACE, usage=Usage(tokens=900, calls=7))
    column = eval_column(ev)
    assert list(column) == ["context", "success", "exit", "steps", "elided", "failed_initial", "passed_repair",
                            "review", "submission", "instruction_excerpt", "usage"]
    assert column["usage"] == {"tokens": 900, "calls": 7}
    assert stored_eval(0, json.dumps(column), "row") == ev
    assert stored_eval(1, None, "row") == TaskEval(success=1)               # an evaluator that reports nothing
    assert stored_eval(1, {"usage": {}}, "row") == TaskEval(success=1)


def test_a_stored_trace_that_is_not_the_searchs_is_refused_with_its_field_named():
    with pytest.raises(UserError) as err:
        stored_eval(0, json.dumps({**eval_column(TaskEval(0, TRACE)), "task_id": "secret-7"}), "search_evals row")
    assert err.value.message == "search_evals row: the stored trace does not match its schema"
    assert [path for path, _ in err.value.problems] == ["task_id"]
    with pytest.raises(UserError, match="not JSON"):
        stored_eval(0, "{", "row")


def test_the_optimizer_sees_positions_and_the_trace_in_its_old_key_order():
    traces = optimizer_traces({"zeta": TaskEval(0, TRACE), "alpha": TaskEval(1, None)})
    assert traces == [OptimizerTrace("task 1", 1, None), OptimizerTrace("task 2", 0, TRACE)]
    assert list(traces[1].prompt_json()) == ["task", "success", "context", "exit", "steps", "elided",
                                             "failed_initial", "passed_repair", "review", "submission",
                                             "instruction_excerpt"]
    assert traces[0].prompt_json() == {"task": "task 1", "success": 1}
