"""The simulated optimizer: a test double for the three optimizer sessions of a strategy search.

It reads the requests by their section headings (autosaddler/prompts.py names them), as a real
model would: `## Strategy`, `## Traces`, `## Skills` and `## Earlier proposals (oldest first)` in a
diagnosis request, `## Candidates` in a selection request, `## Draft lesson` in a reflection
request. It answers in the protocols prompts.py documents. The three sessions are three simulated
roles (DIAGNOSIS, SELECTION, REFLECTION), declared as `testhelix.simulated_roles` entry points in
pyproject.toml: testhelix's simulated models, in process and behind `testhelix serve`, find them
there and never import this package (testhelix/llm/sim/contributed.py).

The diagnosis (`propose`) counts failure patterns in the traces it is given and picks,
deterministically for its seed and the prompt, one of the edits those patterns suggest: more agent
steps when sessions hit the step cap, a larger context when observations were elided, a lesson
when suites did not fail on the original program, when they failed on the own repair, or when
reviews asked for revisions, or a skill route (a skill the index lists for the context with the
most failures). Bounds come from the Strategy model. It writes lesson text in its own words and
never consults the simulated agent's vocabulary (testhelix/llm/sim/cues.py): whether an edit
changes the simulated agent is then predictable from that vocabulary, not arranged.

Selection picks the candidate with the best development score (ties: a seeded choice); reflection
returns the draft lesson it is given, as the final lesson.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from autosaddler.edits import describe, parse_edit
from autosaddler.prompts import CANDIDATES, DRAFT_LESSON, HISTORY, SKILLS, STRATEGY, TRACES, heading
from testhelix.llm.base import Message
from testhelix.strategy.model import MAX_ROUTE_SKILLS, default_value, upper_bound

_INDEX_LINE = re.compile(r"^- ([\w-]+): .*\(contexts: ([^)]*)\)$", re.M)


def _users(messages: Sequence[Message]) -> list[str]:
    return [m.content for m in messages if m.role == "user"]


def is_selection(messages: Sequence[Message]) -> bool:
    return any(u.startswith(heading(CANDIDATES)) for u in _users(messages))


def is_reflection(messages: Sequence[Message]) -> bool:
    return not is_selection(messages) and any(heading(DRAFT_LESSON) in u for u in _users(messages))


def is_diagnosis(messages: Sequence[Message]) -> bool:
    """A diagnosis request, recognised by the sections its first user message opens with."""
    return (not is_selection(messages) and not is_reflection(messages)
            and any(u.startswith(f"{heading(STRATEGY)}\n") and f"\n{heading(TRACES)}\n" in u
                    for u in _users(messages)))


def _section(text: str, name: str) -> str:
    m = re.search(rf"^{re.escape(heading(name))}\n(.*?)(?=^## |\Z)", text, re.S | re.M)
    return m.group(1).strip() if m else ""


def _trigger(traces: list[dict[str, Any]]) -> str:
    words = Counter(w for t in traces for w in re.findall(r"[a-z]{5,}", str(t.get("instruction_excerpt", "")).lower()))
    for preferred in ("expected", "returned", "instead", "should", "raises"):
        if words.get(preferred):
            return preferred
    return words.most_common(1)[0][0] if words else "expected"


def _symptoms(traces: list[dict[str, Any]]) -> Counter[str]:
    """Failure patterns in the traces, counted per failed task."""
    out: Counter[str] = Counter()
    for t in traces:
        if t.get("success"):
            continue
        if t.get("exit") == "step_limit":
            out["step_limit"] += 1
        if t.get("elided"):
            out["elided"] += 1
        if not t.get("failed_initial"):
            out["no_initial_failure"] += 1
        elif not t.get("passed_repair"):
            out["own_repair_failed"] += 1
        if t.get("review") == "revise":
            out["review_revise"] += 1
    return out


def _lesson(lesson_id: str, trigger: str, applicability: str, action: str, verification: str,
            components: list[str], capability: str) -> dict[str, Any]:
    return {"id": lesson_id, "triggers": [trigger],
            "text": f"Applicability: {applicability}\nAction: {action}\nVerification: {verification}",
            "components": components, "capabilities": [capability]}


# The lessons a failure pattern suggests, in the simulated optimizer's own words: (symptom, lesson
# id, rationale with {n} tasks showing it of {failed} failed ones, applicability, action,
# verification, components, capability).
_LESSONS = (
    ("no_initial_failure", "fail-first", "in {n} of {failed} failed tasks no suite failed on the program as given",
     "the task describes a call and the result it should give.",
     "write the test for that call first, asserting the result the task describes, and run it on the original "
     "program before adding others.",
     "that test fails on the original program.", ("generation", "repair"), "reproduction"),
    ("own_repair_failed", "repair-or-test", "in {n} failed tasks the suite failed on the own repair",
     "a test fails on your own repair.",
     "compare the failing assertion with the task description: change the repair when the description backs the "
     "test, drop the test otherwise.",
     "the suite passes on the repair and still fails on the original program.", ("repair",), "diagnosis"),
    ("review_revise", "described-behaviour", "reviewers asked for revisions in {n} failed tasks",
     "a test asserts more than the task describes.",
     "keep assertions to behaviour the description states; leave out message wording, printed forms and private "
     "attributes.",
     "reviewers approve the suite.", ("generation", "repair"), "validity"),
)


def propose(messages: Sequence[Message], rng: random.Random) -> str:
    """The simulated optimizer's answer (a JSON edit proposal as text), from the traces only: each
    failure pattern it counts there suggests one edit, written in its own words; it never looks at
    what the simulated agent reacts to."""
    text = "\n".join(m.content for m in messages if m.role == "user")
    try:
        strategy = json.loads(_section(text, STRATEGY))
        traces = json.loads(_section(text, TRACES) or "[]")
    except json.JSONDecodeError:
        return "I could not read the strategy or the traces."
    seen = _symptoms(traces)
    failed = sum(1 for t in traces if not t.get("success"))
    ids = {lesson["id"] for lesson in strategy.get("lessons", [])}
    trigger = _trigger([t for t in traces if not t.get("success")] or traces)
    options: list[dict[str, Any]] = []
    steps, context, repair = upper_bound("agentSteps"), upper_bound("contextTokens"), upper_bound("repairSteps")
    default_repair = default_value("repairSteps")
    if seen["step_limit"] and strategy.get("agentSteps", steps) < steps:
        options.append({"kind": "field", "field": "agentSteps", "value": min(steps, strategy["agentSteps"] + 4),
                        "rationale": f"{seen['step_limit']} of {failed} failed sessions ran out of steps"})
    if seen["elided"] and strategy.get("contextTokens", context) < context:
        options.append({"kind": "field", "field": "contextTokens", "value": min(context, strategy["contextTokens"] + 6000),
                        "rationale": f"observations were elided in {seen['elided']} failed tasks"})
    for symptom, lesson_id, why, applicability, action, verification, components, capability in _LESSONS:
        if seen[symptom] and lesson_id not in ids:
            options.append({"kind": "lesson", "replace": None,
                            "rationale": why.format(n=seen[symptom], failed=failed),
                            "lesson": _lesson(lesson_id, trigger, applicability, action, verification,
                                              list(components), capability)})
    contexts = Counter(t.get("context") for t in traces if t.get("context") and not t.get("success"))
    index = _INDEX_LINE.findall(_section(text, SKILLS))
    if contexts and index:
        top = contexts.most_common(1)[0][0]
        routes = {k: list(v) for k, v in strategy.get("skillRoutes", {}).items()}
        fitting = [name for name, ctxs in index if top in [c.strip() for c in ctxs.split(",")]
                   and name not in routes.get(top, [])]
        if fitting and len(routes.get(top, [])) < MAX_ROUTE_SKILLS:
            routes[top] = routes.get(top, []) + [rng.choice(fitting)]
            options.append({"kind": "field", "field": "skillRoutes", "value": routes,
                            "rationale": f"{contexts[top]} failed tasks are {top} tasks; route a skill listed for them"})
    if not options:
        options.append({"kind": "field", "field": "repairSteps",
                        "value": min(repair, strategy.get("repairSteps", default_repair) + 1),
                        "rationale": "no clear failure pattern; allow one more repair step"})
    # Like a careful optimizer, avoid repeating an edit the history shows already failed.
    history = _section(text, HISTORY)
    fresh = [o for o in options if describe(parse_edit(o)) not in history]
    return json.dumps(rng.choice(fresh or options), sort_keys=True)


def select(messages: Sequence[Message], rng: random.Random) -> str:
    """The selection session's answer: the candidate with the best development score."""
    try:
        candidates = json.loads(_section(_text(messages), CANDIDATES) or "[]")
    except json.JSONDecodeError:
        return "no candidates"
    if not candidates:
        return "no candidates"
    top = max(c.get("dev_score", 0) for c in candidates)
    best = [c for c in candidates if c.get("dev_score", 0) == top]
    return json.dumps({"parent": rng.choice(best)["node"]})


def reflect(messages: Sequence[Message], rng: random.Random) -> str:  # noqa: ARG001 - SimulatedRole's signature
    """The reflection session's answer: the draft lesson as given."""
    return _section(_text(messages), DRAFT_LESSON) or "{}"


def _text(messages: Sequence[Message]) -> str:
    return "\n".join(m.content for m in messages)


@dataclass(frozen=True)
class SessionRole:
    """One optimizer session as a simulated role (testhelix/llm/sim/contributed.py `SimulatedRole`)."""

    name: str
    recognise: Callable[[Sequence[Message]], bool]
    reply: Callable[[Sequence[Message], random.Random], str]

    def recognises(self, messages: Sequence[Message]) -> bool:
        return self.recognise(messages)

    def answer(self, messages: Sequence[Message], rng: random.Random) -> str:
        return self.reply(messages, rng)


# The names are the roles the requests play (`optimizer` is the diagnosis session's call role).
DIAGNOSIS = SessionRole("optimizer", is_diagnosis, propose)
SELECTION = SessionRole("selection", is_selection, select)
REFLECTION = SessionRole("reflection", is_reflection, reflect)
