"""Proposals: the one `Edit` type, its parser, the validation every proposal passes, and its text.

An edit changes one mutable field, or one lesson (add, replace or remove) with every other lesson
preserved. Anything else — a fixed field (the candidate counts), a name that is not a strategy field
(the evaluator, tools, task inputs, inference caps), a value out of bounds, learned prose with a code
block or a task identifier — is rejected with a reason; a rejected proposal still counts toward
max_candidate_proposals.

`Edit` is a discriminated union on `kind`: `FieldEdit`, `LessonEdit`, and `UnparsedEdit` for an
answer that is not an edit at all (kept as given, so the DAG shows what the optimizer said). The
optimizer's answer, a stored DAG row and a test's dict all go through `parse_edit`, which never
raises; `apply_edit` is where a proposal is accepted or rejected. Keys given as null are ignored
(an answer may spell out every key).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from testhelix.agent.calls import parse_json_object
from testhelix.strategy.model import MUTABLE_FIELDS, ROUNDS_RULE, SEARCH_MINIMUM, Strategy, validate_strategy_data

RATIONALE_CHARS = 500   # what a node keeps of the optimizer's rationale


class FieldEdit(BaseModel):
    """Set one mutable strategy field to `value`."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["field"] = "field"
    field: str = Field(min_length=1)
    value: Any = None              # Any: the proposed value of any strategy field; `apply_edit` validates it as that field
    rationale: str = ""


class LessonEdit(BaseModel):
    """Add, replace or remove one lesson; `lesson_id` names the lesson a replace or remove targets."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["lesson"] = "lesson"
    op: Literal["add", "replace", "remove"]
    lesson: dict[str, Any] | None = None   # the optimizer's lesson as written; `apply_edit` validates it as a Lesson
    lesson_id: str | None = None
    rationale: str = ""


class UnparsedEdit(BaseModel):
    """An answer that is not an edit: `raw` is what the optimizer gave, `problem` why it is not one."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    kind: Literal["unparsed"] = "unparsed"
    raw: Any = None                # Any: whatever the optimizer answered (any JSON, or text), kept to show it
    problem: str = "not an edit"


Edit = Annotated[FieldEdit | LessonEdit | UnparsedEdit, Field(discriminator="kind")]
_EDIT = TypeAdapter(Edit)
_KEYS = {"field": ("kind", "field", "value", "rationale"),
         "lesson": ("kind", "op", "lesson", "lesson_id", "rationale"),
         "unparsed": ("kind", "raw", "problem")}


class RejectedEdit(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def parse_edit(raw: Any) -> Edit:
    """An `Edit` from the optimizer's answer (text or object), a stored row or an Edit; never raises.

    The optimizer's protocol writes a lesson edit as `{"kind": "lesson", "lesson": {...},
    "replace": ID or null}`; stored rows write `op` and `lesson_id`. Both read the same. Keys the
    kind does not use are ignored (the optimizer may add commentary), a rationale is cut to
    RATIONALE_CHARS, and anything malformed becomes an UnparsedEdit naming the problem."""
    if isinstance(raw, (FieldEdit, LessonEdit, UnparsedEdit)):
        return raw
    if isinstance(raw, str):
        data = parse_json_object(raw)
        if data is None:
            return UnparsedEdit(raw=raw[:RATIONALE_CHARS], problem="unparsed proposal: the answer holds no JSON object")
        raw = data
    if not isinstance(raw, dict):
        return UnparsedEdit(raw=repr(raw)[:RATIONALE_CHARS], problem="a proposal is a JSON object")
    kind = raw.get("kind")
    if kind not in _KEYS:
        return UnparsedEdit(raw=raw, problem=f"malformed proposal: kind {kind!r} is not field or lesson")
    if kind == "field" and "value" not in raw:
        return UnparsedEdit(raw=raw, problem="malformed proposal: a field edit gives its value")
    data = {k: raw[k] for k in _KEYS[kind] if k in raw and raw[k] is not None}
    if kind == "lesson" and "op" not in data:
        data["op"] = "replace" if raw.get("replace") else "add"
        if raw.get("replace"):
            data["lesson_id"] = raw["replace"]
    if isinstance(data.get("rationale"), str):
        data["rationale"] = data["rationale"][:RATIONALE_CHARS]
    try:
        return _EDIT.validate_python(data)
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'][1:])) or 'kind'}: {e['msg']}" for e in err.errors())
        return UnparsedEdit(raw=raw, problem=f"malformed proposal: {problems}")


def describe(edit: Edit | None, width: int = 40) -> str:
    """One line naming an edit. The search's history (which the optimizer reads) and every report
    use this text, so changing it changes what a simulated optimizer is shown."""
    if edit is None:
        return "initial strategy"
    if isinstance(edit, FieldEdit):
        return f"set {edit.field} = {str(edit.value)[:width]}"
    if isinstance(edit, LessonEdit):
        return f"{edit.op} lesson {edit.lesson_id or (edit.lesson or {}).get('id')}"
    return "unparsed proposal"


def _words(value: Any) -> str:
    """A value as plain words: mappings as `key: value`, lists comma-separated, empty as `none`."""
    if isinstance(value, dict):
        return "; ".join(f"{k}: {_words(v)}" for k, v in value.items()) or "none"
    if isinstance(value, (list, tuple)):
        return ", ".join(_words(v) for v in value) or "none"
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _clip(value: Any, width: int) -> str:
    text = " ".join(_words(value).split())
    return text if len(text) <= width else text[: width - 1].rsplit(" ", 1)[0].rstrip(",;:") + "…"


def in_words(edit: Edit | None, before: dict | None = None, width: int = 60) -> str:
    """An edit as a person reads it in a progress line: `agentSteps 12 → 16`, `lesson added: ...`,
    `lesson l3 removed`, `not an edit: ...` -- never raw JSON. `before`: the parent strategy (as
    JSON values), for a field's old value. Display only; `describe` is what the optimizer is shown."""
    if edit is None:
        return "initial strategy"
    if isinstance(edit, FieldEdit):
        shown = before.get(edit.field) if before else None
        old = "→ " if not before or edit.field not in before else \
            "none → " if shown == "" else f"{_clip(shown, width // 2)} → "   # empty text reads as empty maps do
        return f"{edit.field} {old}{_clip(edit.value, width // 2)}"
    if isinstance(edit, LessonEdit):
        lesson = edit.lesson or {}
        text = _clip(lesson.get("text") or "", width)
        if edit.op == "add":
            return f"lesson added: {text}"
        if edit.op == "remove":
            return f"lesson {edit.lesson_id} removed"
        return f"lesson {edit.lesson_id} replaced: {text}"
    return f"not an edit: {_clip(edit.problem, width)}"


def apply_edit(parent: Strategy, edit: Edit, known_task_ids: Iterable[str] | None = None) -> Strategy:
    """The child strategy, or RejectedEdit with the reason."""
    if isinstance(edit, UnparsedEdit):
        raise RejectedEdit(edit.problem)
    data = parent.model_dump(mode="json")
    if isinstance(edit, FieldEdit):
        if edit.field not in Strategy.model_fields:
            raise RejectedEdit(f"{edit.field!r} is not a strategy field (the evaluator, tools, task inputs and "
                               "inference caps are not editable)")
        if edit.field not in MUTABLE_FIELDS:
            raise RejectedEdit(f"{edit.field} is fixed during search")
        if edit.field == "lessons":
            raise RejectedEdit("lessons change one at a time through a lesson edit")
        if data[edit.field] == edit.value:
            raise RejectedEdit(f"{edit.field} already has that value")
        floor = SEARCH_MINIMUM.get(edit.field)
        if floor is not None and isinstance(edit.value, int) and edit.value < floor:
            raise RejectedEdit(f"{edit.field}: {edit.value} is below the search space's lower bound {floor}"
                               + (f" ({ROUNDS_RULE})" if edit.field == "rounds" else ""))
        data[edit.field] = edit.value
    else:
        data["lessons"] = _edit_lessons(data["lessons"], edit)
    child, problems = validate_strategy_data(data, known_task_ids=known_task_ids)
    if child is None:
        raise RejectedEdit("; ".join(f"{path}: {msg}" for path, msg in problems))
    return child


def _edit_lessons(lessons: list[dict], edit: LessonEdit) -> list[dict]:
    ids = [lesson["id"] for lesson in lessons]
    if edit.op == "add":
        if not edit.lesson:
            raise RejectedEdit("an added lesson needs its content")
        if edit.lesson.get("id") in ids:
            raise RejectedEdit(f"lesson {edit.lesson.get('id')!r} exists already (use replace)")
        return lessons + [edit.lesson]
    target = edit.lesson_id or (edit.lesson or {}).get("id")
    if target not in ids:
        raise RejectedEdit(f"no lesson {target!r} to {edit.op}")
    i = ids.index(target)
    if edit.op == "remove":
        return lessons[:i] + lessons[i + 1:]
    if not edit.lesson or edit.lesson.get("id") != target:
        raise RejectedEdit("a replacement keeps the lesson id and gives the new content")
    return lessons[:i] + [edit.lesson] + lessons[i + 1:]
