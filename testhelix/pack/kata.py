"""Hand-written kata sources (tasks/katas-src/<kata>/) and the program variants they define.

A kata is a reference program, independently written alternatives, trusted tests, a list of
mutations (exact text edits of the reference: defects and wrong repairs) and a simulation test pool.
The format is documented in tasks/README.md.
"""

from __future__ import annotations

import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path

from testhelix.core.errors import UserError
from testhelix.tasks.model import CONTEXTS

DIFFICULTIES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Mutation:
    id: str
    file: str
    find: str
    replace: str
    kind: str
    description: str
    defect: bool
    report: str
    fixes: tuple[str, ...]
    wrong_fixes: tuple[str, ...]


@dataclass(frozen=True)
class Kata:
    id: str
    root: Path
    title: str
    context: str
    difficulty: str
    package: str
    spec: str
    reference_dir: Path
    alternative_dirs: tuple[Path, ...]
    trusted_tests_dir: Path
    bank_tests: Path
    mutations: tuple[Mutation, ...]

    @property
    def defects(self) -> tuple[Mutation, ...]:
        return tuple(m for m in self.mutations if m.defect)

    def mutation(self, mutation_id: str) -> Mutation:
        for m in self.mutations:
            if m.id == mutation_id:
                return m
        raise KeyError(mutation_id)


def _read_toml(path: Path) -> dict:
    try:
        return tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise UserError(f"{path}: file is missing") from None
    except tomllib.TOMLDecodeError as err:
        raise UserError(f"{path}: TOML does not parse: {err}") from None


def _mutation(raw: dict, where: str) -> Mutation:
    missing = [k for k in ("id", "file", "find", "replace", "kind", "description") if k not in raw]
    if missing:
        raise UserError(f"{where}: missing field(s) {', '.join(missing)}")
    defect = bool(raw.get("defect", False))
    if defect and not raw.get("report"):
        raise UserError(f"{where}.report: a defect needs a bug report")
    return Mutation(
        id=str(raw["id"]), file=str(raw["file"]), find=str(raw["find"]), replace=str(raw["replace"]),
        kind=str(raw["kind"]), description=str(raw["description"]), defect=defect,
        report=str(raw.get("report", "")).strip(),
        fixes=tuple(str(x) for x in raw.get("fixes", ())),
        wrong_fixes=tuple(str(x) for x in raw.get("wrong_fixes", ())),
    )


def load_kata(root: Path) -> Kata:
    root = Path(root).resolve()  # absolute: checkers run pytest from other working folders
    if not root.is_dir():
        raise UserError(f"{root}: not a kata folder")
    meta = _read_toml(root / "kata.toml").get("kata", {})
    for key in ("id", "title", "context", "difficulty", "package"):
        if key not in meta:
            raise UserError(f"{root / 'kata.toml'}: kata.{key} is missing")
    if meta["id"] != root.name:
        raise UserError(f"{root / 'kata.toml'}: kata.id {meta['id']!r} differs from the folder name")
    if meta["context"] not in CONTEXTS:
        raise UserError(f"{root / 'kata.toml'}: kata.context {meta['context']!r} is not one of {CONTEXTS}")
    if meta["difficulty"] not in DIFFICULTIES:
        raise UserError(f"{root / 'kata.toml'}: kata.difficulty {meta['difficulty']!r} is not one of {DIFFICULTIES}")
    raw_mutations = _read_toml(root / "mutations.toml").get("mutation", [])
    mutations = tuple(_mutation(m, f"{root / 'mutations.toml'}: mutation[{i}]") for i, m in enumerate(raw_mutations))
    ids = [m.id for m in mutations]
    if len(set(ids)) != len(ids):
        raise UserError(f"{root / 'mutations.toml'}: mutation ids are not unique")
    alternatives = tuple(sorted(p for p in (root / "alternatives").glob("alt*") if p.is_dir()))
    spec_path = root / "spec.md"
    if not spec_path.is_file():
        raise UserError(f"{spec_path}: file is missing")
    return Kata(
        id=meta["id"], root=root, title=meta["title"], context=meta["context"],
        difficulty=meta["difficulty"], package=meta["package"], spec=spec_path.read_text(),
        reference_dir=root / "reference", alternative_dirs=alternatives,
        trusted_tests_dir=root / "tests", bank_tests=root / "bank" / "tests.py", mutations=mutations,
    )


def _edit(text: str, find: str, replace: str, where: str) -> str:
    count = text.count(find)
    if count != 1:
        raise UserError(f"{where}: the text to replace occurs {count} times (needs exactly 1)")
    return text.replace(find, replace, 1)


def write_variant(kata: Kata, dest: Path, mutation: Mutation | None = None, repair: str | None = None) -> Path:
    """Write the reference (optionally with `mutation` applied, and then `repair` replacing the
    mutated text) to `dest`, which must not exist yet."""
    shutil.copytree(kata.reference_dir, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    if mutation is None:
        return dest
    target = dest / mutation.file
    if not target.is_file():
        raise UserError(f"{kata.root / 'mutations.toml'}: mutation {mutation.id}: file {mutation.file} not in the reference")
    where = f"{kata.id}: mutation {mutation.id} in {mutation.file}"
    text = _edit(target.read_text(), mutation.find, mutation.replace, where)
    if repair is not None:
        text = _edit(text, mutation.replace, repair, f"{where} (repair)")
    target.write_text(text)
    return dest
