"""Task folders (tasks/README.md): metadata, the public part, and the hidden panel, digest-checked.

`load_task` refuses, with a UserError naming the artifact, any task whose files disagree with its
manifest: a program tree whose tree digest differs from the recorded one is not the program the
panel was validated with, and scoring against it would be silently wrong.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from testhelix.core.digest import tree_sha256
from testhelix.core.errors import UserError
from testhelix.tasks.model import (
    ID_PATTERN,
    ROLE_LABEL,
    Artifact,
    TaskToml,
    read_manifest,
    read_task_toml,
)

ID_RE = re.compile(ID_PATTERN)
__all__ = ["ID_RE", "Candidate", "Task", "load_pack", "load_task", "panel_programs"]


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
    meta: TaskToml | None = field(default=None, compare=False)  # the whole task.toml (requirements, upstream metadata, limits)

    @property
    def reference(self) -> Candidate:
        return next(c for c in self.candidates if c.role == "reference")

    @property
    def requirements(self) -> tuple[str, ...]:
        """Pinned third-party requirements; empty: the harness's own interpreter runs the task."""
        return tuple(self.meta.environment.requirements or ()) if self.meta else ()


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
    doc = read_task_toml(root / "task.toml")
    task_id = doc.metadata.id
    instruction_path = root / "instruction.md"
    if not instruction_path.is_file():
        raise UserError(f"{instruction_path}: missing instruction.md")
    manifest_path = root / "panel" / "manifest.json"
    manifest = read_manifest(manifest_path)
    mwhere = str(manifest_path)
    if manifest.task != task_id:
        raise UserError(f"{mwhere}: 'task' is {manifest.task!r}, but task.toml says {task_id!r}")
    initial: Artifact = manifest.initial
    initial_dir = _artifact(root, initial.artifact, f"{mwhere}: initial")
    if verify:
        _verify(initial_dir, initial.sha256, initial.artifact, task_id)
    candidates = []
    for i, entry in enumerate(manifest.candidates):
        cwhere = f"{mwhere}: candidates[{i}]"
        if not ID_RE.match(entry.id) or entry.id == "initial":
            raise UserError(f"{cwhere}: id {entry.id!r} must match [A-Za-z0-9_.-]+ and not be 'initial'")
        if entry.label != ROLE_LABEL[entry.role]:
            raise UserError(f"{cwhere}: label {entry.label!r} does not fit role {entry.role!r}")
        artifact = _artifact(root, entry.artifact, cwhere)
        if verify:
            _verify(artifact, entry.sha256, entry.artifact, task_id)
        candidates.append(Candidate(entry.id, entry.label, entry.role, entry.provenance, artifact, entry.sha256))
    ids = [c.id for c in candidates]
    if len(set(ids)) != len(ids):
        raise UserError(f"{mwhere}: candidate ids are not unique")
    refs = [c for c in candidates if c.role == "reference"]
    if len(refs) != 1:
        raise UserError(f"{mwhere}: exactly one candidate must have role 'reference' (found {len(refs)})")
    tests_dir = root / "tests"
    bank = root / "bank"
    meta = doc.metadata
    return Task(id=task_id, root=root, source=meta.source, context=meta.context, difficulty=meta.difficulty,
                agent_timeout_s=float(doc.agent.timeout_sec), verifier_timeout_s=float(doc.verifier.timeout_sec),
                packages=tuple(doc.environment.packages), instruction=instruction_path.read_text(),
                initial_dir=initial_dir, reference_dir=refs[0].artifact, trusted_tests_dir=tests_dir,
                candidates=tuple(candidates), bank_dir=bank if bank.is_dir() else None, meta=doc)


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
