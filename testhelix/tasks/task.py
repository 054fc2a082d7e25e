"""Task folders (tasks/README.md): metadata, the public part, and the hidden panel, digest-checked.

`load_task` refuses, with a UserError naming the artifact, any task whose files disagree with its
manifest: a program tree whose tree digest differs from the recorded one is not the program the
panel was validated with, and scoring against it would be silently wrong.
"""

from __future__ import annotations

import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from testhelix.digest import tree_sha256
from testhelix.errors import UserError

ID_RE = re.compile(r"^[A-Za-z0-9_.-]+$")
CONTEXTS = ("general", "algorithm", "framework", "stateful", "performance", "cli", "visual")
DIFFICULTIES = ("easy", "medium", "hard")
ROLE_LABEL = {"reference": "valid", "alternative": "valid", "invalid": "invalid"}


@dataclass(frozen=True)
class Candidate:
    id: str
    label: Literal["valid", "invalid"]
    role: Literal["reference", "alternative", "invalid"]
    provenance: str
    artifact: Path  # absolute path of the program tree
    sha256: str


@dataclass(frozen=True)
class Task:
    id: str
    root: Path
    source: str
    context: str
    difficulty: str
    agent_timeout_s: float
    verifier_timeout_s: float
    packages: tuple[str, ...]
    instruction: str  # public
    initial_dir: Path  # environment/ (public)
    reference_dir: Path  # solution/program (HIDDEN)
    trusted_tests_dir: Path  # tests/ (HIDDEN)
    candidates: tuple[Candidate, ...]  # panel incl. the reference (HIDDEN)
    bank_dir: Path | None  # bank/ (HIDDEN; simulated models only)

    @property
    def reference(self) -> Candidate:
        return next(c for c in self.candidates if c.role == "reference")


def _read_toml(path: Path) -> dict:
    if not path.is_file():
        raise UserError(f"{path}: missing task.toml")
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as err:
        raise UserError(f"{path}: TOML does not parse: {err}") from None


def _read_manifest(path: Path) -> dict:
    if not path.is_file():
        raise UserError(f"{path}: missing panel manifest")
    try:
        data = json.loads(path.read_text())
    except json.JSONDecodeError as err:
        raise UserError(f"{path}: JSON does not parse: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("candidates"), list):
        raise UserError(f"{path}: expected an object with a 'candidates' list")
    return data


def _field(table: dict, key: str, kind: type, where: str, default=None):
    value = table.get(key, default)
    if value is None or not isinstance(value, kind) or isinstance(value, bool) and kind is not bool:
        name = kind.__name__ if isinstance(kind, type) else "a number"
        raise UserError(f"{where}: field '{key}' missing or not {name} (got {value!r})")
    return value


def _artifact(root: Path, rel: object, where: str) -> Path:
    if not isinstance(rel, str) or not rel or Path(rel).is_absolute():
        raise UserError(f"{where}: 'artifact' must be a relative path inside the task (got {rel!r})")
    path = (root / rel).resolve()
    if root.resolve() not in path.parents:
        raise UserError(f"{where}: artifact {rel!r} points outside the task folder")
    if not path.is_dir():
        raise UserError(f"{where}: artifact {rel!r} is not a folder")
    return path


def _verify(path: Path, recorded: object, rel: str, task_id: str) -> None:
    if not isinstance(recorded, str) or not re.fullmatch(r"[0-9a-f]{64}", recorded):
        raise UserError(f"task {task_id}: artifact {rel!r} has no valid sha256 in the manifest (got {recorded!r})")
    actual = tree_sha256(path)
    if actual != recorded:
        raise UserError(f"task {task_id}: artifact {rel!r} disagrees with its manifest "
                        f"(manifest {recorded[:12]}…, files {actual[:12]}…)")


def load_task(path: Path, verify: bool = True) -> Task:
    root = Path(path).resolve()
    if not root.is_dir():
        raise UserError(f"{path}: task folder does not exist")
    toml_path = root / "task.toml"
    meta_all = _read_toml(toml_path)
    where = str(toml_path)
    meta = _field(meta_all, "metadata", dict, where)
    task_id = _field(meta, "id", str, where)
    if not ID_RE.match(task_id):
        raise UserError(f"{where}: id {task_id!r} must match [A-Za-z0-9_.-]+")
    context = meta.get("context", "general")
    if context not in CONTEXTS:
        raise UserError(f"{where}: context {context!r} is not one of {', '.join(CONTEXTS)}")
    difficulty = meta.get("difficulty", "medium")
    if difficulty not in DIFFICULTIES:
        raise UserError(f"{where}: difficulty {difficulty!r} is not one of {', '.join(DIFFICULTIES)}")
    agent_t = _field(meta_all.get("agent", {}), "timeout_sec", (int, float), where, 600)
    verifier_t = _field(meta_all.get("verifier", {}), "timeout_sec", (int, float), where, 60)
    packages = meta_all.get("environment", {}).get("packages", [])
    if not isinstance(packages, list) or not all(isinstance(p, str) for p in packages):
        raise UserError(f"{where}: environment.packages must be a list of strings")
    instruction_path = root / "instruction.md"
    if not instruction_path.is_file():
        raise UserError(f"{instruction_path}: missing instruction.md")
    manifest_path = root / "panel" / "manifest.json"
    manifest = _read_manifest(manifest_path)
    mwhere = str(manifest_path)
    if manifest.get("task") != task_id:
        raise UserError(f"{mwhere}: 'task' is {manifest.get('task')!r}, but task.toml says {task_id!r}")
    initial = manifest.get("initial")
    if not isinstance(initial, dict):
        raise UserError(f"{mwhere}: missing 'initial' entry")
    initial_dir = _artifact(root, initial.get("artifact"), f"{mwhere}: initial")
    if verify:
        _verify(initial_dir, initial.get("sha256"), initial["artifact"], task_id)
    candidates = []
    for i, entry in enumerate(manifest["candidates"]):
        cwhere = f"{mwhere}: candidates[{i}]"
        if not isinstance(entry, dict):
            raise UserError(f"{cwhere}: expected an object")
        cid, role, label = entry.get("id"), entry.get("role"), entry.get("label")
        if not isinstance(cid, str) or not ID_RE.match(cid) or cid == "initial":
            raise UserError(f"{cwhere}: id {cid!r} must match [A-Za-z0-9_.-]+ and not be 'initial'")
        if role not in ROLE_LABEL:
            raise UserError(f"{cwhere}: role {role!r} is not one of {', '.join(ROLE_LABEL)}")
        if label != ROLE_LABEL[role]:
            raise UserError(f"{cwhere}: label {label!r} does not fit role {role!r}")
        artifact = _artifact(root, entry.get("artifact"), cwhere)
        if verify:
            _verify(artifact, entry.get("sha256"), entry["artifact"], task_id)
        candidates.append(Candidate(cid, label, role, str(entry.get("provenance", "")), artifact,
                                    str(entry.get("sha256", ""))))
    ids = [c.id for c in candidates]
    if len(set(ids)) != len(ids):
        raise UserError(f"{mwhere}: candidate ids are not unique")
    refs = [c for c in candidates if c.role == "reference"]
    if len(refs) != 1:
        raise UserError(f"{mwhere}: exactly one candidate must have role 'reference' (found {len(refs)})")
    tests_dir = root / "tests"
    bank = root / "bank"
    return Task(id=task_id, root=root, source=str(meta.get("source", "")), context=context,
                difficulty=difficulty, agent_timeout_s=float(agent_t), verifier_timeout_s=float(verifier_t),
                packages=tuple(packages), instruction=instruction_path.read_text(), initial_dir=initial_dir,
                reference_dir=refs[0].artifact, trusted_tests_dir=tests_dir, candidates=tuple(candidates),
                bank_dir=bank if bank.is_dir() else None)


def load_pack(path: Path, verify: bool = True) -> list[Task]:
    pack = Path(path)
    if not pack.is_dir():
        raise UserError(f"{path}: task pack folder does not exist")
    tasks = [load_task(p.parent, verify) for p in sorted(pack.glob("*/task.toml"))]
    seen: dict[str, Path] = {}
    for t in tasks:
        if t.id in seen:
            raise UserError(f"{path}: task id {t.id!r} appears twice ({seen[t.id].name}, {t.root.name})")
        seen[t.id] = t.root
    return sorted(tasks, key=lambda t: t.id)


def panel_programs(task: Task) -> list[tuple[str, str, str, Path]]:
    """(program id, role, label, tree) for the initial program and every candidate, in panel order."""
    rows = [("initial", "initial", "invalid", task.initial_dir)]
    return rows + [(c.id, c.role, c.label, c.artifact) for c in task.candidates]
