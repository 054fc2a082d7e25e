"""Single-call roles: planning, review, corrective feedback, differential challenge.

Each helper makes exactly one metered call through the task's Budget (so it may raise
BudgetExhausted or a ModelError) and parses the answer leniently: a reply that does not parse is
still charged and yields a result marked `parsed=False`, never an exception.

    plan_directions(model, budget, task, strategy, k)            -> Plan
    review_suite(model, budget, task, strategy, original_source, suite_files, symptoms) -> Review
    corrective_feedback(model, budget, task, counterexamples)    -> str
    differential_challenge(model, budget, task, suites_summary)  -> str
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from testhelix.agent import prompts
from testhelix.agent.prompts import PublicTask
from testhelix.llm.base import CallTags, ChatModel, Message, ModelRequest

if TYPE_CHECKING:
    from testhelix.agent.budget import Budget
    from testhelix.strategy.model import Strategy
    from testhelix.strategy.skills import Skill

FALLBACK_DIRECTIONS = ("the exact scenario of the bug report", "boundary values next to the reported case",
                       "a sequence of calls that exercises the affected state", "error handling around the fix",
                       "the smallest input that shows the defect")


# dict[str, Any]: a model's answer, any JSON object; each caller validates the fields it reads
def parse_json_object(text: str) -> dict[str, Any] | None:
    """The first JSON object in `text` (models sometimes wrap JSON in prose or fences).

    Decoding starts at the first `{` and stops where that object ends (`raw_decode`), so prose
    after it, or a second object, does not spoil the first one.
    """
    start = (text or "").find("{")
    if start < 0:
        return None
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def _call(model: ChatModel, budget: Budget, messages: Sequence[Message], role: str, max_tokens: int,
          pair: int | None = None, round_index: int | None = None) -> str:
    request = ModelRequest(tuple(messages), (), max_tokens, tags=CallTags(role=role, pair=pair, round=round_index))
    return budget.complete(model, request).text


@dataclass(frozen=True)
class Plan:
    directions: tuple[str, ...]
    parsed: bool


def plan_directions(model: ChatModel, budget: Budget, task: Any, strategy: Strategy, k: int,
                    library: dict[str, Skill] | None = None,
                    max_tokens: int = 1024) -> Plan:
    public = PublicTask.of(task)
    text = _call(model, budget, prompts.planning_messages(strategy, public, k, library), "planning", max_tokens)
    data = parse_json_object(text) or {}
    raw = data.get("directions")
    found = [d.strip() for d in raw if isinstance(d, str) and d.strip()] if isinstance(raw, list) else []
    unique = list(dict.fromkeys(found))
    parsed = len(unique) >= k
    for extra in FALLBACK_DIRECTIONS:          # keep K distinct directions even when the reply is short
        if len(unique) >= k:
            break
        if extra not in unique:
            unique.append(extra)
    return Plan(directions=tuple(unique[:k]), parsed=parsed)


@dataclass(frozen=True)
class Review:
    verdict: str              # approve | revise | unparsed
    reasons: tuple[str, ...]
    suspect_tests: tuple[str, ...]
    parsed: bool


def review_suite(model: ChatModel, budget: Budget, task: Any, strategy: Strategy, original_source: str,
                 suite_files: dict[str, str], symptoms: str, reviewer_skills_text: str = "",
                 pair: int | None = None, round_index: int | None = None) -> Review:
    public = PublicTask.of(task)
    msgs = prompts.review_messages(strategy, public, original_source, suite_files, symptoms, reviewer_skills_text)
    text = _call(model, budget, msgs, "review", strategy.reviewOutputTokens, pair, round_index)
    data = parse_json_object(text)
    if data is None or data.get("verdict") not in ("approve", "revise"):
        return Review("unparsed", (), (), parsed=False)
    reasons = tuple(str(r) for r in data.get("reasons", ()) if isinstance(r, str))
    suspects = tuple(str(t) for t in data.get("suspect_tests", ()) if isinstance(t, str))
    return Review(data["verdict"], reasons, suspects, parsed=True)


def corrective_feedback(model: ChatModel, budget: Budget, task: Any, counterexamples: Sequence[Mapping[str, object]],
                        pair: int | None = None, round_index: int | None = None, max_tokens: int = 1024) -> str:
    msgs = prompts.feedback_messages(PublicTask.of(task), counterexamples)
    return _call(model, budget, msgs, "feedback", max_tokens, pair, round_index).strip()


def differential_challenge(model: ChatModel, budget: Budget, task: Any, suites_summary: str,
                           round_index: int | None = None, max_tokens: int = 1024) -> str:
    msgs = prompts.challenge_messages(PublicTask.of(task), suites_summary)
    return _call(model, budget, msgs, "challenge", max_tokens, None, round_index).strip()
