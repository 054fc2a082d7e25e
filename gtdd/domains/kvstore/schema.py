"""The kvstore operation schema: which traces are valid inputs (spec.md, section 5 and the limits below).

The schema is a JSON Schema document so the same text can be shown to an LLM tester and checked by
`jsonschema` here (no hand-written structural checks). It fixes the argument domain that defines the
evaluation target: known command names, string arguments of printable ASCII, bounded sizes. Arity is
deliberately NOT part of the schema: wrong argument counts are valid inputs whose reply the spec fixes
(`{"error": "ARITY"}`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import jsonschema

from gtdd.domains.kvstore.reference import COMMANDS

MAX_OPS = 40  # the trace-length limit L
MIN_OPS = 1  # reductions may be shorter than the 10 operations of a generated trace
MAX_ARGS = 8  # keeps every hash below Redis's compact-encoding limit (40 ops x 3 new fields < 128)
MAX_ARG_CHARS = 64  # Redis keeps hash values up to 64 bytes in the compact, insertion-ordered form

FAMILIES = ("keys", "strings", "lists", "hashes", "sets", "sorted_sets", "expiry", "transactions")
COMMAND_FAMILY: dict[str, str] = {name: entry[0] for name, entry in COMMANDS.items()}


def trace_json_schema() -> dict[str, Any]:
    """JSON Schema (draft 2020-12) of one trace: a list of operations."""
    op = {
        "type": "object",
        "additionalProperties": False,
        "required": ["cmd", "args"],
        "properties": {
            "cmd": {"enum": sorted(COMMANDS)},
            "args": {
                "type": "array",
                "maxItems": MAX_ARGS,
                "items": {"type": "string", "maxLength": MAX_ARG_CHARS, "pattern": "^[ -~]*$"},
            },
        },
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "kvstore trace",
        "type": "array",
        "minItems": MIN_OPS,
        "maxItems": MAX_OPS,
        "items": op,
    }


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    schema = trace_json_schema()
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _where(path: Sequence[Any]) -> str:
    """'op 3, field args[1]' from a jsonschema error path like [3, 'args', 1]."""
    if not path:
        return "trace"
    parts = [f"op {path[0]}"]
    rest = list(path[1:])
    if rest:
        field = str(rest[0]) + "".join(f"[{p}]" for p in rest[1:])
        parts.append(f"field {field}")
    return ", ".join(parts)


def validate_ops(ops: Any) -> list[str]:
    """Problems of a proposed trace, each naming the operation index and field; [] when valid."""
    if isinstance(ops, tuple):
        ops = list(ops)
    problems = []
    for error in sorted(_validator().iter_errors(ops), key=lambda e: list(map(str, e.absolute_path))):
        problems.append(f"{_where(list(error.absolute_path))}: {_short(error)}")
    return problems


def _short(error: jsonschema.ValidationError) -> str:
    if error.validator == "enum":
        return f"unknown command {error.instance!r}"
    if error.validator == "pattern":
        return f"{error.instance!r} has characters outside printable ASCII"
    if error.validator == "maxLength":
        return f"argument longer than {MAX_ARG_CHARS} characters"
    return error.message
