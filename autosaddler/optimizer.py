"""The optimizer's three sessions over any chat model: parent selection, diagnosis and revision,
and reflection that writes a reusable lesson.

Each session has its own prompt, its own time limit (the model's request timeout) and its own usage
line; all of them draw on the optimizer's budget, which is separate from the generator's per-task
cap. Sessions are stateless: they see only what the search passes in (aggregate scores, anonymised
minibatch traces, the history of earlier proposals). The edit protocol is the one documented in
testhelix/llm/sim/optimizer.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from autosaddler.protocols import Diagnosis, ParentView
from testhelix.agent.budget import Budget, BudgetExhausted
from testhelix.agent.calls import parse_json_object
from testhelix.llm.base import CallTags, Message, ModelError, ModelRequest
from testhelix.llm.sim.optimizer import optimizer_messages
from testhelix.skills import library_index, load_library
from testhelix.strategy.model import Strategy

SELECTION_SYSTEM = """You choose which strategy to improve next in a search over test-generation
strategies. You see each candidate's development score (share of development tasks solved), its
depth (edits from the initial strategy), its last edit and its minibatch successes. Prefer high scores,
but a strong recent edit on a shallow node can be worth building on. Answer with JSON only:
{"parent": NODE_ID}"""

REFLECTION_SYSTEM = """You write one reusable lesson for a test-generation agent from a diagnosis of
failed attempts. The lesson must apply beyond these tasks: never name a task, never include code.
Give 1-8 literal triggers that occur in task text, and text of at most 1000 characters written as
'Applicability: ... Action: ... Verification: ...'. Answer with the lesson as one JSON object:
{"id", "triggers", "text", "components", "capabilities"}"""


class ModelOptimizer:
    def __init__(self, model, budget: Budget, history_limit: int = 12):
        self.model = model
        self.budget = budget
        self.history_limit = history_limit
        self._usage: dict[str, dict[str, int]] = {s: {"calls": 0, "tokens": 0, "failures": 0}
                                                  for s in ("selection", "diagnosis", "reflection")}
        self.skills_index = library_index(load_library())

    # --- session 1 ---------------------------------------------------------------------------
    def select_parent(self, candidates: Sequence[ParentView]) -> str:
        if len(candidates) == 1:
            return candidates[0].node_id
        rows = [{"node": c.node_id, "dev_score": c.dev_score, "depth": c.depth, "edit": c.edit,
                 "minibatch_successes": c.minibatch_successes} for c in candidates]
        text = self._call("selection", [Message("system", SELECTION_SYSTEM),
                                        Message("user", f"## Candidates\n{json.dumps(rows, indent=1)}")], 256)
        data = parse_json_object(text or "") or {}
        return str(data.get("parent", ""))

    # --- session 2 ---------------------------------------------------------------------------
    def diagnose(self, parent: Strategy, traces: Sequence[dict], history: Sequence[str]) -> Diagnosis:
        messages = optimizer_messages(parent.canonical_json(), list(traces), self.skills_index)
        if history:
            recent = "\n".join(f"- {h}" for h in history[-self.history_limit:])
            messages.append(Message("user", f"## Earlier proposals (oldest first)\n{recent}\n\nPropose a different "
                                            "edit from any that was rejected or screened out."))
        text = self._call("diagnosis", messages, 2048, role="optimizer") or ""
        data = parse_json_object(text)
        if data is None:
            return Diagnosis(text=text[:500], edit={"unparsed": text[:500]}, wants_lesson=False)
        edit = _to_edit(data)
        return Diagnosis(text=str(data.get("rationale", ""))[:500], edit=edit, wants_lesson=edit.get("kind") == "lesson")

    # --- session 3 ---------------------------------------------------------------------------
    def reflect(self, parent: Strategy, traces: Sequence[dict], diagnosis: Diagnosis) -> dict:
        draft = (diagnosis.edit or {}).get("lesson") or {}
        failures = [t for t in traces if not t.get("success")][:8]
        body = (f"## Diagnosis\n{diagnosis.text}\n\n## Failed attempts\n{json.dumps(failures, indent=1)}\n\n"
                f"## Existing lessons\n{json.dumps([l.id for l in parent.lessons])}\n\n"
                f"## Draft lesson\n{json.dumps(draft, sort_keys=True)}")
        text = self._call("reflection", [Message("system", REFLECTION_SYSTEM), Message("user", body)], 1024) or ""
        lesson = parse_json_object(text) or draft
        return {**diagnosis.edit, "lesson": lesson}

    def usage(self) -> dict:
        return {k: dict(v) for k, v in self._usage.items()}

    def restore_usage(self, usage: dict) -> None:
        """Continue the counters of a resumed search from its last recorded node, so the DAG equals
        an uninterrupted run's; the budget continues from the tokens those sessions used."""
        for session, line in self._usage.items():
            saved = usage.get(session) or {}
            for key in line:
                value = saved.get(key, 0)
                line[key] = int(value) if isinstance(value, (int, float)) and value >= 0 else 0
        self.budget.used = sum(line["tokens"] for line in self._usage.values())

    def _call(self, session: str, messages: list[Message], max_tokens: int, role: str | None = None) -> str | None:
        request = ModelRequest(tuple(messages), (), max_tokens, tags=CallTags(role=role or session))
        line = self._usage[session]
        try:
            answer = self.budget.complete(self.model, request)
        except (BudgetExhausted, ModelError):
            line["failures"] += 1
            return None
        line["calls"] += 1
        line["tokens"] += answer.usage.input_tokens + answer.usage.output_tokens
        return answer.text


def _to_edit(data: dict) -> dict:
    """The documented proposal format as an autosaddler Edit (kind field / lesson add-replace)."""
    if data.get("kind") == "lesson":
        replace = data.get("replace")
        return {"kind": "lesson", "op": "replace" if replace else "add", "lesson": data.get("lesson"),
                "lesson_id": replace or None, "rationale": str(data.get("rationale", ""))[:500]}
    return {k: data[k] for k in ("kind", "field", "value", "rationale") if k in data}
