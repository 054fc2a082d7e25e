"""The one owner of the task folder's two metadata formats: `task.toml` and `panel/manifest.json`.

Both are pydantic models that read and write their file (tasks/README.md documents the fields).
Every writer of a task folder (the kata builder, the importers) goes through `write_task_toml` /
`write_manifest`, and every reader (`load_task`, `pack verify`) through `read_task_toml` /
`read_manifest`, so a field is defined once.

The TOML writer is deliberately small: the format only holds strings, numbers, booleans, lists of
those, and nested tables. It writes keys in model order, so a kata task.toml comes out byte for byte
as it always has (the bundled pack's files must not change).
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError

from testhelix.core.errors import UserError
from testhelix.core.readers import parse_toml, read_json, read_text

ID_PATTERN = r"^[A-Za-z0-9_.-]+$"
# A task's context: the one list of them, also what a strategy's skill routes and a skill's contexts name.
Context = Literal["general", "algorithm", "framework", "stateful", "performance", "cli", "visual"]
CONTEXTS: tuple[str, ...] = get_args(Context)
DIFFICULTIES = ("easy", "medium", "hard")
ROLE_LABEL = {"reference": "valid", "alternative": "valid", "invalid": "invalid"}
Number = StrictInt | StrictFloat
Scalar = StrictStr | StrictInt | StrictFloat | StrictBool


class _Table(BaseModel):
    # Unknown keys are kept (read and written back), never silently dropped.
    model_config = ConfigDict(extra="allow", frozen=True)


class Metadata(_Table):
    id: str = Field(pattern=ID_PATTERN)
    source: str = ""
    context: Context = "general"
    difficulty: Literal[DIFFICULTIES] = "medium"  # type: ignore[valid-type]
    kata: str | None = None             # katas: the base program
    category: str | None = None         # an importer's source category, verbatim
    tags: list[StrictStr] | None = None
    upstream: dict[str, Scalar | list[Scalar]] | None = None  # identifiers of the source record


class Agent(_Table):
    timeout_sec: Number = 600


class Verifier(_Table):
    timeout_sec: Number = 60
    entry: str | None = None            # the source's verifier script, as kept under tests/


class Environment(_Table):
    python: str | None = ">=3.11"       # PEP 440 specifier the interpreter must satisfy
    packages: list[StrictStr] = []      # importable top-level modules of the program
    requirements: list[StrictStr] | None = None   # pinned third-party requirements (pip syntax)
    cpus: Number | None = None          # resource limits declared by the source
    memory_mb: StrictInt | None = None
    storage_mb: StrictInt | None = None


class TaskToml(_Table):
    metadata: Metadata
    agent: Agent = Agent()
    verifier: Verifier = Verifier()
    environment: Environment = Environment()


class Artifact(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    artifact: StrictStr
    sha256: StrictStr = ""


class CandidateEntry(Artifact):
    id: StrictStr
    label: Literal["valid", "invalid"]
    role: Literal["reference", "alternative", "invalid"]
    provenance: StrictStr = ""


class PanelManifest(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True)
    task: StrictStr
    candidates: list[CandidateEntry]
    initial: Artifact


# ----------------------------------------------------------------------------- errors
def _explain(err: ValidationError, where: str) -> UserError:
    first = err.errors()[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
    got = first.get("input")
    shown = "" if isinstance(got, dict) else f" (got {got!r})"
    return UserError(f"{where}: field '{loc}' {first['msg'].lower()}{shown}")


# ----------------------------------------------------------------------------- task.toml
def parse_task_toml(text: str, where: str) -> TaskToml:
    data = parse_toml(text, where)
    try:
        return TaskToml.model_validate(data)
    except ValidationError as err:
        raise _explain(err, where) from None


def read_task_toml(path: Path) -> TaskToml:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: missing task.toml")

    return parse_task_toml(read_text(path), str(path))


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"TOML value {value!r} is not finite")
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {type(value).__name__} to task.toml")


def _table(name: str, data: dict) -> list[str]:
    lines, subtables = [f"[{name}]"], []
    for key, value in data.items():
        if value is None:
            continue
        bare = key if all(c.isalnum() or c in "_-" for c in key) and key else json.dumps(key)
        if isinstance(value, dict):
            subtables.append((f"{name}.{bare}", value))
        else:
            lines.append(f"{bare} = {_toml_value(value)}")
    out = lines
    for sub, values in subtables:
        out += [""] + _table(sub, values)
    return out


def dump_task_toml(doc: TaskToml) -> str:
    data = doc.model_dump(exclude_none=True)
    blocks = [_table(name, values) for name, values in data.items() if isinstance(values, dict)]
    return "\n\n".join("\n".join(b) for b in blocks) + "\n"


def write_task_toml(path: Path, doc: TaskToml) -> None:
    text = dump_task_toml(doc)
    if parse_task_toml(text, str(path)) != doc:  # the writer must round-trip
        raise AssertionError(f"task.toml writer does not round-trip for {doc.metadata.id}")
    Path(path).write_text(text)


# ----------------------------------------------------------------------------- manifest
def read_manifest(path: Path) -> PanelManifest:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: missing panel manifest")

    data = read_json(path)
    if not isinstance(data, dict) or not isinstance(data.get("candidates"), list):
        raise UserError(f"{path}: expected an object with a 'candidates' list")
    try:
        return PanelManifest.model_validate(data)
    except ValidationError as err:
        raise _explain(err, str(path)) from None


def dump_manifest(manifest: PanelManifest) -> str:
    """Deterministic JSON: sorted keys, two-space indent, one trailing newline."""
    return json.dumps(manifest.model_dump(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_manifest(path: Path, manifest: PanelManifest) -> None:
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(dump_manifest(manifest), encoding="utf-8")
