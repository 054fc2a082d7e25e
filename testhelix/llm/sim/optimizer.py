"""The optimizer-role protocol (used by AutoSaddler with any model) and the simulated optimizer.

Protocol. The optimizer gets two messages built by `optimizer_messages(strategy_json, traces,
skills_index)`: a system message stating the rules, and a user message with three sections:

    ## Strategy        the parent strategy as canonical JSON
    ## Traces          a JSON list, one object per minibatch task:
                       {"context", "success", "exit", "steps", "elided", "failed_initial",
                        "passed_repair", "review", "instruction_excerpt"}
    ## Skills          the enabled skill library index (one line per skill), may be empty

It must answer with ONE JSON object, exactly one edit:

    {"kind": "field", "field": NAME, "value": VALUE, "rationale": TEXT}
        NAME is one mutable field: rounds (2-4 in a search), agentSteps, repairSteps, contextTokens,
        toolOutputChars, reviewOutputTokens, guidance, skillRoutes (VALUE = the whole new routes object)
    {"kind": "lesson", "lesson": {"id", "triggers", "text", "components", "capabilities"},
     "replace": LESSON_ID or null, "rationale": TEXT}
        adds a lesson, or replaces the lesson `replace`, keeping every other lesson unchanged

`parse_edit_proposal(text)` reads such an answer (first JSON object in the text) into an
`EditProposal`, or returns None; checking the edit against the strategy schema is AutoSaddler's job.

The simulated optimizer (`propose`) reads the traces and picks, deterministically for its seed and
the prompt, one of the edits the evidence supports: more agent steps when sessions hit the step
cap, a larger context when observations were elided, a lesson about reproducing the reported
scenario when suites did not fail on the initial program, a lesson against incidental assertions
when reviews asked for revisions, or a skill route for the most common context.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from dataclasses import dataclass
from typing import Any

from testhelix.llm.base import Message

OPTIMIZER_SYSTEM = """You improve a test-generation strategy from execution evidence. Propose exactly
one edit: change one mutable field, or add/replace one lesson. Lessons use literal triggers that
occur in task text and text written as 'Applicability: ... Action: ... Verification: ...'. Never name
a task, never include code blocks, never touch evaluator, tools, task inputs or inference caps.
Answer with one JSON object as documented."""

_INDEX_LINE = re.compile(r"^- ([\w-]+): .*\(contexts: ([^)]*)\)$", re.M)


@dataclass(frozen=True)
class EditProposal:
    kind: str                        # field | lesson
    field: str | None = None
    value: Any = None
    lesson: dict | None = None
    replace: str | None = None
    rationale: str = ""


def optimizer_messages(strategy_json: str, traces: list[dict], skills_index: str = "") -> list[Message]:
    body = (f"## Strategy\n{strategy_json}\n\n## Traces\n{json.dumps(traces, indent=1, sort_keys=True)}\n\n"
            f"## Skills\n{skills_index}")
    return [Message("system", OPTIMIZER_SYSTEM), Message("user", body)]


def parse_edit_proposal(text: str) -> EditProposal | None:
    from testhelix.agent.calls import parse_json_object
    data = parse_json_object(text)
    if not data:
        return None
    if data.get("kind") == "field" and isinstance(data.get("field"), str) and "value" in data:
        return EditProposal("field", field=data["field"], value=data["value"], rationale=str(data.get("rationale", "")))
    if data.get("kind") == "lesson" and isinstance(data.get("lesson"), dict):
        replace = data.get("replace")
        return EditProposal("lesson", lesson=data["lesson"], replace=replace if isinstance(replace, str) else None,
                            rationale=str(data.get("rationale", "")))
    return None


def _section(text: str, name: str) -> str:
    m = re.search(rf"^## {re.escape(name)}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1).strip() if m else ""


def _trigger(traces: list[dict]) -> str:
    words = Counter(w for t in traces for w in re.findall(r"[a-z]{5,}", str(t.get("instruction_excerpt", "")).lower()))
    for preferred in ("expected", "returned", "instead", "should", "raises"):
        if words.get(preferred):
            return preferred
    return words.most_common(1)[0][0] if words else "expected"


def propose(messages: tuple[Message, ...], rng: random.Random) -> str:
    """The simulated optimizer's answer (a JSON edit proposal as text)."""
    text = "\n".join(m.content for m in messages if m.role == "user")
    try:
        strategy = json.loads(_section(text, "Strategy"))
        traces = json.loads(_section(text, "Traces") or "[]")
    except json.JSONDecodeError:
        return "I could not read the strategy or the traces."
    failures = [t for t in traces if not t.get("success")]
    options: list[dict] = []
    ids = {lesson["id"] for lesson in strategy.get("lessons", [])}
    if sum(t.get("exit") == "step_limit" for t in failures) and strategy.get("agentSteps", 30) < 30:
        options.append({"kind": "field", "field": "agentSteps", "value": min(30, strategy["agentSteps"] + 4),
                        "rationale": "sessions ran out of steps before the suite qualified"})
    if sum(1 for t in traces if t.get("elided")) and strategy.get("contextTokens", 64000) < 64000:
        options.append({"kind": "field", "field": "contextTokens",
                        "value": min(64000, strategy["contextTokens"] + 6000),
                        "rationale": "observations were elided from the context"})
    if any(not t.get("failed_initial") for t in failures) and "reproduce-report" not in ids:
        options.append({"kind": "lesson", "replace": None, "rationale": "suites did not fail on the initial program",
                        "lesson": {"id": "reproduce-report", "triggers": [_trigger(traces)],
                                   "text": "Applicability: a bug report names a call and its expected result.\n"
                                           "Action: reproduce the exact scenario of the bug report first and assert "
                                           "the expected value it states.\nVerification: the suite fails on the "
                                           "initial program and passes on the repair.",
                                   "components": ["generation", "repair"], "capabilities": ["reproduction"]}})
    if any(t.get("review") == "revise" for t in failures) and "spec-only" not in ids:
        options.append({"kind": "lesson", "replace": None, "rationale": "reviews flagged incidental assertions",
                        "lesson": {"id": "spec-only", "triggers": [_trigger(traces)],
                                   "text": "Applicability: a test checks behaviour beyond the bug report.\nAction: "
                                           "assert only what the specification fixes and drop a check that fails "
                                           "on your repair.\nVerification: the suite passes on every correct repair.",
                                   "components": ["generation", "repair"], "capabilities": ["validity"]}})
    contexts = Counter(t.get("context") for t in traces if t.get("context"))
    index = _INDEX_LINE.findall(_section(text, "Skills"))
    if contexts and index:
        top = contexts.most_common(1)[0][0]
        routes = {k: list(v) for k, v in strategy.get("skillRoutes", {}).items()}
        fitting = [name for name, ctxs in index if top in [c.strip() for c in ctxs.split(",")]
                   and name not in routes.get(top, [])]
        if fitting and len(routes.get(top, [])) < 4:
            routes[top] = routes.get(top, []) + [fitting[0]]
            options.append({"kind": "field", "field": "skillRoutes", "value": routes,
                            "rationale": f"route a fitting skill to {top} tasks"})
    if not options:
        options.append({"kind": "field", "field": "repairSteps", "value": min(12, strategy.get("repairSteps", 5) + 1),
                        "rationale": "no clear failure pattern; allow one more repair step"})
    # Like a careful optimizer, avoid repeating an edit the history shows already failed.
    history = _section(text, "Earlier proposals (oldest first)")
    fresh = [o for o in options if _summary(o) not in history]
    return json.dumps(rng.choice(fresh or options), sort_keys=True)


def _summary(option: dict) -> str:
    """How the search's history names an edit (autosaddler.search._edit_text)."""
    if option["kind"] == "field":
        return f"set {option['field']} = {str(option['value'])[:40]}"
    return f"add lesson {option['lesson']['id']}"


class SimulatedOptimizer:
    """`sim:NAME` in the optimizer's three sessions (a test double; it needs no task).

    - selection: picks the candidate with the best development score (ties: a seeded choice);
    - optimizer (diagnosis and revision): `propose` above;
    - reflection: returns the draft lesson it is given, as the final lesson.
    """

    def __init__(self, info, seed: int = 0):
        self.info = info
        self.name = info.name
        self.context_window = info.context_window
        self.seed = seed

    def complete(self, request):
        import hashlib

        from testhelix.llm.base import Completion, Usage

        text_in = "\n".join(m.content for m in request.messages)
        digest = hashlib.sha256(f"{self.seed}:{request.tags.role}:{text_in}".encode()).hexdigest()
        rng = random.Random(int(digest[:16], 16))
        role = request.tags.role
        if role == "selection":
            text = self._select(text_in, rng)
        elif role == "reflection":
            text = _section(text_in, "Draft lesson") or "{}"
        else:
            text = propose(request.messages, rng)
        usage = Usage(input_tokens=len(text_in) // 4 + 1, output_tokens=min(request.max_output_tokens,
                                                                            len(text) // 4 + 1), cost_usd=None)
        return Completion(text=text, tool_calls=(), stop_reason="end_turn", usage=usage, model=self.name,
                          metadata={"simulated": True, "seed": self.seed})

    @staticmethod
    def _select(text: str, rng: random.Random) -> str:
        try:
            candidates = json.loads(_section(text, "Candidates") or "[]")
        except json.JSONDecodeError:
            return "no candidates"
        if not candidates:
            return "no candidates"
        top = max(c.get("dev_score", 0) for c in candidates)
        best = [c for c in candidates if c.get("dev_score", 0) == top]
        return json.dumps({"parent": rng.choice(best)["node"]})
