"""Deterministic fakes for the search's extension points (no models, no execution)."""

from __future__ import annotations

import hashlib

from autosaddler.edits import LessonEdit, parse_edit
from autosaddler.protocols import Diagnosis, TaskEval


class CountingEvaluator:
    """Success depends on the strategy: more agentSteps and each lesson solve more tasks."""

    def __init__(self, crash_after: int | None = None):
        self.calls = 0
        self.crash_after = crash_after

    def evaluate(self, strategy, task_ids):
        out = {}
        for t in task_ids:
            self.calls += 1
            if self.crash_after is not None and self.calls > self.crash_after:
                raise KeyboardInterrupt("simulated crash")
            h = int(hashlib.sha256(t.encode()).hexdigest(), 16) % 100
            skill = strategy.agentSteps * 2 + 10 * len(strategy.lessons) + (5 if strategy.guidance else 0)
            out[t] = TaskEval(success=int(h < skill), trace={"task_id": t, "note": f"steps {strategy.agentSteps}"},
                              usage={"input_tokens": 100, "output_tokens": 10})
        return out


class ScriptedOptimizer:
    """Cycles through a fixed script of proposals; picks the best parent."""

    def __init__(self, script):
        self.script = script
        self.i = 0
        self.calls = 0

    def select_parent(self, candidates):
        self.calls += 1
        return max(candidates, key=lambda c: (c.dev_score, -c.depth)).node_id

    def diagnose(self, parent, traces, history):
        self.calls += 1
        assert all("task_id" not in t for t in traces)
        edit = parse_edit(self.script[len(history) % len(self.script)])
        if isinstance(edit, LessonEdit):
            return Diagnosis("needs a lesson", edit, True)
        return Diagnosis("adjust", edit, False)

    def reflect(self, parent, traces, diagnosis):
        self.calls += 1
        return diagnosis.edit

    def usage(self):
        return {"calls": self.calls}
