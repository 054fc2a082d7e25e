"""Deterministic fakes for the search's extension points (no models, no execution)."""

from __future__ import annotations

import hashlib

from autosaddler.edits import LessonEdit, parse_edit
from autosaddler.protocols import Diagnosis
from autosaddler.traces import PublicTrace, TaskEval
from testhelix.helix.results import Usage


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
            out[t] = TaskEval(success=int(h < skill), trace=fake_trace(int(h < skill), strategy.agentSteps),
                              usage=Usage(tokens=110, calls=1))
        return out


def fake_trace(success: int, steps: int) -> PublicTrace:
    """A public trace for a fake evaluation (the fields a TestHelix evaluation fills in)."""
    return PublicTrace(context="kata", success=success, exit="done", steps=steps, elided=0,
                       failed_initial=bool(success), passed_repair=bool(success), review="approve",
                       submission="only-qualified" if success else "none", instruction_excerpt="")


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
        assert all(t.task.startswith("task ") for t in traces)  # a position, never the task's id
        edit = parse_edit(self.script[len(history) % len(self.script)])
        if isinstance(edit, LessonEdit):
            return Diagnosis("needs a lesson", edit, True)
        return Diagnosis("adjust", edit, False)

    def reflect(self, parent, traces, diagnosis):
        self.calls += 1
        return diagnosis.edit

    def usage(self):
        return {"calls": self.calls}
