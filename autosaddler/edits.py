"""Proposals: exactly one edit of a strategy, and the validation every proposal passes first.

An edit changes one mutable field, or one lesson (add, replace or remove) with every other lesson
preserved. Anything else — a fixed field (the candidate counts), a name that is not a strategy field
(the evaluator, tools, task inputs, inference caps), a value out of bounds, learned prose with a code
block or a task identifier — is rejected with a reason; a rejected proposal still counts toward
max_candidate_proposals.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from testhelix.strategy.model import MUTABLE_FIELDS, ROUNDS_RULE, SEARCH_MINIMUM, Strategy, validate_strategy_data


class Edit(BaseModel):
    """One proposed change. `kind` field: set `field` to `value`; lesson: `op` on `lesson`."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["field", "lesson"]
    field: str | None = None
    value: Any = None
    op: Literal["add", "replace", "remove"] | None = None
    lesson: dict | None = None
    lesson_id: str | None = None
    rationale: str = ""

    def summary(self) -> str:
        if self.kind == "field":
            shown = repr(self.value)
            return f"set {self.field} = {shown[:60] + '…' if len(shown) > 60 else shown}"
        return f"{self.op} lesson {self.lesson_id or (self.lesson or {}).get('id')}"


class RejectedEdit(Exception):
    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def apply_edit(parent: Strategy, edit: Edit, known_task_ids=None) -> Strategy:
    """The child strategy, or RejectedEdit with the reason."""
    data = parent.model_dump(mode="json")
    if edit.kind == "field":
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


def _edit_lessons(lessons: list[dict], edit: Edit) -> list[dict]:
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


def parse_edit(raw: Any) -> Edit:
    """An optimizer's JSON proposal as an Edit, or RejectedEdit naming what is malformed."""
    if not isinstance(raw, dict):
        raise RejectedEdit("a proposal is a JSON object")
    try:
        edit = Edit.model_validate(raw)
    except Exception as err:  # pydantic's message names the bad key
        raise RejectedEdit(f"malformed proposal: {err}") from None
    if edit.kind == "field" and not edit.field:
        raise RejectedEdit("a field edit names its field")
    if edit.kind == "lesson" and edit.op is None:
        raise RejectedEdit("a lesson edit names its op (add, replace, remove)")
    return edit
