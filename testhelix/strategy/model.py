"""The TestHelix strategy (docs/design.md §2): 11 fields, their bounds, mutability, schema version and
content hash.

The model is the single source of truth: strategies/schema.json is generated from it, the
validator (`validate_strategy_data`) reports every problem with its JSON path, and the optimizer
reads `MUTABLE_FIELDS` to know what a search may edit.

Identity (`content_hash`) is versioned so that a schema change does not orphan what was recorded
(frozen files, stored DAG nodes, release-ledger entries all quote a strategy by its hash). The hash
is the SHA-256 of `canonical_json()`, the canonical JSON of `identity()`: every field of schema
version 1 (`IDENTITY_V1_FIELDS`, always, as hashes were computed before the version existed), plus
any field added later only where it differs from its default, plus `schemaVersion` once it is past
1. So a field added at its default changes no hash, while a strategy that uses the new field (or a
later schema version, whose fields may mean something else) never shares a hash with one that
cannot. Data written under an older version is upgraded by `migrate_strategy_data` (a chain of
`MIGRATIONS`, empty at version 1) before it is validated; data from a newer version is refused.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.fields import FieldInfo
from pydantic.json_schema import JsonDict

from testhelix.core.agent_roles import COMPONENTS, LessonPhase
from testhelix.core.bundled_data import bundled_packs
from testhelix.core.digest import canonical_json
from testhelix.core.errors import UserError
from testhelix.core.paths import strategies_dir, tasks_dir
from testhelix.core.readers import read_json as bounded_read_json
from testhelix.strategy.prose import prose_problems
from testhelix.strategy.skills import load_library
from testhelix.tasks.model import Context

MAX_LESSONS, MAX_ROUTE_SKILLS = 16, 4
SCHEMA_VERSION = 1
# The fields of schema version 1: every identity commits to them, defaults included.
IDENTITY_V1_FIELDS = ("initialCandidates", "maxCandidates", "rounds", "agentSteps", "repairSteps", "contextTokens",
                      "toolOutputChars", "reviewOutputTokens", "guidance", "lessons", "skillRoutes")
# version v -> the function that turns data of version v into data of version v + 1 (and sets it)
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {}

def _known_phase(value: object) -> object:
    if isinstance(value, str) and value not in COMPONENTS:
        raise ValueError(f"component {value!r} is not a pipeline phase (phases: {', '.join(COMPONENTS)}); a "
                         "lesson tagged with it would never be retrieved")
    return value


Component = Annotated[LessonPhase, BeforeValidator(_known_phase)]


def _mutable(flag: bool) -> dict:
    return {"x-mutable": flag}


def _known_ids(info: ValidationInfo) -> Iterable[str]:
    """The task ids prose may not name, from the validation context (`validate_strategy_data` puts
    them there); without one, prose is still checked for task-id shapes (prose.py)."""
    return (info.context or {}).get("known_task_ids", ())


def _check_prose(value: str, info: ValidationInfo) -> str:
    problems = prose_problems(value, _known_ids(info))
    if problems:
        raise ValueError("; ".join(problems))
    return value


class Lesson(BaseModel):
    """A reusable lesson: literal triggers select it, its text says when, what, and how to check."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(pattern=r"^[A-Za-z][A-Za-z0-9_.-]{0,63}$")
    triggers: tuple[str, ...] = Field(min_length=1, max_length=8)
    text: str = Field(min_length=1, max_length=1000)
    components: tuple[Component, ...] = ()
    capabilities: tuple[str, ...] = ()

    @field_validator("triggers")
    @classmethod
    def _literal_triggers(cls, triggers: tuple[str, ...], info: ValidationInfo) -> tuple[str, ...]:
        for t in triggers:
            if not t.strip() or len(t) > 80:
                raise ValueError("a trigger is a non-empty literal of at most 80 characters")
            _check_prose(t, info)
        if len(set(triggers)) != len(triggers):
            raise ValueError("triggers repeat")
        return triggers

    @field_validator("text")
    @classmethod
    def _text_rules(cls, text: str, info: ValidationInfo) -> str:
        return _check_prose(text, info)


class Strategy(BaseModel):
    """The 11 strategy fields and the schema version. Candidate counts are fixed at K during search
    (not mutable)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    initialCandidates: int = Field(3, strict=True, ge=1, le=5, json_schema_extra=_mutable(False))
    maxCandidates: int = Field(3, strict=True, ge=1, le=5, json_schema_extra=_mutable(False))
    rounds: int = Field(2, strict=True, ge=1, le=4, json_schema_extra={**_mutable(True), "x-search-minimum": 2})
    agentSteps: int = Field(12, strict=True, ge=4, le=30, json_schema_extra=_mutable(True))
    repairSteps: int = Field(5, strict=True, ge=1, le=12, json_schema_extra=_mutable(True))
    contextTokens: int = Field(18000, strict=True, ge=8000, le=64000, json_schema_extra=_mutable(True))
    toolOutputChars: int = Field(10000, strict=True, ge=2000, le=30000, json_schema_extra=_mutable(True))
    reviewOutputTokens: int = Field(2048, strict=True, ge=512, le=8192, json_schema_extra=_mutable(True))
    guidance: str = Field("", max_length=2000, json_schema_extra=_mutable(True))
    lessons: tuple[Lesson, ...] = Field((), max_length=MAX_LESSONS, json_schema_extra=_mutable(True))
    skillRoutes: dict[Context, tuple[str, ...]] = Field(default_factory=dict, json_schema_extra=_mutable(True))
    # the version of this schema the data was written for (older data is migrated on validation)
    schemaVersion: int = Field(SCHEMA_VERSION, strict=True, ge=SCHEMA_VERSION, le=SCHEMA_VERSION,
                               json_schema_extra=_mutable(False))

    @field_validator("guidance")
    @classmethod
    def _guidance_rules(cls, guidance: str, info: ValidationInfo) -> str:
        return _check_prose(guidance, info) if guidance else guidance

    @field_validator("lessons")
    @classmethod
    def _unique_lessons(cls, lessons: tuple[Lesson, ...]) -> tuple[Lesson, ...]:
        ids = [lesson.id for lesson in lessons]
        if len(set(ids)) != len(ids):
            raise ValueError("lesson ids must be unique")
        return lessons

    @field_validator("skillRoutes")
    @classmethod
    def _routes(cls, routes: dict[str, tuple[str, ...]], info: ValidationInfo) -> dict[str, tuple[str, ...]]:
        if not routes:
            return routes
        library = (info.context or {}).get("skills")  # None: names are checked where the data came in
        for context, names in routes.items():
            if len(names) > MAX_ROUTE_SKILLS:
                raise ValueError(f"{context}: at most {MAX_ROUTE_SKILLS} skills per context")
            if len(set(names)) != len(names):
                raise ValueError(f"{context}: a skill is listed twice")
            if library is None:
                continue
            for name in names:
                if name not in library:
                    raise ValueError(f"{context}: unknown skill {name!r}")
                if library[name].reviewer_only:
                    raise ValueError(f"{context}: {name!r} is reviewer-only and cannot be routed to candidate generation")
        return routes

    @model_validator(mode="after")
    def _candidate_counts(self) -> Strategy:
        if self.maxCandidates < self.initialCandidates:
            raise ValueError("must be >= initialCandidates")
        return self

    def identity(self) -> dict[str, Any]:
        """What the content hash commits to (see the module docstring): the version-1 fields, later
        fields that differ from their defaults, and the schema version once it is past 1."""
        dump = self.model_dump(mode="json")
        out = {}
        for name, info in type(self).model_fields.items():
            if name == "schemaVersion":
                keep = dump[name] != 1
            else:
                keep = name in IDENTITY_V1_FIELDS or dump[name] != _dumped_default(info)
            if keep:
                out[name] = dump[name]
        return out

    def canonical_json(self) -> str:
        return canonical_json(self.identity())

    def content_hash(self) -> str:
        return hashlib.sha256(self.canonical_json().encode()).hexdigest()


def _dumped_default(info: FieldInfo) -> Any:
    """A field's default as JSON values (what `model_dump(mode="json")` writes for it)."""
    return TypeAdapter(info.annotation or Any).dump_python(info.get_default(call_default_factory=True), mode="json")


def migrate_strategy_data(data: dict[str, Any]) -> dict[str, Any]:
    """Strategy data of any known schema version upgraded to SCHEMA_VERSION (a copy; data without a
    `schemaVersion` is version 1). A version newer than this program knows is a UserError."""
    version = data.get("schemaVersion", 1)
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise UserError(f"schemaVersion: must be an integer >= 1, got {version!r}")
    if version > SCHEMA_VERSION:
        raise UserError(f"schemaVersion: {version} is newer than this program's strategy schema "
                        f"(version {SCHEMA_VERSION}); upgrade TestHelix to read it")
    data = dict(data)
    for v in range(version, SCHEMA_VERSION):
        data = MIGRATIONS[v](data)
    return data


def upper_bound(name: str) -> int:
    """The largest value the model allows for integer field `name` (its `le` bound)."""
    return int(Strategy.model_json_schema()["properties"][name]["maximum"])


def default_value(name: str) -> Any:
    return Strategy.model_fields[name].get_default(call_default_factory=True)


def _schema_extra(name: str) -> JsonDict:
    """A field's json_schema_extra; the fields here give a dict or nothing (never a function)."""
    extra = Strategy.model_fields[name].json_schema_extra
    return extra if isinstance(extra, dict) else {}


MUTABLE_FIELDS: tuple[str, ...] = tuple(name for name in Strategy.model_fields if _schema_extra(name).get("x-mutable"))
FIXED_FIELDS: tuple[str, ...] = tuple(name for name in Strategy.model_fields if name not in MUTABLE_FIELDS)


# The search space is narrower than the schema where a run configuration needs it: a search never
# proposes fewer than two rounds, so the differential challenge of configurations C/D/E survives.
SEARCH_MINIMUM: dict[str, int] = {
    name: minimum for name in Strategy.model_fields
    if isinstance(minimum := _schema_extra(name).get("x-search-minimum"), int)
}
ROUNDS_RULE = ("differential challenges need at least two rounds: the challenge is issued after round 1 and "
               "the suites it revises are executed and reviewed again in round 2; with one round a run "
               "silently loses corrective feedback and the challenge")


def run_compatibility_problems(strategy: Strategy, challenge_steps: int) -> list[tuple[str, str]]:
    """What stops `strategy` from running with a configuration that has `challenge_steps`."""
    if challenge_steps > 0 and strategy.rounds < 2:
        return [("rounds", f"is {strategy.rounds}, must be >= 2 when differential challenges are on "
                           f"(configurations C, D, E): {ROUNDS_RULE}")]
    return []


def check_run_compatibility(strategy: Strategy, challenge_steps: int) -> None:
    """Refuse a strategy that the run configuration would silently weaken (see ROUNDS_RULE)."""
    problems = run_compatibility_problems(strategy, challenge_steps)
    if problems:
        raise UserError("the strategy does not fit this run configuration", problems)


def bundled_task_ids() -> frozenset[str]:
    """Ids of every task in the bundled packs (listed in their manifest, so no pack is unpacked for
    this) and in any pack folder built beside them (folder names holding a task.toml)."""
    root = tasks_dir()
    built = frozenset(p.parent.name for p in root.glob("*/*/task.toml")) if root.is_dir() else frozenset()
    return built | {task for pack in bundled_packs().values() for task in pack.task_ids}


def _json_path(loc: tuple) -> str:
    out = ""
    for part in loc:
        if part == "[key]":
            out += " (key)"
            continue
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "$"


def validate_strategy_data(data: Any, known_task_ids: Iterable[str] | None = None,
                           skills: dict | None = None) -> tuple[Strategy | None, list[tuple[str, str]]]:
    """Validate raw data; returns the strategy or every problem as (JSON path, message).

    The one place outside data becomes a Strategy: the skill library and the task ids prose may not
    name reach the validators through the validation context, read from disk here when the caller
    has none. (`Strategy.model_validate` without a context, used to rebuild a strategy this process
    or a worker already validated, checks structure and prose shapes without reading any file.)"""
    context: dict[str, Any] = {
        "known_task_ids": tuple(bundled_task_ids() if known_task_ids is None else known_task_ids),
        "skills": load_library() if skills is None else skills,
    }
    if not isinstance(data, dict):
        return None, [("$", "a strategy is a JSON object")]
    try:
        data = migrate_strategy_data(data)
    except UserError as err:
        return None, [("schemaVersion", str(err).removeprefix("schemaVersion: "))]
    try:
        return Strategy.model_validate(data, context=context), []
    except ValidationError as err:
        problems = []
        for e in err.errors():
            msg = e["msg"].removeprefix("Value error, ")
            path = _json_path(e["loc"]) if e["loc"] else "maxCandidates"  # the one model-level rule
            if path == "skillRoutes" and ": " in msg:  # route rules name their context first
                route_context, msg = msg.split(": ", 1)
                path = f"skillRoutes.{route_context}"
            problems.append((path, msg))
        # The cross-field rule only runs after every field is valid; report it anyway.
        ini, mx = data.get("initialCandidates", 3), data.get("maxCandidates", 3)
        order_problem = ("maxCandidates", "must be >= initialCandidates")
        if isinstance(ini, int) and isinstance(mx, int) and mx < ini and order_problem not in problems:
            problems.append(order_problem)
        return None, problems


def read_json(path: Path) -> Any:
    """A strategy file's JSON, through the bounded reader (size, depth, integer digits, UTF-8)."""
    return bounded_read_json(path)


def is_frozen_strategy_file(path: Path) -> bool:
    """Whether `path` holds a frozen strategy (strategy, provenance and hash; `load_strategy`
    checks that the hash matches)."""
    data = read_json(path)
    return isinstance(data, dict) and {"strategy", "provenance", "hash"} <= set(data)


def load_strategy(path: Path) -> Strategy:
    """Load a strategy file (plain or frozen: a frozen file keeps the strategy under "strategy")."""
    data = read_json(path)
    frozen = isinstance(data, dict) and "strategy" in data and "provenance" in data
    strategy, problems = validate_strategy_data(data["strategy"] if frozen else data)
    if frozen:
        problems = [*problems, *frozen_envelope_problems(data)]
    if strategy is None or problems:
        raise UserError(f"{path}: not a valid strategy", problems)
    if frozen and data.get("hash") != strategy.content_hash():
        raise UserError(f"{path}: content hash mismatch: the file says {data.get('hash')!r} but the strategy "
                        f"hashes to {strategy.content_hash()!r} (edited after freezing?)")
    return strategy


def frozen_envelope_problems(doc: dict) -> list[tuple[str, str]]:
    """What is wrong with a frozen file's envelope around its strategy: provenance is an object
    (which search froze it, from which node), hash a string."""
    problems = []
    if not isinstance(doc.get("provenance"), dict):
        problems.append(("provenance", f"is {type(doc.get('provenance')).__name__}; a frozen strategy's provenance "
                                       "is an object (what froze it: run, node, ...)"))
    if "hash" in doc and not isinstance(doc["hash"], str):
        problems.append(("hash", f"is {type(doc['hash']).__name__}; the content hash is a string"))
    return problems


def initial_strategy() -> Strategy:
    return load_strategy(strategies_dir() / "initial.json")


def schema_json() -> str:
    schema = Strategy.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "TestHelix strategy"
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"
