"""The optimizer's sessions are agent sessions: read-only tools over what the search handed them,
their own step limits, and every step on the session's own usage line."""

from __future__ import annotations

import json

from autosaddler.edits import FieldEdit
from autosaddler.optimizer import ModelOptimizer
from autosaddler.optimizer_session import SESSION_STEPS
from autosaddler.protocols import ParentView
from autosaddler.traces import OptimizerTrace, PublicTrace
from testhelix.agent.budget import Budget, MemoryLedger
from testhelix.llm.base import Usage
from testhelix.llm.testing import FunctionModel, tool_call

EDIT = '{"kind": "field", "field": "agentSteps", "value": 16, "rationale": "traces ran out of steps"}'
TRACES = [OptimizerTrace("task 1", 0, PublicTrace(
              context="cli", success=0, exit="step_limit", steps=12, elided=0, failed_initial=False,
              passed_repair=False, review="approve", submission="none", instruction_excerpt="Parse flags.")),
          OptimizerTrace("task 2", 1, PublicTrace(
              context="algorithm", success=1, exit="submitted", steps=5, elided=0, failed_initial=True,
              passed_repair=True, review="approve", submission="only-qualified", instruction_excerpt="Sort."))]


def tool_reader(seen: list[str]):
    """Reads the trace list, trace 1, a trace that does not exist and the strategy, then answers."""
    plan = [tool_call("list_traces"), tool_call("read_trace", {"index": 1}), tool_call("read_trace", {"index": 9}),
            tool_call("read_strategy")]

    def answer(request):
        seen[:] = [m.content for m in request.messages if m.role == "tool"]  # the whole session so far
        if request.tags.role == "selection":
            return '{"parent": "n001"}'
        step = request.tags.step or 1
        return plan[step - 1] if step <= len(plan) else EDIT

    return FunctionModel(answer, usage=Usage(input_tokens=50, output_tokens=10, cost_usd=None))


def test_diagnosis_reads_traces_and_the_strategy_through_tools_then_answers():
    seen: list[str] = []
    optimizer = ModelOptimizer(tool_reader(seen), Budget(10**6, sink=MemoryLedger()))
    diagnosis = optimizer.diagnose(optimizer_strategy(), TRACES, ["n001: agentSteps 14 -> rejected"])
    assert isinstance(diagnosis.edit, FieldEdit)
    assert diagnosis.edit.field == "agentSteps" and diagnosis.edit.value == 16
    assert seen[0].splitlines() == ["0: context=cli success=False", "1: context=algorithm success=True"]
    assert json.loads(seen[1]) == {"task": "task 2", "success": 1, "context": "algorithm", "exit": "submitted",
                                   "steps": 5, "elided": 0, "failed_initial": True, "passed_repair": True,
                                   "review": "approve", "submission": "only-qualified", "instruction_excerpt": "Sort."}
    assert seen[2].startswith("error: index must be an integer from 0 to 1")
    assert json.loads(seen[3])["agentSteps"] == optimizer_strategy().agentSteps
    usage = optimizer.usage()
    assert usage["diagnosis"]["calls"] == 5 and usage["diagnosis"]["tool_calls"] == 4
    assert usage["diagnosis"]["tokens"] == 5 * 60 and usage["diagnosis"]["failures"] == 0
    assert usage["selection"]["calls"] == 0 and usage["reflection"]["calls"] == 0  # separate accounting


def test_a_session_that_never_answers_stops_at_its_own_step_limit():
    def forever(request):
        return tool_call("read_strategy") if request.tags.role != "selection" else tool_call("list_candidates")

    optimizer = ModelOptimizer(FunctionModel(forever), Budget(10**6, sink=MemoryLedger()))
    views = [ParentView("n000", 0.5, 0, "initial", None), ParentView("n001", 0.4, 1, "x", 3)]
    assert optimizer.select_parent(views) == ""  # no answer: the search falls back to the best score
    optimizer.diagnose(optimizer_strategy(), TRACES, [])
    usage = optimizer.usage()
    for session in ("selection", "diagnosis"):
        assert usage[session]["calls"] == SESSION_STEPS[session]
        assert usage[session]["step_limits"] == 1 and usage[session]["failures"] == 1
    assert SESSION_STEPS["selection"] < SESSION_STEPS["diagnosis"]  # each session has its own limit


def optimizer_strategy():
    from testhelix.strategy.model import Strategy

    return Strategy()
