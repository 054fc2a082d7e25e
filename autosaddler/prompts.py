"""The optimizer's prompts and the protocol its diagnosis session speaks.

Diagnosis. `optimizer_messages(strategy_json, traces, skills_index)` builds two messages: a system
message with the rules, and a user message with three sections (a model, real or simulated, reads
them by their headings):

    ## Strategy        the parent strategy as canonical JSON
    ## Traces          a JSON list, one object per minibatch task:
                       {"context", "success", "exit", "steps", "elided", "failed_initial",
                        "passed_repair", "review", "instruction_excerpt"}
    ## Skills          the enabled skill library index (one line per skill), may be empty

The search may append a fourth user message, `## Earlier proposals (oldest first)`, one line per
earlier proposal as `autosaddler.edits.describe` names it, with its fate. The answer is ONE JSON
object, exactly one edit:

    {"kind": "field", "field": NAME, "value": VALUE, "rationale": TEXT}
        NAME is one mutable field: rounds (2-4 in a search), agentSteps, repairSteps, contextTokens,
        toolOutputChars, reviewOutputTokens, guidance, skillRoutes (VALUE = the whole new routes object)
    {"kind": "lesson", "lesson": {"id", "triggers", "text", "components", "capabilities"},
     "replace": LESSON_ID or null, "rationale": TEXT}
        adds a lesson, or replaces the lesson `replace`, keeping every other lesson unchanged

`autosaddler.edits.parse_edit` reads the answer; `apply_edit` checks it against the strategy.

Selection sends `## Candidates` (a JSON list of node, dev_score, depth, edit, minibatch_successes)
and expects `{"parent": NODE_ID}`; reflection sends `## Diagnosis`, `## Failed attempts`,
`## Existing lessons` and `## Draft lesson` and expects the lesson as one JSON object.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from testhelix.llm.base import Message

# The section headings of the three sessions' requests: a model, real or simulated, reads a request
# by them (the simulated optimizer, autosaddler/sim_optimizer.py, reads exactly these).
STRATEGY = "Strategy"
TRACES = "Traces"
SKILLS = "Skills"
HISTORY = "Earlier proposals (oldest first)"
CANDIDATES = "Candidates"
DIAGNOSIS = "Diagnosis"
FAILED_ATTEMPTS = "Failed attempts"
EXISTING_LESSONS = "Existing lessons"
DRAFT_LESSON = "Draft lesson"


def heading(section: str) -> str:
    """A section's heading line as the requests write it (`## NAME`)."""
    return f"## {section}"

OPTIMIZER_SYSTEM = """You improve a test-generation strategy from execution evidence. Propose exactly
one edit: change one mutable field, or add/replace one lesson. Lessons use literal triggers that
occur in task text and text written as 'Applicability: ... Action: ... Verification: ...'. Never name
a task, never include code blocks, never touch evaluator, tools, task inputs or inference caps.
Answer with one JSON object as documented."""

SELECTION_SYSTEM = """You choose which strategy to improve next in a search over test-generation
strategies. You see each candidate's development score (share of development tasks solved), its
depth (edits from the initial strategy), its last edit and its minibatch successes. Prefer high scores,
but a strong recent edit on a shallow node can be worth building on. Answer with JSON only:
{"parent": NODE_ID}"""

REFLECTION_SYSTEM = """You write one reusable lesson for a test-generation agent from a diagnosis of
failed attempts. The lesson must apply beyond these tasks: never name a task, never include code.
Never copy a solution, a reference repair or a hidden patch into a lesson, nor restate what one
changes: a lesson teaches how to find and test a bug, not what the fix of one task is.
The components a lesson may name are planning, preparation, generation, repair and review.
Give 1-8 literal triggers that occur in task text, and text of at most 1000 characters written as
'Applicability: ... Action: ... Verification: ...'. Answer with the lesson as one JSON object:
{"id", "triggers", "text", "components", "capabilities"}"""


def optimizer_messages(strategy_json: str, traces: Sequence[Mapping[str, object]], skills_index: str = "") -> list[Message]:
    """The diagnosis session's two messages (see the module docstring for the sections)."""
    body = (f"{heading(STRATEGY)}\n{strategy_json}\n\n"
            f"{heading(TRACES)}\n{json.dumps(list(traces), indent=1, sort_keys=True)}\n\n"
            f"{heading(SKILLS)}\n{skills_index}")
    return [Message("system", OPTIMIZER_SYSTEM), Message("user", body)]


def selection_messages(rows: Sequence[Mapping[str, object]]) -> list[Message]:
    return [Message("system", SELECTION_SYSTEM),
            Message("user", f"{heading(CANDIDATES)}\n{json.dumps(list(rows), indent=1)}")]


def history_message(history: list[str]) -> Message:
    recent = "\n".join(f"- {h}" for h in history)
    return Message("user", f"{heading(HISTORY)}\n{recent}\n\nPropose a different "
                           "edit from any that was rejected or screened out.")


def reflection_messages(diagnosis: str, failures: Sequence[Mapping[str, object]], lesson_ids: list[str],
                        draft: dict) -> list[Message]:
    body = (f"{heading(DIAGNOSIS)}\n{diagnosis}\n\n{heading(FAILED_ATTEMPTS)}\n{json.dumps(list(failures), indent=1)}\n\n"
            f"{heading(EXISTING_LESSONS)}\n{json.dumps(lesson_ids)}\n\n"
            f"{heading(DRAFT_LESSON)}\n{json.dumps(draft, sort_keys=True)}")
    return [Message("system", REFLECTION_SYSTEM), Message("user", body)]
