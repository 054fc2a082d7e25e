"""Rules for learned prose (guidance, lesson text, lesson triggers).

Learned prose is written by an optimizer from execution evidence, so it must stay reusable advice:
it may not carry code blocks (a copied solution or test) nor task identifiers (which would let a
strategy memorise tasks instead of learning to test).

Task-identifier shapes (documented pattern, `TASK_ID_SHAPES`):
- any id of a known task pack (exact, case-insensitive, as a whole token);
- tokens shaped like pack task ids: `<word>-<word>-<word>` with at least one digit or underscore,
  e.g. `katas-lru_cache-m03`;
- SWE-bench style instance ids: `owner__repo-1234`;
- hex digests of 12 or more characters (task and artifact digests).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

FENCE = re.compile(r"(^|\n)\s*(```|~~~)")
# An indented code block: a line indented by 4+ spaces or a tab that follows a blank line or
# another indented line, as Markdown reads it.
INDENTED = re.compile(r"(^|\n[ \t]*\n)( {4,}|\t)\S")
TASK_ID_SHAPES = (
    re.compile(r"\b[A-Za-z][A-Za-z0-9]*-[A-Za-z0-9_]*[0-9_][A-Za-z0-9_]*-[A-Za-z0-9_]+\b"),
    re.compile(r"\b[A-Za-z0-9_.-]+__[A-Za-z0-9_.-]+-\d+\b"),
    re.compile(r"\b[0-9a-f]{12,}\b"),
)


def has_code_block(text: str) -> bool:
    return bool(FENCE.search(text) or INDENTED.search(text))


def find_task_identifiers(text: str, known_ids: Iterable[str] = ()) -> list[str]:
    found: list[str] = []
    lowered = text.lower()
    for task_id in known_ids:
        if re.search(rf"(?<![\w-]){re.escape(task_id.lower())}(?![\w-])", lowered):
            found.append(task_id)
    for shape in TASK_ID_SHAPES:
        found += [m.group(0) for m in shape.finditer(text) if m.group(0) not in found]
    return found


def prose_problems(text: str, known_ids: Iterable[str] = ()) -> list[str]:
    problems = []
    if has_code_block(text):
        problems.append("contains a code block")
    ids = find_task_identifiers(text, known_ids)
    if ids:
        problems.append(f"embeds a task identifier: {ids[0]}")
    return problems
