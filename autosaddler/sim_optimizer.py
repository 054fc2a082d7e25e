"""The simulated optimizer: a test double for the three optimizer sessions of a strategy search.

It reads the requests by their section headings (autosaddler/prompts.py names them), as a real
model would: `## Strategy`, `## Traces`, `## Skills` and `## Earlier proposals (oldest first)` in a
diagnosis request, `## Candidates` in a selection request, `## Draft lesson` in a reflection
request. It answers in the protocols prompts.py documents. The three sessions are three simulated
roles (DIAGNOSIS, SELECTION, REFLECTION), declared as `testhelix.simulated_roles` entry points in
pyproject.toml: testhelix's simulated models, in process and behind `testhelix serve`, find them
there and never import this package (testhelix/llm/sim/contributed.py).

What the diagnosis (`propose`) reads: the parent strategy, the trace fields of each minibatch task
(success, exit, elided, failed_initial, passed_repair, review, context; never the task's text: the
`instruction_excerpt` is not read, and tasks are known by position only), the skill index and the
earlier proposals with their fates. It knows nothing else: not the simulated agent's vocabulary
(testhelix/llm/sim/cues.py is never imported or read), no task material, no labels.

How it diagnoses: it counts, over the failed tasks, the failure patterns in `DIAGNOSES` and draws
one diagnosis with probability proportional to its count (a minibatch with no failure is
diagnosed as `all_passed`). For that diagnosis it proposes one edit from `CATALOGUE`, the advice a
competent optimizer would give for that problem, written once here in plain words: new guidance
(put before the parent's guidance, which is kept), a lesson, a numeric field (agentSteps,
repairSteps, contextTokens, toolOutputChars, reviewOutputTokens, rounds) or a skill route (a skill
the index lists for the context with the most failures). An edit the history names (any fate) or
that the parent already holds is skipped, so repeated proposals explore: the seed picks among the
rest, and when a diagnosis has no advice left the others' advice is used. Lesson triggers are
words nearly every bug report and execution checkpoint uses (`BROAD_TRIGGERS`), not words of these
tasks, so a lesson reaches unseen tasks and no trigger depends on the task text.

What it can propose (`CATALOGUE`): per diagnosis, guidance, a lesson, or a field step. The advice
shares words with the simulated agent's vocabulary where both describe the same testing practice
(reproducing the report, checking the suite on both programs); whether an edit helps is then
measured by the search and the gate, not arranged here.

Randomness: every choice comes from the `rng` the caller seeds (contributed roles are seeded with
the model's seed and the request text), so for one random stream the proposal depends only on the
failure counts, the contexts, the strategy, the skill index and the history: decoy traces with the
same patterns under other task text give the same proposal (tests/autosaddler/test_sim_optimizer.py).

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
from testhelix.strategy.model import MAX_ROUTE_SKILLS, Strategy, upper_bound

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



# What each diagnosis means, as the rationale names it ({n} of {failed} failed tasks show it).
DIAGNOSES: dict[str, str] = {
    "no_initial_failure": "in {n} of {failed} failed tasks no suite failed on the program as given",
    "own_repair_failed": "in {n} of {failed} failed tasks the suite failed on its own repair",
    "review_revise": "reviewers asked for revisions in {n} of {failed} failed tasks",
    "step_limit": "{n} of {failed} failed sessions ran out of steps",
    "elided": "observations were cut from the context in {n} of {failed} failed tasks",
    "all_passed": "every task of the minibatch succeeded",
}

# Lesson triggers: words nearly every bug report ("should", "expected", "instead") or execution
# checkpoint ("initial program", "own repair") holds, so a lesson is retrieved for unseen tasks.
_GUIDANCE_CHARS = int(Strategy.model_json_schema()["properties"]["guidance"]["maxLength"])
BROAD_TRIGGERS = ("should", "expected", "instead", "initial program", "own repair")


@dataclass(frozen=True)
class Advice:
    """One edit a diagnosis suggests: `guidance` text, a `lesson` (id, applicability, action,
    verification, components), or a `field` step (name, increment)."""

    kind: str
    guidance: str = ""
    lesson: tuple[str, str, str, str, tuple[str, ...]] | None = None
    field: tuple[str, int] | None = None


def _guidance(text: str) -> Advice:
    return Advice("guidance", guidance=text)


def _lesson(lesson_id: str, applicability: str, action: str, verification: str, *components: str) -> Advice:
    return Advice("lesson", lesson=(lesson_id, applicability, action, verification, components))


def _step(name: str, by: int) -> Advice:
    return Advice("field", field=(name, by))


# The advice per diagnosis, in the simulated optimizer's own words.
CATALOGUE: dict[str, tuple[Advice, ...]] = {
    "no_initial_failure": (
        _guidance("Start from the bug report: reproduce its exact scenario in the first test, with the inputs it "
                  "names and the expected value it states, and run that test on the initial program before "
                  "writing any other; keep it only if it fails there."),
        _lesson("reproduce-report", "the task reports a call and the result it should have given.",
                "reproduce the reported scenario exactly, with its inputs, and assert the expected value the "
                "report states.", "the test fails on the initial program.", "generation", "repair"),
        _guidance("A suite that passes on the program as given proves nothing: replay the reported case step by "
                  "step, assert what the report expects, and verify the suite fails on the initial program."),
        _step("agentSteps", 4),
    ),
    "own_repair_failed": (
        _guidance("When a test fails on your own repair, decide which of the two is wrong before changing either: "
                  "re-read the report, run the suite on both programs, and change the repair when the report "
                  "backs the test, the test otherwise."),
        _lesson("test-or-repair", "a test fails on your own repair.",
                "compare the failing assertion with the report; verify which one the report supports and change "
                "the other.", "the suite passes on the repair and fails on the initial program.", "repair"),
        _step("repairSteps", 2),
        _step("rounds", 1),
    ),
    "review_revise": (
        _guidance("Assert only what the specification fixes: the values and state the report describes. Leave out "
                  "incidental details, such as message wording, printed forms or private attributes, that a "
                  "correct program may do differently."),
        _lesson("described-behaviour", "a test asserts more than the task describes.",
                "keep each assertion to behaviour the specification states; drop checks of wording, formatting "
                "or internals.", "reviewers approve the suite.", "generation", "repair"),
        _step("reviewOutputTokens", 1024),
    ),
    "step_limit": (
        _step("agentSteps", 4),
        _guidance("Spend the first steps on the reported case: write its test and run it at once rather than "
                  "reading the whole program first."),
        _step("repairSteps", 1),
    ),
    "elided": (
        _step("contextTokens", 6000),
        _step("toolOutputChars", 5000),
    ),
    "all_passed": (
        _step("repairSteps", 1),
        _step("rounds", 1),
    ),
}


def _counts(traces: list[dict[str, Any]]) -> Counter[str]:
    """The diagnoses the traces show, counted per failed task (`all_passed` when none failed)."""
    out: Counter[str] = Counter()
    for t in traces:
        if t.get("success"):
            continue
        out["step_limit"] += t.get("exit") == "step_limit"
        out["elided"] += bool(t.get("elided"))
        out["no_initial_failure"] += not t.get("failed_initial")
        out["own_repair_failed"] += bool(t.get("failed_initial")) and not t.get("passed_repair")
        out["review_revise"] += t.get("review") == "revise"
    out = +out
    return out or Counter({"all_passed": 1})


def _edit(advice: Advice, strategy: dict[str, Any], rationale: str) -> dict[str, Any] | None:
    """The proposal `advice` makes for this parent, or None when the parent holds it already or a
    bound forbids it."""
    if advice.kind == "guidance":
        old = str(strategy.get("guidance", ""))
        if advice.guidance in old:
            return None
        value = f"{advice.guidance}\n\n{old}".strip()
        if len(value) > _GUIDANCE_CHARS:
            return None
        return {"kind": "field", "field": "guidance", "value": value, "rationale": rationale}
    if advice.kind == "lesson" and advice.lesson is not None:
        lesson_id, applicability, action, verification, components = advice.lesson
        if lesson_id in {lesson.get("id") for lesson in strategy.get("lessons", [])}:
            return None
        lesson = {"id": lesson_id, "triggers": list(BROAD_TRIGGERS), "components": list(components),
                  "text": f"Applicability: {applicability}\nAction: {action}\nVerification: {verification}",
                  "capabilities": [lesson_id]}
        return {"kind": "lesson", "replace": None, "lesson": lesson, "rationale": rationale}
    assert advice.field is not None
    name, by = advice.field
    current, top = strategy.get(name), upper_bound(name)
    if not isinstance(current, int) or current >= top:
        return None
    return {"kind": "field", "field": name, "value": min(top, current + by), "rationale": rationale}


def _route(text: str, traces: list[dict[str, Any]], strategy: dict[str, Any], rng: random.Random,
           failed: int) -> dict[str, Any] | None:
    """A skill route for the context with the most failed tasks, from the skills the index lists for it."""
    contexts = Counter(str(t["context"]) for t in traces if t.get("context") and not t.get("success"))
    index = _INDEX_LINE.findall(_section(text, SKILLS))
    if not contexts or not index:
        return None
    top, n = sorted(contexts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    routes = {k: list(v) for k, v in strategy.get("skillRoutes", {}).items()}
    fitting = [name for name, ctxs in index if top in [c.strip() for c in ctxs.split(",")]
               and name not in routes.get(top, [])]
    if not fitting or len(routes.get(top, [])) >= MAX_ROUTE_SKILLS:
        return None
    routes[top] = routes.get(top, []) + [rng.choice(sorted(fitting))]
    return {"kind": "field", "field": "skillRoutes", "value": routes,
            "rationale": f"{n} of {failed} failed tasks are {top} tasks; route a skill the index lists for them"}


def propose(messages: Sequence[Message], rng: random.Random) -> str:
    """The diagnosis session's answer (one JSON edit as text): a diagnosis drawn by its count in the
    traces, then advice for it from CATALOGUE that neither the history nor the parent holds."""
    text = "\n".join(m.content for m in messages if m.role == "user")
    try:
        strategy = json.loads(_section(text, STRATEGY))
        traces = json.loads(_section(text, TRACES) or "[]")
    except json.JSONDecodeError:
        return "I could not read the strategy or the traces."
    if not isinstance(strategy, dict) or not isinstance(traces, list):
        return "I could not read the strategy or the traces."
    traces = [t for t in traces if isinstance(t, dict)]
    counts, failed = _counts(traces), sum(1 for t in traces if not t.get("success"))
    history = _section(text, HISTORY)

    def fresh(diagnosis: str) -> list[dict[str, Any]]:
        why = DIAGNOSES[diagnosis].format(n=counts[diagnosis], failed=failed)
        made = (_edit(advice, strategy, f"{why}. {_ADVICE_NOTE[advice.kind]}") for advice in CATALOGUE[diagnosis])
        return [e for e in made if e is not None and describe(parse_edit(e)) not in history]

    names = sorted(counts)
    diagnosis = rng.choices(names, weights=[counts[n] for n in names])[0]
    options = fresh(diagnosis) or [e for n in sorted(CATALOGUE) if n != diagnosis for e in fresh(n)]
    route = _route(text, traces, strategy, rng, failed)
    if route is not None and describe(parse_edit(route)) not in history:
        options.append(route)
    if not options:
        return "Every edit I would propose for these traces was proposed before; I have nothing new to suggest."
    return json.dumps(rng.choice(options), sort_keys=True)


_ADVICE_NOTE = {"guidance": "Guidance that addresses it, ahead of the existing guidance.",
                "lesson": "A lesson that addresses it where it applies.",
                "field": "A larger budget for it."}


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
